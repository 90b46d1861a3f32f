-- Cases from past conversations: a person's consent, recorded against their pseudonymous
-- reference (never a name), and the page and audience of each turn, so a case made from it
-- has the same context.
CREATE TABLE research_consent (
    user_ref     text PRIMARY KEY,
    consent      boolean NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE turns ADD COLUMN page_path text;
ALTER TABLE turns ADD COLUMN audience text;
