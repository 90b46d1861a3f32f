-- Evidence kept: what a stored run found, the comparison points it was measured against and
-- what a comparison concluded are never changed or removed, by the harness or by hand. Written
-- as triggers so that a statement typed into psql is refused as surely as a bug in the harness.
--
-- * A case result once stored (eval_cases, with its attempts and checks) is final: no UPDATE,
--   DELETE or TRUNCATE. A case is written whole, once: its attempts and checks only in the
--   transaction that writes it, and no case is added to a complete run. A re-scoring or a
--   re-judging is stored beside it (eval_assessments).
-- * Comparison points and comparisons are final the same way.
-- * A run (eval_runs) is never deleted. While it is unfinished (running or interrupted) its
--   status, end, totals, header and agent fingerprint may change: it is finished, stopped, or
--   resumed. Once complete it is final. Its id, start, model, plan and point never change.
--
-- The refusal is SQLSTATE 23001 (restrict_violation), naming the table and the rule.
CREATE FUNCTION eval_evidence_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'evidence kept: % on % refused: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0]
        USING ERRCODE = 'restrict_violation';
END
$$;

CREATE FUNCTION eval_run_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'evidence kept: DELETE on eval_runs refused: run % is kept whole', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF OLD.status = 'complete' THEN
        RAISE EXCEPTION 'evidence kept: UPDATE on eval_runs refused: run % is complete, and a'
                        ' complete run is final', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW.id IS DISTINCT FROM OLD.id OR NEW.started_at IS DISTINCT FROM OLD.started_at
            OR NEW.model IS DISTINCT FROM OLD.model
            OR NEW.plan_fingerprint IS DISTINCT FROM OLD.plan_fingerprint
            OR NEW.point IS DISTINCT FROM OLD.point THEN
        RAISE EXCEPTION 'evidence kept: UPDATE on eval_runs refused: run %''s id, start, model,'
                        ' plan and point are fixed when it starts', OLD.id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END
$$;

-- A case goes into an unfinished run only.
CREATE FUNCTION eval_case_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM eval_runs WHERE id = NEW.run_id AND status = 'complete') THEN
        RAISE EXCEPTION 'evidence kept: INSERT on eval_cases refused: run % is complete, and a'
                        ' complete run is final', NEW.run_id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END
$$;

-- An attempt (a check) is written with its case (its attempt): in the transaction that wrote
-- the row it belongs to, so a stored case never gains an attempt or a check afterwards.
CREATE FUNCTION eval_part_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    written boolean;
BEGIN
    IF TG_TABLE_NAME = 'eval_attempts' THEN
        SELECT xmin = pg_current_xact_id()::xid INTO written FROM eval_cases
            WHERE (run_id, case_id, repetition) = (NEW.run_id, NEW.case_id, NEW.repetition);
    ELSE
        SELECT xmin = pg_current_xact_id()::xid INTO written FROM eval_attempts
            WHERE (run_id, case_id, repetition, attempt)
                = (NEW.run_id, NEW.case_id, NEW.repetition, NEW.attempt);
    END IF;
    IF written IS FALSE THEN  -- NULL: no such row, which the foreign key says
        RAISE EXCEPTION 'evidence kept: INSERT on % refused: case % repetition % of run % is'
                        ' stored already, and a stored case is final', TG_TABLE_NAME,
                        NEW.case_id, NEW.repetition, NEW.run_id
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER eval_cases_added BEFORE INSERT ON eval_cases
    FOR EACH ROW EXECUTE FUNCTION eval_case_added();
CREATE TRIGGER eval_attempts_added BEFORE INSERT ON eval_attempts
    FOR EACH ROW EXECUTE FUNCTION eval_part_added();
CREATE TRIGGER eval_checks_added BEFORE INSERT ON eval_checks
    FOR EACH ROW EXECUTE FUNCTION eval_part_added();

CREATE TRIGGER eval_runs_kept BEFORE UPDATE OR DELETE ON eval_runs
    FOR EACH ROW EXECUTE FUNCTION eval_run_kept();
CREATE TRIGGER eval_runs_not_truncated BEFORE TRUNCATE ON eval_runs
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('stored runs are kept');

CREATE TRIGGER eval_cases_kept BEFORE UPDATE OR DELETE ON eval_cases
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored case result is final');
CREATE TRIGGER eval_cases_not_truncated BEFORE TRUNCATE ON eval_cases
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored case result is final');

CREATE TRIGGER eval_attempts_kept BEFORE UPDATE OR DELETE ON eval_attempts
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored attempt is final');
CREATE TRIGGER eval_attempts_not_truncated BEFORE TRUNCATE ON eval_attempts
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored attempt is final');

CREATE TRIGGER eval_checks_kept BEFORE UPDATE OR DELETE ON eval_checks
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored check is final');
CREATE TRIGGER eval_checks_not_truncated BEFORE TRUNCATE ON eval_checks
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored check is final');

CREATE TRIGGER eval_points_kept BEFORE UPDATE OR DELETE ON eval_points
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a comparison point is final');
CREATE TRIGGER eval_points_not_truncated BEFORE TRUNCATE ON eval_points
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a comparison point is final');

CREATE TRIGGER eval_comparisons_kept BEFORE UPDATE OR DELETE ON eval_comparisons
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored comparison is final');
CREATE TRIGGER eval_comparisons_not_truncated BEFORE TRUNCATE ON eval_comparisons
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored comparison is final');
