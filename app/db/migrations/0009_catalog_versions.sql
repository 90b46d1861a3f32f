-- The catalogue as each turn saw it: every distinct catalogue is kept once under the digest of
-- its machines (the fields an answer is checked against), and each turn names the one it was
-- answered with, so a check of that answer later (online evaluation, evals/api/online.py)
-- reads the catalogue of its time, not today's. A turn stored before this has none.
CREATE TABLE catalog_versions (
    digest      text PRIMARY KEY,
    machines    jsonb NOT NULL,
    first_seen  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE turns ADD COLUMN catalog_version text REFERENCES catalog_versions(digest);
