-- Reassessments of a stored run, beside its own results and never over them: a rescore (today's
-- checks on the recorded answers) or a re-judging (another judge on the recorded replies). One
-- row per assessment (what assessed, when, with which judge: the Assessment without its cases)
-- and one per case it assessed (the case's status under it and the checks it gave). A case row
-- names the stored case it assesses, and the run is the assessment's own. Both are final, as
-- the results they sit beside are (0005_evidence_kept.sql).
CREATE TABLE eval_assessments (
    id text PRIMARY KEY,
    run_id text NOT NULL REFERENCES eval_runs (id),
    kind text NOT NULL CHECK (kind IN ('rescore', 'rejudge')),
    created_at timestamptz NOT NULL DEFAULT now(),
    header jsonb NOT NULL,
    UNIQUE (id, run_id)
);
CREATE INDEX eval_assessments_run ON eval_assessments (run_id, created_at);

CREATE TABLE eval_assessment_cases (
    assessment_id text NOT NULL,
    run_id text NOT NULL,
    case_id text NOT NULL,
    repetition integer NOT NULL,
    status text NOT NULL,
    result jsonb NOT NULL,          -- the AssessedCase
    PRIMARY KEY (assessment_id, case_id, repetition),
    FOREIGN KEY (assessment_id, run_id) REFERENCES eval_assessments (id, run_id),
    FOREIGN KEY (run_id, case_id, repetition)
        REFERENCES eval_cases (run_id, case_id, repetition)
);

CREATE TRIGGER eval_assessments_kept BEFORE UPDATE OR DELETE ON eval_assessments
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored assessment is final');
CREATE TRIGGER eval_assessments_not_truncated BEFORE TRUNCATE ON eval_assessments
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored assessment is final');
CREATE TRIGGER eval_assessment_cases_kept BEFORE UPDATE OR DELETE ON eval_assessment_cases
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored assessment is final');
CREATE TRIGGER eval_assessment_cases_not_truncated BEFORE TRUNCATE ON eval_assessment_cases
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored assessment is final');

-- An assessment is written whole, once: its cases only in the transaction that writes it.
CREATE FUNCTION eval_assessment_case_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM eval_assessments WHERE id = NEW.assessment_id
               AND xmin <> pg_current_xact_id()::xid) THEN
        RAISE EXCEPTION 'evidence kept: INSERT on eval_assessment_cases refused: assessment %'
                        ' is stored already, and a stored assessment is final', NEW.assessment_id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER eval_assessment_cases_added BEFORE INSERT ON eval_assessment_cases
    FOR EACH ROW EXECUTE FUNCTION eval_assessment_case_added();
