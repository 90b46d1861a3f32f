-- Online evaluation (evals/api/online.py): the checks that need no case author, run on the
-- app's recorded, consented turns. A row per turn and check: the turn's reference (its id
-- and conversation in the app's database), when it was answered, the agent that answered it
-- (a digest of its model and system prompt), the audience and page it was asked from, and the
-- verdict, never the turn's text. A
-- verdict once stored is final, like every other evidence (0005_evidence_kept.sql); the same
-- turn is checked again only under another harness.
CREATE TABLE eval_online_verdicts (
    turn_id integer NOT NULL,
    conversation text NOT NULL,
    turn_at timestamptz NOT NULL,
    agent text NOT NULL,
    context text NOT NULL,          -- the audience and page it was asked from
    model text NOT NULL,
    kind text NOT NULL,
    verdict text NOT NULL CHECK (verdict IN ('pass', 'fail', 'undecided')),
    why text NOT NULL DEFAULT '',
    harness text NOT NULL,
    checked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation, turn_id, kind, harness)
);
CREATE INDEX eval_online_verdicts_when ON eval_online_verdicts (turn_at);

CREATE TRIGGER eval_online_verdicts_kept BEFORE UPDATE OR DELETE ON eval_online_verdicts
    FOR EACH ROW EXECUTE FUNCTION eval_evidence_kept('a stored online verdict is final');
CREATE TRIGGER eval_online_verdicts_not_truncated BEFORE TRUNCATE ON eval_online_verdicts
    FOR EACH STATEMENT EXECUTE FUNCTION eval_evidence_kept('a stored online verdict is final');
