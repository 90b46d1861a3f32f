-- Signed-in sessions, kept on the server: signing out ends one for every copy of its cookie,
-- and demo sessions end when the demo sign-in is turned off.
CREATE TABLE sessions (
    id          text PRIMARY KEY,
    person_id   integer NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    demo        boolean NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
