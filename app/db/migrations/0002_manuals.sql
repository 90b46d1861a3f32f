-- Manuals: the PDFs in the blob store, their page texts, and embedded passages.
CREATE TABLE manuals (
    id          serial PRIMARY KEY,
    machine_id  integer NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
    title       text NOT NULL,
    blob_key    text NOT NULL UNIQUE,
    sha256      text NOT NULL,
    page_count  integer NOT NULL CHECK (page_count > 0),
    has_text    boolean NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE manual_pages (
    manual_id   integer NOT NULL REFERENCES manuals(id) ON DELETE CASCADE,
    page        integer NOT NULL CHECK (page > 0),
    text        text NOT NULL,
    PRIMARY KEY (manual_id, page)
);

CREATE TABLE passages (
    id          serial PRIMARY KEY,
    manual_id   integer NOT NULL REFERENCES manuals(id) ON DELETE CASCADE,
    page        integer NOT NULL,
    text        text NOT NULL,
    embedding   vector(384) NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);

CREATE INDEX passages_embedding_hnsw ON passages USING hnsw (embedding vector_cosine_ops);
CREATE INDEX passages_tsv ON passages USING gin (tsv);
CREATE INDEX passages_manual ON passages (manual_id);
