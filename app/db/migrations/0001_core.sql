-- Core schema: catalogue, units, people, tickets, proposals, intake, conversations.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE machines (
    id          serial PRIMARY KEY,
    slug        text NOT NULL UNIQUE,
    name        text NOT NULL,
    brand       text NOT NULL,
    category    text NOT NULL,
    summary     text NOT NULL DEFAULT '',
    aliases     text[] NOT NULL DEFAULT '{}',
    -- Spec fields by name; a field present with a JSON null is known to be unknown.
    specs       jsonb NOT NULL DEFAULT '{}'::jsonb,
    location    text NOT NULL DEFAULT '',
    induction_required boolean NOT NULL DEFAULT true
);

CREATE TABLE units (
    id          serial PRIMARY KEY,
    machine_id  integer NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
    label       text NOT NULL UNIQUE,
    status      text NOT NULL CHECK (status IN ('available', 'in_use', 'out_of_service')),
    note        text NOT NULL DEFAULT ''
);

CREATE TABLE people (
    id          serial PRIMARY KEY,
    handle      text NOT NULL UNIQUE,
    name        text NOT NULL,
    role        text NOT NULL CHECK (role IN ('student', 'staff', 'super_admin')),
    title       text NOT NULL DEFAULT ''
);

CREATE TABLE tickets (
    id              serial PRIMARY KEY,
    machine_id      integer NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
    title           text NOT NULL,
    body            text NOT NULL DEFAULT '',
    status          text NOT NULL DEFAULT 'open'
                    CHECK (status IN ('open', 'in_progress', 'resolved')),
    reporter_id     integer REFERENCES people(id),
    reporter_name   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ticket_notes (
    id          serial PRIMARY KEY,
    ticket_id   integer NOT NULL REFERENCES tickets(id) ON DELETE CASCADE,
    author_id   integer REFERENCES people(id),
    note        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- What an action tool proposed; a person's Confirm applies it.
CREATE TABLE proposals (
    id           uuid PRIMARY KEY,
    tool         text NOT NULL,
    arguments    jsonb NOT NULL,
    summary      text NOT NULL,
    proposed_for integer REFERENCES people(id),
    status       text NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'applied', 'rejected')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz
);

CREATE TABLE attachments (
    id           uuid PRIMARY KEY,
    name         text NOT NULL,
    content_type text NOT NULL,
    data         bytea NOT NULL,
    uploaded_by  integer REFERENCES people(id),
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE intake_items (
    id            serial PRIMARY KEY,
    attachment_id uuid REFERENCES attachments(id),
    brand         text NOT NULL DEFAULT '',
    name          text NOT NULL,
    quantity      integer NOT NULL CHECK (quantity > 0),
    recorded_by   integer REFERENCES people(id),
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE corrections (
    id            serial PRIMARY KEY,
    machine_id    integer REFERENCES machines(id),
    field         text NOT NULL,
    claim         text NOT NULL,
    reporter_id   integer REFERENCES people(id),
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE catalog_changes (
    id            serial PRIMARY KEY,
    machine_id    integer NOT NULL REFERENCES machines(id),
    field         text NOT NULL,
    value         text NOT NULL,
    reason        text NOT NULL DEFAULT '',
    proposed_by   integer REFERENCES people(id),
    status        text NOT NULL DEFAULT 'pending',
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE conversations (
    id          uuid PRIMARY KEY,
    user_ref    text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE turns (
    id              serial PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    model           text NOT NULL,
    messages        jsonb NOT NULL,
    answer          text NOT NULL,
    tool_calls      jsonb NOT NULL,
    usage           jsonb NOT NULL,
    latency_ms      integer NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
