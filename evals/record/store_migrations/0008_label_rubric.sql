-- Under which rubric a label was given. A verdict an evaluator pack's prompt gave was rated
-- against the pack's rubric, not the case's, and a label counts for the pack only when the
-- person had that rubric in view: rubric_pack names the pack (PACK/NAME) whose rubric and
-- must_not the Labels tab showed, rubric_hash the pack prompt's hash as shown (the verdict's
-- prompt hash: the rubric it was given under). Both NULL: the case's own rubric (or scenario
-- criterion) was shown. Labels stored before this migration have both NULL: the tab did not
-- show a pack's rubric then, so they never count for a pack.
ALTER TABLE eval_labels
    ADD COLUMN rubric_pack text CHECK (rubric_pack <> ''),
    ADD COLUMN rubric_hash text CHECK (rubric_hash <> ''),
    ADD CONSTRAINT eval_labels_rubric_whole CHECK ((rubric_pack IS NULL) = (rubric_hash IS NULL));
