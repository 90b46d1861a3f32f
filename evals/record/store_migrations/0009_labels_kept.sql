-- People's labels are evidence too (what the judge's calibration is measured against): a label
-- once stored is never changed or removed, by the harness or by hand, as 0005_evidence_kept.sql
-- keeps a stored case. A person labels a verdict once (evals/record/labels.py), and what they
-- said stays.
CREATE TRIGGER eval_labels_kept BEFORE UPDATE OR DELETE ON eval_labels
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored label is final');
CREATE TRIGGER eval_labels_not_truncated BEFORE TRUNCATE ON eval_labels
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored label is final');
