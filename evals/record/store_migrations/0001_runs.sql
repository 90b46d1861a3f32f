-- The eval run store: runs, their cases (one row per case and repetition, written as soon as
-- it finishes), attempts and checks; comparison points and comparisons.
CREATE TABLE eval_runs (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz,
    status text NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
    model text NOT NULL,
    plan_fingerprint text NOT NULL,
    agent_fingerprint text NOT NULL,
    point text,
    header jsonb NOT NULL,          -- the RunRecord without its cases
    totals jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX eval_runs_started ON eval_runs (started_at DESC);

CREATE TABLE eval_cases (
    run_id text NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    case_id text NOT NULL,
    repetition integer NOT NULL,
    file text NOT NULL,
    status text NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    result jsonb NOT NULL,          -- the CaseResult
    PRIMARY KEY (run_id, case_id, repetition)
);

CREATE TABLE eval_attempts (
    run_id text NOT NULL,
    case_id text NOT NULL,
    repetition integer NOT NULL,
    attempt integer NOT NULL,
    answer text NOT NULL,
    error text,
    latency_ms integer NOT NULL,
    prompt_tokens integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    cost_usd double precision,
    PRIMARY KEY (run_id, case_id, repetition, attempt),
    FOREIGN KEY (run_id, case_id, repetition)
        REFERENCES eval_cases (run_id, case_id, repetition) ON DELETE CASCADE
);

CREATE TABLE eval_checks (
    run_id text NOT NULL,
    case_id text NOT NULL,
    repetition integer NOT NULL,
    attempt integer NOT NULL,
    n integer NOT NULL,
    kind text NOT NULL,
    passed boolean NOT NULL,
    decided boolean NOT NULL,
    error boolean NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (run_id, case_id, repetition, attempt, n),
    FOREIGN KEY (run_id, case_id, repetition, attempt)
        REFERENCES eval_attempts (run_id, case_id, repetition, attempt) ON DELETE CASCADE
);

CREATE TABLE eval_points (
    name text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    plan_fingerprint text NOT NULL,
    agent_fingerprint text NOT NULL,
    point jsonb NOT NULL            -- the frozen agent and the plan
);

CREATE TABLE eval_comparisons (
    id text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    point text REFERENCES eval_points (name),
    baseline_run text NOT NULL REFERENCES eval_runs (id),
    current_run text NOT NULL REFERENCES eval_runs (id),
    result jsonb NOT NULL
);
