-- Runs and comparisons launched from the workspace or the MCP tools: the exact request each was
-- started with, and the idempotency key it came with, if any. A repeated request with the same
-- key is answered with the launch already made (its runs carry its id in settings.launch, and
-- its comparison is the one of those runs); the same key with another request is refused. A
-- launch is final once stored, as the evidence it started is (0005_evidence_kept.sql).
CREATE TABLE eval_launches (
    id text PRIMARY KEY,
    key text UNIQUE CHECK (key <> ''),
    request jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER eval_launches_kept BEFORE UPDATE OR DELETE ON eval_launches
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a launch and its request are final');
CREATE TRIGGER eval_launches_not_truncated BEFORE TRUNCATE ON eval_launches
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a launch and its request are final');
