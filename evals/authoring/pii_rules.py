"""The written rules of the personal-data detectors (evals/authoring/pii.py), for what the
maintained libraries do not cover: a name a sentence gives in any of the languages the lab's
visitors write ("my name is", "je m'appelle", "ich heiße", "меня зовут", "我叫", "제 이름은"),
a name after a title, a greeting or a sign-off, a name before an honorific ("同学", "さん",
"씨", "Hanım"), a Vietnamese or Cyrillic full name, a street written the way Europe and Asia
write one, and the keys of a tool call's arguments that hold a person's name.

Each rule is general (a cue, a form, a key), never a particular person's name. A strong cue
the rules could not resolve into a name is what `unresolved_cues` reports: the case it is in
is held back for review instead of written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# The particles names carry between their capitalised words ("Ana de Souza").
PARTICLES = {"de", "da", "do", "dos", "das", "del", "della", "di", "du", "van", "von", "der",
             "den", "la", "le", "bin", "binti", "ibn", "al", "el"}
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_NOT_LATIN_LETTER = r"(?<![A-Za-zÀ-ÖØ-öø-ÿ])"

# Words that end a name written in lower case after a strong cue (they begin the sentence's
# next part): and / or / from / here / the, in the cued languages.
_STOP = {"and", "or", "from", "here", "the", "i", "im", "i'm", "et", "de", "je", "und", "ich",
         "aus", "y", "e", "o", "soy", "ve", "và", "и", "из", "a", "an", "with", "at",
         "in", "to", "for", "is", "am", "but", "please", "thanks", "who", "your", "my"}

# Cues after which what follows is a name whatever its case or script; the hold-back rule
# reads the same cues.
STRONG_CUES = [
    r"my (?:full |first |last )?name(?:'s| is)", r"(?<![\w-])name\s*:",
    r"je m['’]appelle", r"mon nom (?:est|c['’]est)", r"ich hei(?:ß|ss)e",
    r"mein name ist", r"me llamo", r"mi nombre es", r"mi chiamo", r"il mio nome è",
    r"meu nome é", r"me chamo", r"chamo-me", r"nazywam się", r"mam na imię",
    r"benim adım", r"adım", r"меня зовут", r"мо[её] имя", r"tôi tên là", r"tên tôi là",
    r"tên của tôi là", r"em tên là", r"tên em là", r"mình tên là", r"tên mình là",
    r"mijn naam is", r"ik heet", r"我叫", r"我的名字[是叫]", r"名前は", r"제 이름은",
    r"내 이름은", r"저는", r"मेरा नाम", r"اسمي",
]
# Cues after which only a name written with capitals is taken (they also begin sentences that
# give no name: "I'm looking", "je suis étudiant").
WEAK_CUES = [
    r"i['’]?m", r"i am", r"call me", r"this is", r"it['’]s", r"here is", r"signed", r"regards",
    r"je suis", r"moi c['’]est", r"c['’]est", r"hier ist", r"soy", r"sono", r"sou",
    r"jestem", r"tôi là", r"mình là", r"em là", r"я", r"ben",
]
# Sign-offs: a name written with capitals right after one, at the end of the message.
SIGN_OFFS = [
    r"thanks", r"thank you", r"cheers", r"best", r"regards", r"merci", r"cordialement",
    r"danke", r"viele grüße", r"grüße", r"gracias", r"saludos", r"grazie", r"obrigad[oa]",
    r"pozdrawiam", r"dziękuję", r"teşekkürler", r"cảm ơn", r"спасибо", r"с уважением",
]
# Titles before a name, in the visitors' languages.
TITLES = [
    r"mr", r"mrs", r"ms", r"mx", r"dr", r"prof", r"m\.", r"mme", r"mlle", r"herr", r"frau",
    r"sr", r"sra", r"srta", r"dott", r"dott\.ssa", r"sig", r"sig\.ra", r"pan", r"pani",
    r"bay", r"bayan", r"anh", r"chị", r"thầy", r"ông", r"bà", r"г-н", r"г-жа",
]
# The family names most Vietnamese people carry (about nine in ten): one of them written
# with a capital, followed by one to three more capitalised words, is a full name.
VIETNAMESE_FAMILY_NAMES = [
    "Nguyễn", "Trần", "Lê", "Phạm", "Hoàng", "Huỳnh", "Phan", "Vũ", "Võ", "Đặng", "Bùi",
    "Đỗ", "Hồ", "Ngô", "Dương", "Lý", "Đinh", "Trương", "Đoàn", "Lâm",
]

_SEP = r"[ \t]*[:,\-–—]?[ \t]*[\"'“‘«]?"


def _alternation(words: list[str]) -> str:
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


_STRONG = re.compile(rf"{_NOT_LATIN_LETTER}(?i:{_alternation(STRONG_CUES)}){_SEP}")
_WEAK = re.compile(rf"(?<!\w)(?i:{_alternation(WEAK_CUES)})[ \t]*[,:]?[ \t]+")
_TITLE = re.compile(rf"(?<!\w)(?i:{_alternation(TITLES)})\.?[ \t]+")
_SIGN_OFF = re.compile(rf"(?<!\w)(?i:{_alternation(SIGN_OFFS)})[ \t]*[,!.]*[ \t\n]*[-–—]?[ \t]*")
_VIETNAMESE = re.compile(rf"(?<!\w){_alternation(VIETNAMESE_FAMILY_NAMES)}(?=[ \t]+[^\W\d_])")
# What a caseless script's name is written in, and what ends it (a particle, a verb ending).
_HAN = re.compile(r"[\u3400-\u9fff]{2,4}")
_KANA_KANJI = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]{1,8}?"
                         r"(?=です|と申します|といいます|。|、|$|\s)")
_HANGUL = re.compile(r"[\uac00-\ud7a3]{2,4}?(?=입니다|이에요|예요|이고|이며|라고|\s|[.,!?]|$)")
_DEVANAGARI = re.compile(r"[\u0900-\u097f]+(?:[ \t]+[\u0900-\u097f]+){0,2}?"
                         r"(?=[ \t]+है|[ \t]*[।,.]|$)")
_ARABIC_LETTERS = r"[\u0620-\u064a\u066e-\u06d3]+"
_ARABIC = re.compile(rf"{_ARABIC_LETTERS}(?:[ \t]+{_ARABIC_LETTERS}){{0,2}}?"
                     r"(?=[ \t]*[،,.؟!]|[ \t]+و|$)")
_LOWER_WORDS = re.compile(r"[^\W\d_][\w'’-]*(?:[ \t]+[^\W\d_][\w'’-]*)?")
_JAPANESE_SUFFIX = re.compile(r"(?P<name>[\u3040-\u30ff\u3400-\u9fff]{2,8}?)と申します")
# Cues a full name (two capitalised words at least) follows: German capitalises its nouns,
# so "ich bin Student" is no name, "ich bin Lukas Becker" is.
_WEAK_FULL = re.compile(r"(?<!\w)(?i:ich bin|ich heisse|reported by|report from|submitted by"
                        r"|on behalf of|de la part de|im auftrag von|da parte di|en nombre de"
                        r"|w imieniu)[ \t]*[,:]?[ \t]+")
# A greeting with a name right after it, before a comma or "!" ("Hi Anna,", "Bonjour Marie!").
_GREETING = re.compile(r"(?<!\w)(?i:hi|hello|hey|dear|bonjour|salut|hallo|liebe[r]?|hola"
                       r"|ciao|buongiorno|olá|oi|cześć|dzień dobry|merhaba|xin chào|привет"
                       r"|здравствуйте)[ \t]*,?[ \t]+")
_GREETING_ALONE = re.compile(r"(?i:hi|hello|hey|bonjour|salut|hallo|hola|ciao|buongiorno|olá"
                             r"|oi|cześć|merhaba|xin chào|привет|здравствуйте)[ \t,!.]*$")
_NOT_GREETED = {"Team", "All", "There", "Everyone", "Everybody", "Staff", "Folks", "Guys",
                "Lab", "Tout", "Alle", "Todos", "Tutti"}
# A message that opens with a name and "here" ("Jamal Reid here,").
_HERE = re.compile(r"^[ \t]*(?=\S)")
# A name followed by the honorific that marks it in Chinese, Japanese, Korean and Turkish:
# "李晓华同学", "田中さん", "김민준 씨", "Ayşe Hanım". Chinese runs have no spaces, so there
# the name is a common family name and one or two characters.
CHINESE_FAMILY_NAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田"
                        "董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白"
                        "邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
_CHINESE_HONORIFIC = re.compile(rf"[{CHINESE_FAMILY_NAMES}][\u3400-\u9fff]{{1,2}}?"
                                r"(?=同学|老师|先生|女士|教授|博士|师傅)")
_CHINESE_AFTER_I_AM = re.compile(rf"我是(?P<name>[{CHINESE_FAMILY_NAMES}][\u3400-\u9fff]{{1,2}})"
                                 r"(?=[，,。.!！\s]|$)")
_JAPANESE_HONORIFIC = re.compile(r"[\u3400-\u9fff\u30a0-\u30ff]{1,6}(?=さん|様|さま|先生|くん|君)")
_KOREAN_HONORIFIC = re.compile(r"(?<![\uac00-\ud7a3])[\uac00-\ud7a3]{2,4}(?=[ \t]?(?:씨|님|학생"
                               r"|교수님|선생님))")
_TURKISH_HONORIFIC = re.compile(r"(?P<name>(?:[A-ZÇĞİÖŞÜ][a-zçğıöşü]+[ \t]+){1,3})"
                                r"(?=(?:Bey|Hanım|Hoca)\b)")
# Two or three capitalised Cyrillic words inside a sentence are a person's full name far more
# often than anything else ("передайте Ольге Смирновой").
_CYRILLIC_FULL_NAME = re.compile(r"(?<=[а-яё,][ \t])[А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?"
                                 r"(?:[ \t]+[А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?){1,2}")


def cued_names(text: str) -> Iterator[tuple[int, int]]:
    """The characters of every name a written rule finds: after a strong cue in any script;
    written with capitals after a weak cue, a title, a greeting or a sign-off that ends the
    message, before "here" that opens it; before an honorific
    (Chinese, Japanese, Korean, Turkish); a Vietnamese full name, a Cyrillic full name inside
    a sentence."""
    for m in _STRONG.finditer(text):
        span = _name_after(text, m.end())
        if span is not None:
            yield span
    for rule in (_WEAK, _TITLE):
        for m in rule.finditer(text):
            end = capitalised_name(text, m.end())
            if end is not None:
                yield m.end(), end
    for m in _SIGN_OFF.finditer(text):
        end = capitalised_name(text, m.end())
        if end is not None and not text[end:].strip(" \t.!"):
            yield m.end(), end
    for m in _WEAK_FULL.finditer(text):
        end = capitalised_name(text, m.end(), least=2)
        if end is not None:
            yield m.end(), end
    for m in _GREETING.finditer(text):
        end = capitalised_name(text, m.end(), most=2)
        if (end is not None and text[end:end + 1] in (",", "!")
                and text[m.end():end].split()[0] not in _NOT_GREETED):
            yield m.end(), end
    for m in _HERE.finditer(text):
        end = capitalised_name(text, m.end())
        if end is not None and re.match(r"[ \t]+here\b", text[end:], re.IGNORECASE):
            yield m.end(), end
    for m in _JAPANESE_SUFFIX.finditer(text):
        yield m.start("name"), m.end("name")
    for m in _CHINESE_AFTER_I_AM.finditer(text):
        yield m.start("name"), m.end("name")
    for rule in (_CHINESE_HONORIFIC, _JAPANESE_HONORIFIC, _KOREAN_HONORIFIC,
                 _CYRILLIC_FULL_NAME):
        for m in rule.finditer(text):
            yield m.start(), m.end()
    for m in _TURKISH_HONORIFIC.finditer(text):
        yield m.start("name"), m.start("name") + len(m.group("name").rstrip())
    for m in _VIETNAMESE.finditer(text):
        end = capitalised_name(text, m.start(), least=2)
        if end is not None:
            yield m.start(), end


def after_greeting(text: str, start: int, end: int) -> int:
    """Where a span that a greeting opens ("Hola Pedro", "Xin chào") really begins: after the
    greeting, or at `end` when nothing follows it."""
    m = _GREETING.match(text, start)
    if m is None and _GREETING_ALONE.match(text, start, end):
        return end
    return min(m.end(), end) if m is not None else start


def capitalised_name(text: str, at: int, *, least: int = 1, most: int = 4) -> int | None:
    """Where a name written with capitals that begins at `at` ends (`least` to `most` words,
    the particles between them not counted), or None."""
    title = _TITLE.match(text, at)
    if title is not None:  # "this is Dr. Adeyemi": the title rule takes the name after it
        return None
    end, words, pos = None, 0, at
    while words < most:
        m = _WORD.match(text, pos)
        if m is None:
            break
        word = m.group(0).rstrip("'’-")
        if word[:1].isupper() and not word.isupper():
            words += 1
            end = m.start() + len(word)
        elif word.lower() not in PARTICLES or not words:
            break
        gap = re.match(r"[ \t]+", text[m.end():])
        if gap is None:
            break
        pos = m.end() + gap.end()
    return end if end is not None and words >= least else None


def _name_after(text: str, at: int) -> tuple[int, int] | None:
    """The name that begins at `at`, after a strong cue: in the script it is written in."""
    rest = text[at:]
    end = capitalised_name(text, at)
    if end is not None:
        return at, end
    for rule in (_HAN, _KANA_KANJI, _HANGUL, _DEVANAGARI, _ARABIC):
        m = rule.match(rest)
        if m and (rule is not _HAN or not _KANA_KANJI.match(rest)):
            return at + m.start(), at + m.end()
    m = _LOWER_WORDS.match(rest)
    if m:
        words = m.group(0).split()
        kept = []
        for word in words:
            if word.lower() in _STOP:
                break
            kept.append(word)
        if kept:
            end = rest.index(kept[-1]) + len(kept[-1])
            return at, at + end
    return None


def unresolved_cues(scrubbed: str) -> list[str]:
    """The strong cues in already scrubbed text that no placeholder follows: a name the
    detectors did not replace may stand there."""
    out = []
    for m in _STRONG.finditer(scrubbed):
        after = scrubbed[m.end():].lstrip()
        if after and not after.startswith("["):
            out.append(m.group(0).strip(" \t:,-–—\"'“‘«"))
    for m in re.finditer(r"と申します", scrubbed):
        if not scrubbed[:m.start()].endswith("]"):
            out.append(m.group(0))
    return out


# The keys of a tool call's arguments whose string value is a person's name, whatever it
# looks like ("reporter": "jo", "contact_name": "Nguyễn Văn An"), and those whose value is
# an address, a phone number or a student id.
NAME_KEY = re.compile(r"(?i)(?:^|_)(?:name|full_?name|first_?name|last_?name|surname|reporter"
                      r"|requester|requested_by|reported_by|contact|author|person|student"
                      r"|owner|assignee|on_behalf_of|signed_by|visitor|user_?name)(?:_|$)")
# Keys whose value names a thing (a machine, a room, a file): never read for a person's name
# (the English model takes "Glowforge Pro" alone for one).
_THINGS = (r"machines?|tools?|files?|parts?|materials?|rooms?|projects?|courses?|slug|model"
           r"|category|query|search")
THING_KEY = re.compile(rf"(?i)(?:^|_)(?:{_THINGS})(?:_|$)")
NOT_A_PERSON_KEY = re.compile(rf"(?i)(?:^|_)(?:{_THINGS}|club|team|lab|group|id|e?mail|phone"
                              r"|address)(?:_|$)")
ADDRESS_KEY = re.compile(r"(?i)(?:^|_)(?:address|street|home|postal_?address)(?:_|$)")
STUDENT_ID_KEY = re.compile(r"(?i)(?:^|_)(?:student_?id|student_?number|matric\w*)(?:_|$)")

# Streets as Europe and Asia write them: a street word, its name and number ("12 rue de la
# Paix", "Hauptstraße 5", "Calle Mayor 10", "Via Roma 12", "ul. Długa 5"), and a Chinese or
# Japanese address ending in a number ("中山路12号").
_STREET_WORDS = (r"rue|avenue|av\.|boulevard|bd|chemin|allée|place|impasse|quai|calle|c/"
                 r"|avenida|avda\.|paseo|plaza|carrer|via|viale|piazza|corso|largo|rua"
                 r"|travessa|praça|alameda|ulica|ul\.|aleja|al\.|caddesi|cad\.|sokak|sok\."
                 r"|mahallesi|улица|ул\.|проспект|пр\.|đường|phố|ngõ|hẻm")
_GERMANIC = (r"[\w-]*(?:straße|strasse|str\.|weg|platz|allee|gasse|ring|damm|ufer|laan"
             r"|straat|gracht)")
STREET_ABROAD = re.compile(
    rf"(?:\d{{1,4}}[a-zA-Z]?,?[ \t]+)?(?i:{_STREET_WORDS})[ \t]+(?:[\w'’.-]+[ \t]+){{0,4}}?"
    rf"(?:\d{{1,4}}[a-zA-Z]?\b|(?=[\w'’-]+,?[ \t]+\d{{4,5}}\b))[\w'’.-]*"
    rf"|(?<!\w)\d{{1,4}}[a-zA-Z]?,?[ \t]+(?i:{_STREET_WORDS})[ \t]+[\w'’-]+"
    rf"(?:[ \t]+[\w'’-]+){{0,3}}"
    rf"|(?<!\w)(?i:{_GERMANIC})[ \t]+\d{{1,4}}[a-zA-Z]?\b"
    rf"|[\u3400-\u9fff]{{2,12}}[路街道巷弄里][\u3400-\u9fff\d]{{0,6}}\d+[号號]"
    rf"|[\u3400-\u9fff]{{1,6}}[都道府県][\u3400-\u9fff\u3040-\u30ff]{{1,12}}"
    rf"\d+(?:[-−ー丁目番地号]\d*)+"
    rf"|[\uac00-\ud7a3]{{2,8}}(?:로|길)[ \t]?\d+")
# A postcode and town after a street abroad belong to the address ("75002 Paris").
POSTCODE_TOWN = re.compile(r"[ \t]*,?[ \t]*(?:\d{4,6}|\d{2}-\d{3})[ \t]+[^\W\d_][\w'’-]*")
