-- People's labels of judged verdicts: one row per person and verdict, so two people's labels
-- of one verdict are both kept. A verdict is named by its run, item, repetition, attempt and
-- check (its place among the attempt's checks, and the check as it was described: the judge,
-- or the scenario criterion's text), so a case written again with other checks is told apart.
CREATE TABLE eval_labels (
    run_id text NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    case_id text NOT NULL,
    repetition integer NOT NULL,
    attempt integer NOT NULL,
    n integer NOT NULL,
    kind text NOT NULL,
    verdict text NOT NULL CHECK (verdict IN ('pass', 'fail', 'skip')),
    note text NOT NULL DEFAULT '',
    labelled_by text NOT NULL CHECK (labelled_by <> ''),
    labelled_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, case_id, repetition, attempt, n, labelled_by)
);
CREATE INDEX eval_labels_by ON eval_labels (labelled_by);
