-- Consent that outlives a reference. A signed-in person's decision is kept against them
-- (people.id), and every reference they have had is linked to them: their own, and the
-- anonymous session they signed in from. Their decision applies to all of those; a
-- reference linked to nobody keeps its own (research_consent).
CREATE TABLE person_consent (
    person_id    integer PRIMARY KEY REFERENCES people(id) ON DELETE CASCADE,
    consent      boolean NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE person_refs (
    user_ref   text PRIMARY KEY,
    person_id  integer NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    linked_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX person_refs_person ON person_refs (person_id);
-- The one rule, for whoever reads conversations: a "no" given under the reference itself is
-- final (a person who signs in later, or whoever signs in next on a shared computer, cannot
-- turn it into a yes); otherwise the person's decision when the reference is a person's and
-- they made one, else the reference's own, else no.
CREATE VIEW conversation_consent AS
    SELECT c.id AS conversation_id,
           CASE WHEN r.consent IS FALSE THEN false
                ELSE coalesce(pc.consent, r.consent, false) END AS consent
    FROM conversations c
    LEFT JOIN person_refs pr ON pr.user_ref = c.user_ref
    LEFT JOIN person_consent pc ON pc.person_id = pr.person_id
    LEFT JOIN research_consent r ON r.user_ref = c.user_ref;
