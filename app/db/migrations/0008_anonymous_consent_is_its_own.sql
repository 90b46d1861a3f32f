-- An anonymous conversation is a case only on its own session's yes. Signing in links the
-- anonymous session to the person (0006), but on a shared browser that person may not be
-- the visitor who chatted: their yes must not reach the visitor's conversations, and
-- silence is never a yes. A no still reaches, from either side (never harmful).
-- A conversation is held anonymously when any of its turns was asked by nobody signed in,
-- or has no audience recorded (turns kept before 0005): a reference changes at sign-in, so
-- a conversation never spans one.
CREATE OR REPLACE VIEW conversation_consent AS
    SELECT c.id AS conversation_id,
           CASE WHEN r.consent IS FALSE OR pc.consent IS FALSE THEN false
                WHEN EXISTS (SELECT 1 FROM turns t WHERE t.conversation_id = c.id
                             AND (t.audience IS NULL OR t.audience = 'anonymous'))
                    THEN coalesce(r.consent, false)
                ELSE coalesce(pc.consent, r.consent, false) END AS consent
    FROM conversations c
    LEFT JOIN person_refs pr ON pr.user_ref = c.user_ref
    LEFT JOIN person_consent pc ON pc.person_id = pr.person_id
    LEFT JOIN research_consent r ON r.user_ref = c.user_ref;
