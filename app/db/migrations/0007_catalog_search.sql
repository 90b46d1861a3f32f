-- Catalogue search (app/catalog/find.py): each machine's words (stemmed, those of its names,
-- brand and category marked), its names for exact mentions, and an embedding of its record. A
-- trigger keeps them current on every insert or update of a machine and clears the embedding
-- when the text it was made from changed; the app embeds what is missing before it ranks.

-- ' form 4 ': lower case, every run of other characters one space, a space at each end, so a
-- name is found in a request only as whole words.
CREATE FUNCTION catalog_norm(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT ' ' || btrim(regexp_replace(lower(t), '[^a-z0-9+]+', ' ', 'g')) || ' ' $$;

CREATE TABLE machine_search (
    machine_id  integer PRIMARY KEY REFERENCES machines(id) ON DELETE CASCADE,
    kinds       text[] NOT NULL,   -- brand and category, normalised
    doc         text NOT NULL,     -- what the embedding is made from
    embedding   vector(384)        -- NULL until the app embeds doc
);
CREATE INDEX machine_search_unembedded ON machine_search (machine_id) WHERE embedding IS NULL;

-- Every word of each record, stemmed as full-text search stems it, and whether the machine's
-- names, brand or category have it (a key word): the catalogue's inverted index.
CREATE TABLE machine_lexemes (
    lexeme      text NOT NULL,
    machine_id  integer NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
    key         boolean NOT NULL,
    PRIMARY KEY (lexeme, machine_id)
);
CREATE INDEX machine_lexemes_machine ON machine_lexemes (machine_id);

-- Name, aliases, brand + name, the slug's words, and each of them with its letters and digits
-- run together (' pcnc440 '), normalised: a request that writes one out names the machine.
CREATE TABLE machine_names (
    machine_id  integer NOT NULL REFERENCES machines(id) ON DELETE CASCADE,
    name        text NOT NULL,
    PRIMARY KEY (name, machine_id)
);

-- Every word the catalogue's records use, its stem, whether a machine's name, brand or
-- category has it (a key word) and whether a brand or category does (a kind word): a request's
-- word that is neither word nor stem is matched to the nearest one (a misspelling). Words are
-- added as records are written and never removed: a word a changed or removed record no
-- longer has stays a spelling candidate (the ranking reads only machine_lexemes and
-- machine_names, which follow every change).
CREATE TABLE catalog_words (
    word        text PRIMARY KEY,
    stem        text NOT NULL,
    key         boolean NOT NULL,
    kind        boolean NOT NULL
);
CREATE INDEX catalog_words_stem ON catalog_words (stem);
CREATE INDEX catalog_words_first ON catalog_words (left(word, 1), length(word));

CREATE FUNCTION machine_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    aliases text := array_to_string(NEW.aliases, ', ');
    specs text := coalesce((SELECT string_agg(value, ', ') FROM jsonb_each_text(NEW.specs)
                            WHERE value IS NOT NULL), '');
    named text := NEW.name || ' ' || aliases || ' ' || NEW.brand || ' '
                  || replace(NEW.slug, '-', ' ');
    doc text := NEW.name || ' (' || NEW.brand || ', ' || NEW.category || '). ' || NEW.summary
                || CASE WHEN aliases <> '' THEN ' Also called ' || aliases || '.' ELSE '' END
                || CASE WHEN specs <> '' THEN ' ' || specs || '.' ELSE '' END;
    key_tsv tsvector := to_tsvector('english', named || ' ' || NEW.category);
BEGIN
    INSERT INTO machine_search AS s (machine_id, kinds, doc, embedding)
    VALUES (NEW.id, ARRAY[catalog_norm(NEW.brand), catalog_norm(NEW.category)], doc, NULL)
    ON CONFLICT (machine_id) DO UPDATE SET
        kinds = EXCLUDED.kinds, doc = EXCLUDED.doc,
        embedding = CASE WHEN s.doc = EXCLUDED.doc THEN s.embedding END;
    DELETE FROM machine_lexemes WHERE machine_id = NEW.id;
    INSERT INTO machine_lexemes (lexeme, machine_id, key)
    SELECT l, NEW.id, bool_or(key) FROM (
        SELECT unnest(tsvector_to_array(key_tsv)), true
        UNION ALL
        SELECT unnest(tsvector_to_array(to_tsvector('english', NEW.summary || ' ' || specs
                                                               || ' ' || NEW.location))), false
        ) AS lexemes(l, key)
    GROUP BY l;
    DELETE FROM machine_names WHERE machine_id = NEW.id;
    INSERT INTO machine_names (machine_id, name)
    SELECT DISTINCT NEW.id, n FROM (
        SELECT catalog_norm(x) AS n FROM unnest(
            NEW.name || NEW.aliases || (NEW.brand || ' ' || NEW.name)
            || replace(NEW.slug, '-', ' ')) AS x
        UNION
        SELECT ' ' || replace(btrim(catalog_norm(x)), ' ', '') || ' ' FROM unnest(
            NEW.name || NEW.aliases || (NEW.brand || ' ' || NEW.name)) AS x) AS names
    WHERE btrim(n) <> '';
    INSERT INTO catalog_words AS c (word, stem, key, kind)
    SELECT w, coalesce((tsvector_to_array(to_tsvector('english', w)))[1], w), bool_or(key),
           bool_or(kind)
    FROM (SELECT regexp_split_to_table(btrim(catalog_norm(named)), ' '), true, false
          UNION ALL
          SELECT regexp_split_to_table(btrim(catalog_norm(NEW.brand || ' ' || NEW.category)),
                                       ' '), true, true
          UNION ALL
          SELECT regexp_split_to_table(btrim(catalog_norm(
                     NEW.summary || ' ' || specs || ' ' || NEW.location)), ' '), false, false)
         AS words(w, key, kind)
    WHERE length(w) >= 3
    GROUP BY w
    ON CONFLICT (word) DO UPDATE SET key = c.key OR EXCLUDED.key, kind = c.kind OR EXCLUDED.kind;
    RETURN NULL;
END $$;

CREATE TRIGGER machines_search AFTER INSERT OR UPDATE ON machines
    FOR EACH ROW EXECUTE FUNCTION machine_search_refresh();

-- The machines already there.
UPDATE machines SET slug = slug;
