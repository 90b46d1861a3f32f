"""Which language an answer is in, for the checks that read words: a check that reads English
cannot judge a Spanish answer, so it says so (UNDECIDED) instead of finding nothing wrong.

The detector is lingua (`lingua-language-detector`, pinned in pyproject.toml), which ships its
own models in the wheel: nothing is downloaded. It weighs the languages students of the lab
are likely to write in (LANGUAGES). Machine names, addresses and figures are taken out first:
"Tormach", "Haas" and "ShopBot" are not German or Dutch words.

An answer is read as a language when that language's confidence is at least READ_SHARE of the
most likely language's. Measured (2026-12-05) on the 917 non-blank English answers of the
labelled corpus, the lowest English share is 0.63; on short foreign replies ("He cerrado el
ticket", "C'est fait !") it is below 0.4. A detection is cached per text.

Two sets of models: lingua's quick ones (its low-accuracy mode, trigrams only; they load in
about 0.13 s) and its full ones (1- to 5-grams; about 2 s). For a check that reads English, the
quick models decide only a text they find English with no other language close (the next
one's confidence under QUICK_MARGIN of English's; their confidences are mostly near 0 or 1,
so in practice this is their first choice), and then say English alone; the full models read
everything else, and every text for a check of another language. A process whose answers are
plainly English never loads them. Measured for checks that read English before it was adopted
(`make bench-languages`): on the labelled corpus's 1,561 answers the decisions were the same
but one (an English answer the full models had left unread is read); on a blind set of 215
answers in 20 languages (`evals/calibration/language-blind.yaml`) they were the same for every
answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import regex

from evals.checks._text import sentences
from evals.fixtures.catalog import all_machine_names

if TYPE_CHECKING:
    from lingua import LanguageDetector

# ISO 639-1 code -> name, as a reason names it. The detector weighs exactly these.
LANGUAGES: dict[str, str] = {
    "en": "English", "es": "Spanish", "fr": "French", "de": "German", "it": "Italian",
    "nl": "Dutch", "pt": "Portuguese", "pl": "Polish", "vi": "Vietnamese", "zh": "Chinese",
    "ja": "Japanese", "ko": "Korean", "ar": "Arabic", "ru": "Russian", "tr": "Turkish",
    "hi": "Hindi", "uk": "Ukrainian", "sv": "Swedish", "id": "Indonesian", "el": "Greek",
}
READ_SHARE = 0.5
# The quick models decide a text only when they find it English and the next language's
# confidence is under this share of English's (chosen on the labelled corpus, where no
# foreign sentence came under it at any share up to 1.0, before the blind set was read).
QUICK_MARGIN = 0.8
# Fewer letters than this once names and figures are out: too little text to tell.
MIN_LETTERS = 3

# An address is taken out whole from the start of its word: `(?<!\S)` lets an e-mail match
# begin only where a word begins, so a long word with no @ is scanned once, not once from
# every letter (quadratic: 7 s on an 80,000-letter word).
_LINK_TARGET = re.compile(
    r"\]\([^)]*\)|https?://\S+|(?<!\S)[^\s@]+@\S+|/tools/\S+|#cite-\S+")
_FIGURES = re.compile(r"[#\d][\w.,:/×x-]*|(?<!\w)(?:mm|cm|nm|µm|μm|kW|W|x|×)(?!\w)")


@dataclass(frozen=True)
class Reading:
    """What the detector made of a text: the most likely language, and the share of its
    confidence each language weighed reaches (1.0 for the most likely)."""

    top: str | None  # None: too little text to tell
    shares: tuple[tuple[str, float], ...] = ()

    def reads_as(self, code: str) -> bool:
        """The text can be read as this language (a short text may read as several)."""
        if self.top is None:
            return True  # nothing left to read but names and figures
        return dict(self.shares).get(code, 0.0) >= READ_SHARE

    @property
    def name(self) -> str:
        return "no language" if self.top is None else LANGUAGES[self.top]


def _builder() -> Any:
    # Imported here: only a process that reads an answer's words pays for lingua.
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper()))
                 for code in LANGUAGES]
    return LanguageDetectorBuilder.from_languages(*languages)


@cache
def _detector() -> LanguageDetector:
    """The full models (about 2 s to load on the 2-core machine)."""
    detector: LanguageDetector = _builder().build()
    return detector


@cache
def _quick() -> LanguageDetector:
    """The quick models (about 0.13 s): they decide plainly English text alone."""
    detector: LanguageDetector = _builder().with_low_accuracy_mode().build()
    return detector


def _plainly_english(words: str) -> bool:
    values = _quick().compute_language_confidence_values(words)
    if not values or values[0].value <= 0 or values[0].language.iso_code_639_1.name != "EN":
        return False
    return len(values) < 2 or values[1].value < QUICK_MARGIN * values[0].value


# A word's letters, as the standard module's \w has them: the regex module's \w also takes
# combining marks and joiners, so a name followed by a zero-width non-joiner and a Persian
# suffix would stay in the text. (The regex module knows a later Unicode than Python 3.11's:
# a letter assigned since is a letter here, where the standard module took it for none.)
_WORD = r"[\p{L}\p{N}_]"


@cache
def _names() -> regex.Pattern[str]:
    """Every machine name as a whole word, the longest that fits first: one of the regex
    module's named lists, which looks a name up where the standard module tried 278
    alternatives at each place (2.49 s against 0.29 s over the labelled corpus's 5,888
    answers and sentences, with the same result for each, as on 40,000 made-up texts of names
    among joiners, combining marks and signs)."""
    names = sorted(all_machine_names(), key=len, reverse=True)
    # Case is ignored in the names only: ignored in the word letters too, a combining mark
    # that folds to a letter (U+0345 to iota) would count as one.
    return regex.compile(rf"(?<!{_WORD})(?i:\L<names>)(?!{_WORD})", names=names)


def prose(text: str) -> str:
    """The text without what belongs to no language: link targets and addresses, machine
    names (the lexicon's and every catalogue's), ticket and unit numbers, figures."""
    text = _LINK_TARGET.sub("] ", text)
    text = _names().sub(" ", text)
    return _FIGURES.sub(" ", text)


@lru_cache(maxsize=4096)
def reading(text: str) -> Reading:
    """The language of a text (an answer), as the full models read it."""
    return _read(prose(text))


def _read(words: str) -> Reading:
    """The full models' reading of a text's words (its prose)."""
    if sum(ch.isalpha() for ch in words) < MIN_LETTERS:
        return Reading(None)
    values = _detector().compute_language_confidence_values(words)
    if not values or values[0].value <= 0:
        return Reading(None)
    best = values[0].value
    shares = tuple((v.language.iso_code_639_1.name.lower(), v.value / best) for v in values)
    return Reading(shares[0][0], shares)


@lru_cache(maxsize=4096)
def _reading_for(text: str, code: str) -> Reading:
    """The reading a check that reads `code` goes by: for English, plainly English text is
    read by the quick models alone (an English reading and nothing else); any other text, and
    any text for a check of another language, by the full models."""
    if code != "en":
        return reading(text)
    words = prose(text)  # once: the full models read the same words when the quick ones pass
    if sum(ch.isalpha() for ch in words) >= MIN_LETTERS and _plainly_english(words):
        return Reading("en", (("en", 1.0),))
    return _read(words)


# A sentence with at least this many letters (names and figures out) is read on its own too.
SENTENCE_LETTERS = 12


def unreadable(text: str, code: str) -> str | None:
    """Why a check that reads `code` cannot read this text, or None when it can: the text as a
    whole, or any sentence of it long enough to tell, is in another language ("Sure! I checked
    the queue. He cerrado el ticket #4." is not read as English)."""
    found = _reading_for(text, code)
    if not found.reads_as(code):
        return f"the answer is in {found.name}; this check reads {LANGUAGES[code]}"
    for sentence in sentences(text):
        if sum(ch.isalpha() for ch in prose(sentence)) < SENTENCE_LETTERS:
            continue
        part = _reading_for(sentence, code)
        if part.top != code and not part.reads_as(code):
            return (f"a sentence of the answer is in {part.name} (“{sentence}”); this check"
                    f" reads {LANGUAGES[code]}")
    return None
