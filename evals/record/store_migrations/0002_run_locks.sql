-- Who is writing a stored run (a resume): one row per run, taken before the run is read and
-- removed when the writer ends. The holder's pid, host and start time tell a live holder from
-- a dead one on the same host (its pid gone, or reused by a process started later).
CREATE TABLE eval_run_locks (
    run_id text PRIMARY KEY REFERENCES eval_runs (id) ON DELETE CASCADE,
    pid integer NOT NULL,
    host text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
);
