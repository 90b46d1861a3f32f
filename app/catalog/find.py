"""Finding the right machine from a natural request, ranked in SQL.

Each machine's record is indexed (migration 0007, kept current by a trigger on `machines`): its
words as full-text search stems them, those of its names, brand and category marked as key
words; its names written out; and an embedding of the record by the manuals' embedder. A
request is read in three steps:

1. **Spelling.** A word of the request that no record uses (nor its stem) is replaced by the
   record word one edit away (two for words of eight letters or more; Damerau–Levenshtein,
   same first letter), when exactly one is nearest: "trotek" is "trotec", "surger" is
   "serger". Filler words ("machine", "something", "need") are never corrected, never searched.
2. **Ranking.** Every machine gets a score from three parts: the cosine similarity of its
   record to the request; the share of the request's words its record has, each word weighted
   by how rare it is in the catalogue (IDF) and counting double as a key word; and whether the
   request writes out one of its names as whole words. A name no other machine shares, with a
   word that is no brand's or category's ("Speedy 300", "Form 4L", "PE800"), puts its machine
   first, the longest such name first of all; a generic one ("laser cutter", "Trotec") counts
   a little.
3. **Deciding.** A machine matches when the request names it, when it has one of the request's
   words as a key word, when its record has one of them and is near it in meaning at all
   (≥ RELATED), or when it is close in meaning alone (≥ CLOSE). No match is an honest none, and
   so is a request that names something the lab does not list (`_lacking`: "band saw", "a kiln
   for firing ceramics"): the answer names the machines that came nearest, as not what was
   asked for, and the words no record has. A request of filler alone ("what do you have?")
   gets the catalogue's overview instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rapidfuzz.distance import OSA

from app.catalog.records import public
from app.db import Database
from app.embed import Embedder

# Words a request uses that say nothing about which machine ("I need a machine to ..."): never
# searched for, never corrected. English stop words are left out by the full-text parser.
FILLER = tuple((
    "machine machines tool tools equipment device devices gear thing things stuff something "
    "anything lab labs makerspace space workshop use using used need needs want wanted "
    "looking look find get got have has please could would like kind sort one ones good best "
    "better work works working make making made help hi hello hey thanks im new here able "
    "allowed available list lists everything whole overview options option there any else "
    "give tell show know see offer offers let lets"
).split())
CLOSE = 0.55  # cosine similarity at which a record answers a request by meaning alone
RELATED = 0.10  # ... when the record also has one of the request's words
TEXT_WEIGHT = 0.5  # of the words' share in the score, beside the similarity
NAMED = 0.2  # a generic name written out (one shared, or of brand and category words only)
NAMING = 6  # words that say something, up to which a request names a thing (_lacking)
SHORT = 3  # ... up to which mostly strange ones say the lab lacks it
NEAREST = 3  # machines named as nearest when none matches
OVERVIEW_SAMPLE = 6  # machine names given per category in the overview

Answer = Literal["machines", "none", "overview"]


@dataclass(frozen=True)
class Scored:
    """One machine as the ranking saw it."""

    slug: str
    score: float
    named: int  # length of the longest of its names the request writes out (0: none)
    specific: bool  # ... a name no other machine shares, not of brand or category words alone
    words: int  # request words its record has
    key_words: int  # ... in its names, brand or category
    similarity: float
    record: dict[str, Any]

    @property
    def matches(self) -> bool:
        return (self.named > 0 or self.key_words > 0 or self.similarity >= CLOSE
                or (self.words > 0 and self.similarity >= RELATED))


@dataclass(frozen=True)
class Found:
    """What a search found: ranked matches, none (with the nearest machines), or the
    catalogue's overview for a request that names nothing."""

    answer: Answer
    query: str  # the request as searched: normalised, spelling corrected
    machines: list[dict[str, Any]] = field(default_factory=list)
    nearest: list[dict[str, Any]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # request words no record has
    ranked: list[Scored] = field(default_factory=list)

    @property
    def slugs(self) -> list[str]:
        return [m["slug"] for m in self.machines]


async def index(db: Database, embedder: Embedder) -> int:
    """Embed every machine record that has no embedding yet (new, or its text changed).
    Returns how many were embedded."""
    rows = await db.fetch("SELECT machine_id, doc FROM machine_search WHERE embedding IS NULL"
                          " ORDER BY machine_id")
    if not rows:
        return 0
    # ONNX inference is CPU work: off the event loop.
    vectors = await asyncio.to_thread(embedder.embed, [r["doc"] for r in rows])
    async with db.transaction() as conn:
        async with conn.cursor() as cur:
            # Only if the text is still the one embedded: a change meanwhile cleared it.
            await cur.executemany(
                "UPDATE machine_search SET embedding = %s WHERE machine_id = %s AND doc = %s",
                [(v, r["machine_id"], r["doc"]) for r, v in zip(rows, vectors, strict=True)])
    # Fresh statistics: without them the planner scans the whole index tables for a request's
    # few words (measured at 300 machines: 1.5 ms of a 5.6 ms ranking).
    await db.execute("ANALYZE machine_search, machine_lexemes, machine_names, catalog_words")
    return len(rows)


# The request's words (normalised, in order): whether each says something (three letters or
# more, no digit, not filler or a stop word), whether it (or its stem) is a key word, and for
# each that no record has (`unknown`): the record word that begins it or that it begins, the
# nearest in length (`related`: "wood" for "wooden", which the stemmer keeps apart), and the
# record words that could be it misspelled (the same first letter, a length within two), key
# words apart.
_WORDS = """
SELECT w.word, u.content, u.content AND k.key IS NULL AS unknown,
       u.content AND coalesce(k.key, false) AS key,
       ARRAY(SELECT c.word FROM catalog_words c
             WHERE u.content AND k.key IS NULL AND left(c.word, 1) = left(w.word, 1)
             AND ((length(c.word) >= 4 AND left(w.word, length(c.word)) = c.word)
                  OR (length(w.word) >= 5 AND left(c.word, length(w.word)) = w.word))
             ORDER BY abs(length(c.word) - length(w.word)), c.word LIMIT 1) AS related,
       ARRAY(SELECT c.word FROM catalog_words c
             WHERE u.content AND k.key IS NULL AND length(w.word) >= 4
             AND left(c.word, 1) = left(w.word, 1)
             AND length(c.word) BETWEEN length(w.word) - 2 AND length(w.word) + 2
             ORDER BY c.word) AS spellings,
       ARRAY(SELECT c.word FROM catalog_words c
             WHERE u.content AND k.key IS NULL AND c.key AND left(c.word, 1) = left(w.word, 1)
             AND length(c.word) BETWEEN length(w.word) - 2 AND length(w.word) + 2
             ORDER BY c.word) AS keys
FROM regexp_split_to_table(btrim(catalog_norm(%(q)s)), ' ') WITH ORDINALITY AS w(word, n),
LATERAL (SELECT length(w.word) >= 3 AND w.word !~ '[0-9]' AND NOT w.word = ANY(%(filler)s)
                AND to_tsvector('english', w.word) <> ''::tsvector AS content) u
LEFT JOIN LATERAL (
    SELECT bool_or(c.key) AS key FROM catalog_words c
    WHERE c.word = w.word OR c.stem = (tsvector_to_array(to_tsvector('english', w.word)))[1]
    ) k ON true
WHERE w.word <> ''
ORDER BY w.n
"""

# What the request's words say of each machine that has one or is named (a search's first
# statement, run while the request is embedded). `lex`: the words, stemmed, filler removed;
# `grams`: the request's runs of one to six words, as names are stored; `hits`: the machines
# that have each word, and whether as a key word; `lw`: each word's weight, the rarer in the
# catalogue the heavier (IDF); `specific`: whether a name written out is one no other machine
# shares, nor a brand or category contains, with a word that is no brand's or category's. One
# row at least: the request's word count and the words no record has ride on every row.
_MATCHED = """
WITH q AS (
    SELECT ARRAY(SELECT unnest(tsvector_to_array(to_tsvector('english', %(q)s)))
                 EXCEPT SELECT unnest(tsvector_to_array(to_tsvector('english', %(fill)s))))
           AS lex,
           ARRAY(SELECT ' ' || array_to_string(w[i:j], ' ') || ' '
                 FROM (SELECT string_to_array(btrim(catalog_norm(%(q)s)), ' ') AS w) AS words,
                      generate_series(1, cardinality(w)) AS i,
                      generate_series(i, least(i + 5, cardinality(w))) AS j) AS grams,
           (SELECT count(*) FROM machine_search) AS n
), named AS (
    SELECT DISTINCT ON (n.machine_id) n.machine_id, n.name
    FROM q JOIN machine_names n ON n.name = ANY(q.grams)
    ORDER BY n.machine_id, length(n.name) DESC
), specific AS (
    SELECT named.machine_id, length(btrim(named.name)) AS named,
           NOT EXISTS (SELECT 1 FROM machine_names o WHERE o.machine_id <> named.machine_id
                       AND position(named.name IN o.name) > 0)
           AND NOT EXISTS (SELECT 1 FROM machine_search o, unnest(o.kinds) AS k
                           WHERE position(named.name IN k) > 0)
           AND EXISTS (SELECT 1 FROM regexp_split_to_table(btrim(named.name), ' ') AS t
                       WHERE NOT t = ANY(%(filler)s)
                       AND NOT EXISTS (SELECT 1 FROM catalog_words c
                                       WHERE c.word = t AND c.kind)) AS specific
    FROM named
), hits AS (
    SELECT ml.machine_id, ml.lexeme AS l, ml.key
    FROM q CROSS JOIN LATERAL unnest(q.lex) AS l(l)
    JOIN machine_lexemes ml ON ml.lexeme = l.l
), lw AS (
    SELECT l.l, count(h.machine_id) AS df, ln(q.n + 1.0) - ln(count(h.machine_id) + 0.5) AS idf
    FROM q CROSS JOIN LATERAL unnest(q.lex) AS l(l) LEFT JOIN hits h ON h.l = l.l
    GROUP BY l.l, q.n
), per AS (
    SELECT h.machine_id, count(*) AS words, count(*) FILTER (WHERE h.key) AS key_words,
           sum(lw.idf * CASE WHEN h.key THEN 1.0 ELSE 0.5 END)
           / (SELECT nullif(sum(idf), 0) FROM lw WHERE df > 0) AS text
    FROM hits h JOIN lw ON lw.l = h.l
    GROUP BY h.machine_id
), matched AS (
    SELECT coalesce(per.machine_id, sp.machine_id) AS machine_id,
           coalesce(sp.named, 0) AS named, coalesce(sp.specific, false) AS specific,
           coalesce(per.words, 0) AS words, coalesce(per.key_words, 0) AS key_words,
           coalesce(per.text, 0.0) AS text
    FROM per FULL JOIN specific sp ON sp.machine_id = per.machine_id
)
SELECT matched.*, (SELECT cardinality(lex) FROM q) AS n_lex,
       (SELECT coalesce(array_agg(l ORDER BY l), '{}') FROM lw WHERE df = 0) AS unknown
FROM (SELECT 1) AS one LEFT JOIN matched ON true
"""

# Every machine scored, the best first: its record's cosine similarity to the request, and
# what the words said of it (`_MATCHED`, given as arrays by machine).
_RANKED = """
WITH matched AS (
    SELECT * FROM unnest(%(ids)s::integer[], %(named)s::integer[], %(specific)s::boolean[],
                         %(words)s::integer[], %(key_words)s::integer[],
                         %(text)s::float8[])
                  AS t(machine_id, named, specific, words, key_words, text)
), scored AS (
    SELECT s.machine_id, coalesce(t.named, 0) AS named,
           coalesce(t.specific, false) AS specific, coalesce(t.words, 0) AS words,
           coalesce(t.key_words, 0) AS key_words, coalesce(t.text, 0.0) AS text,
           CASE WHEN s.embedding IS NULL OR %(v)s::vector IS NULL THEN 0.0
                ELSE 1 - (s.embedding <=> %(v)s::vector) END AS similarity
    FROM machine_search s LEFT JOIN matched t ON t.machine_id = s.machine_id
), best AS (
    SELECT *, similarity + %(text_weight)s * text
              + CASE WHEN specific THEN 10 + named / 100.0 WHEN named > 0 THEN %(named_bonus)s
                     ELSE 0.0 END AS score
    FROM scored
    ORDER BY score DESC, machine_id
    LIMIT %(n)s
)
SELECT m.*, best.*,
       (SELECT count(*) FROM machine_search WHERE embedding IS NULL) AS unembedded
FROM best JOIN machines m ON m.id = best.machine_id
ORDER BY best.score DESC, m.name
"""


@dataclass(frozen=True)
class Word:
    text: str  # as searched: the record's word when this one was it misspelled
    content: bool  # says something: three letters or more, no digit, not filler or stop word
    key: bool  # a machine's name, brand or category has it
    # No record has it, nor a word that begins it or that it begins, and it is no key word
    # misspelled.
    strange: bool


def _spelled(rows: Sequence[dict[str, Any]]) -> list[Word]:
    """The request's words, each misspelled one replaced by the one record word nearest it
    (one edit away, two for a word of eight letters or more; when exactly one is nearest);
    a word that stays unknown is strange unless it may be a name's, brand's or category's
    word misspelled (one edit away, two for a word of six letters or more: "bamboo" may be
    "bambu")."""
    out = []
    for row in rows:
        word = row["word"]
        if row["spellings"]:
            allowed = 1 if len(word) < 8 else 2
            near = sorted((d, s) for s in row["spellings"]
                          if (d := OSA.distance(word, s)) <= allowed)
            if near and (len(near) == 1 or near[0][0] < near[1][0]):
                out.append(Word(near[0][1], True, near[0][1] in row["keys"], False))
                continue
        maybe_key = any(OSA.distance(word, k) <= (1 if len(word) < 6 else 2)
                        for k in row["keys"])
        # A record word the request's word begins or is begun by ("wood" for "wooden") is
        # searched beside it.
        related = row["related"][0] if row["related"] else None
        out.append(Word(f"{word} {related}" if related else word, row["content"], row["key"],
                        row["unknown"] and not maybe_key and related is None))
    return out


def _lacking(words: Sequence[Word]) -> bool:
    """The request names something the lab does not list: a request that names a thing (up to
    NAMING words that say something) with a strange word right before a key word ("band saw",
    "plasma cutter", "wifi router": what shares the key word is not it), or a short one of
    mostly strange words ("a kiln for firing ceramics"). A longer request describes a task, in
    words of its own."""
    content = [w for w in words if w.content]
    if len(content) <= NAMING and any(a.strange and b.key
                                      for a, b in zip(words, words[1:], strict=False)):
        return True
    strange = sum(w.strange for w in content)
    return len(content) <= SHORT and strange * 2 > len(content)


@dataclass(frozen=True)
class Matched:
    """What the request's words say: per machine (a row each), and of the request."""

    words: list[Word]
    rows: list[dict[str, Any]]  # machine_id, named, specific, words, key_words, text
    n_lex: int  # words that say something, stemmed
    unknown: list[str]  # ... that no record has

    @property
    def named(self) -> bool:
        return any(r["named"] for r in self.rows)


async def _matched(db: Database, query: str) -> Matched:
    words = _spelled(await db.fetch(_WORDS, {"q": query, "filler": list(FILLER)}))
    rows = await db.fetch(_MATCHED, {"q": " ".join(w.text for w in words),
                                     "fill": " ".join(FILLER), "filler": list(FILLER)})
    return Matched(words, [r for r in rows if r["machine_id"] is not None],
                   rows[0]["n_lex"], list(rows[0]["unknown"]))


async def _rank(db: Database, matched: Matched, vector: Any, n: int) -> list[dict[str, Any]]:
    columns = ("machine_id", "named", "specific", "words", "key_words", "text")
    arrays = {c: [r[c] for r in matched.rows] for c in columns}
    return await db.fetch(_RANKED, {
        "ids": arrays["machine_id"], "named": arrays["named"], "specific": arrays["specific"],
        "words": arrays["words"], "key_words": arrays["key_words"],
        "text": [float(t) for t in arrays["text"]], "v": vector, "n": n,
        "text_weight": TEXT_WEIGHT, "named_bonus": NAMED})


async def ranked(db: Database, query: str, vector: Any, n: int = 5) -> list[dict[str, Any]]:
    """The best `n` machines for a request already embedded, scored (a search's statements,
    one after the other: the benchmark measures them apart from the embedding)."""
    return await _rank(db, await _matched(db, query), vector, n)


async def search(db: Database, embedder: Embedder | None, query: str, *,
                 limit: int = 5) -> Found:
    """The machines that answer a request, best first (at most `limit`); none, with the
    nearest; or the overview when the request names nothing."""
    embedded = None if embedder is None else asyncio.create_task(
        asyncio.to_thread(embedder.embed, [query]))
    try:
        # The request is embedded on another thread while PostgreSQL reads its words.
        matched = await _matched(db, query)
        vector = None if embedded is None else (await embedded)[0]
    finally:
        if embedded is not None and not embedded.done():
            embedded.cancel()
    words = matched.words
    text = " ".join(w.text for w in words)
    if matched.n_lex == 0 and not matched.named:
        return Found("overview", text)
    n = max(limit, NEAREST)
    rows = await _rank(db, matched, vector, n)
    if rows and rows[0]["unembedded"] and embedder is not None:
        await index(db, embedder)  # a machine new or changed since: embed it, then rank again
        rows = await _rank(db, matched, vector, n)
    if not rows:
        return Found("overview", text)
    ranked = [Scored(r["slug"], float(r["score"]), r["named"], r["specific"], r["words"],
                     r["key_words"], float(r["similarity"]), public(r)) for r in rows]
    unknown = matched.unknown
    matching = [s for s in ranked if s.matches][:limit]
    if not matching or (_lacking(words) and not any(s.specific for s in ranked)):
        return Found("none", text, nearest=[s.record for s in ranked[:NEAREST]],
                     unknown=unknown, ranked=ranked)
    return Found("machines", text, machines=[s.record for s in matching], unknown=unknown,
                 ranked=ranked)


@dataclass(frozen=True)
class Size:
    machines: int
    categories: int


async def size(db: Database) -> Size:
    """How many machines the catalogue holds, in how many categories."""
    row = await db.fetchone("SELECT count(*) AS n, count(DISTINCT category) AS c FROM machines")
    return Size(row["n"], row["c"]) if row else Size(0, 0)


async def overview(db: Database, category: str | None = None) -> dict[str, Any]:
    """The catalogue by category: how many machines in all and in each, with a few names
    each; or, for one category, its machines."""
    if category is not None:
        rows = await db.fetch("SELECT * FROM machines WHERE lower(category) = lower(%s)"
                              " ORDER BY name", (category,))
        return {"category": category, "machines": [public(r) for r in rows]}
    rows = await db.fetch(
        "SELECT category, count(*) AS n, (array_agg(name ORDER BY name))[1:%s] AS names"
        " FROM machines GROUP BY category ORDER BY category", (OVERVIEW_SAMPLE,))
    return {"machines": sum(r["n"] for r in rows), "categories": [
        {"category": r["category"], "machines": r["n"], "names": list(r["names"])}
        for r in rows]}
