-- The model-call cache: one reply per call key (the model as resolved, the full request and the
-- sample index, hashed). The reply is kept as the JSON text it was written as, with its sha256,
-- so an entry that is corrupt or cut short is told from a good one and read as a miss.
CREATE TABLE eval_call_cache (
    key text PRIMARY KEY,
    model text NOT NULL,
    -- A checksum-pinned local model file: its entries never expire.
    pinned boolean NOT NULL,
    run_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    used_at timestamptz NOT NULL DEFAULT now(),
    bytes integer NOT NULL,
    digest text NOT NULL,
    reply text NOT NULL
);
CREATE INDEX eval_call_cache_used ON eval_call_cache (used_at);
