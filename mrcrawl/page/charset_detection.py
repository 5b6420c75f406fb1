"""Statistical charset detection, for a page that declares no charset.

charset_normalizer reads the page's text (markup removed) and names a
codec.  Its answer stands when it is a multi-byte codec or decodes letters
of a non-Latin script; when it reads the page as Latin-script text, the
candidates are re-scored for how plausible their letters are in some
language, which tells the Latin code pages apart better than the library
(README, "Charset detection").
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter

import charset_normalizer
from charset_normalizer.constant import FREQUENCIES
from charset_normalizer.utils import is_multi_byte_encoding

from mrcrawl.page.charset_labels import (
    DEFAULT_ENCODING,
    NON_ASCII_BYTE,
    best_sibling,
    canonical_codec_name,
    codec_for_label,
    decode_prefix,
)

# Markup is stripped from this much of the body...
DETECTION_WINDOW = 256 * 1024
# ...and at most this much of the remaining text is looked at.
DETECTION_SAMPLE = 64 * 1024
# The plausibility score reads fewer bytes: a few thousand characters are
# plenty to tell languages apart.  Every candidate codec is scored on a
# short preview first and only the best few on the whole sample, which
# keeps detection to a few milliseconds.
SCORING_SAMPLE = 4 * 1024
PREVIEW_CHARS = 300
FINALISTS = 3
CLEAR_LEAD = 0.25  # a preview score this far ahead needs no second round

# Markup is ASCII in every encoding a page can be detected in, and tags,
# scripts and styles say nothing about the language; removing them leaves
# the text, which is what tells encodings apart.  "<" and ">" never occur
# as trail bytes of the multi-byte encodings concerned.
# An unclosed script, comment or tag runs to the end, as in a browser;
# that also keeps the scan linear on hostile input ("<!--" repeated).
_MARKUP = re.compile(
    rb"<script\b.*?(?:</script\s*>|\Z)|<style\b.*?(?:</style\s*>|\Z)|<!--.*?(?:-->|\Z)"
    rb"|<[A-Za-z/!?][^>]*(?:>|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_SPACE_RUNS = re.compile(rb"[\t\n\r ]{2,}")


def page_text_bytes(body: bytes) -> bytes:
    """The body's text bytes, markup removed (a sample for detection)."""
    window = body[:DETECTION_WINDOW]
    text = _SPACE_RUNS.sub(b" ", _MARKUP.sub(b" ", window))
    return text[:DETECTION_SAMPLE]


# The letters that tell languages apart, per language: non-ASCII and
# lower-case (a mis-decoded bicameral text comes out in the wrong case:
# KOI8-R read as windows-1251 is mostly capitals).  Other scripts use
# charset_normalizer's frequency tables; Latin-script languages get their
# full set of accented letters, which those tables cut short.
_LATIN_LETTERS = {
    "fr": "éèêëàâîïôûùüçœæÿ", "de": "äöüß", "es": "áéíóúñü", "pt": "ãõáéíóúâêôàç",
    "it": "àèéìíòóù", "nl": "ëïéèö", "sv": "åäöé", "da-no": "åøæé", "fi-et": "äöõüšž",
    "is": "áéíóúýþæöð", "pl": "ąćęłńóśźż", "cs": "áčďéěíňóřšťúůýž",
    "sk": "áäčďéíĺľňóôŕšťúýž", "hu": "áéíóöőúüű", "ro": "ăâîșțşţ", "hr-sl-bs": "čćđšž",
    "tr": "çğıöşüâîû", "lt": "ąčęėįšųūž", "lv": "āčēģīķļņšūž", "sq-ca": "ëçàèéíïòóú",
    # Vietnamese shares its plain accented vowels with every language above;
    # what tells it are its own letters and the tone marks of windows-1258.
    "vi": "ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ\u0300\u0301\u0303\u0309\u0323",
}
# More common characters than the tables hold for Chinese (they list
# Simplified only, so Traditional ones are added) and Korean.
_TRADITIONAL_CHINESE = (
    "的一是不了在人有我他這個們中來上大為和國地到以說時要就出會可也你對生能而子那得於著下自之年過發後作"
    "裡用道行所然家種事成方多經麼去法學如都同現當沒動面起看定天分還進好小部其些主樣理心她本前開但因只從"
    "想實日軍者意無力它與長把機十民第公此已工使情明性知全三又關點正業外將兩高間由問很最重並物手應戰向頭"
    "文體政美相見被利什二等產或新己制身果加西斯月話合回特代內信表化老給世位次度門任常先海通教兒原東聲提"
    "立及比員解水名真論處走義各入幾口認條平系氣題活爾更別打女變四神總何電數安少報才結反受目太量再感建務"
    "做接必場件計管期市直德資命山金指克許統區保至隊形社便空決治展馬科司五基眼書非則聽白卻界達光放強即像"
    "難且權思王象完設式色路記南品住告類求據程北邊死張該交規萬取拉格望覺術領共確傳師觀清今切院讓識候帶導"
    "爭運笑飛風步改收根幹造言聯持組每濟車親極林服快辦議往元英士證近失轉夫令準布始怎呢存未遠叫台單影具羅"
    "字愛擊流備兵連調深商算質團集百需價花黨華城石級整府離況亞請技際約示復病息究線似官火斷精滿支視消越器"
    "容照須九增研寫稱企八功嗎包片史委乎查輕易早曾除農找裝廣顯吧阿李標談吃圖念六引歷首醫局突專費號盡另周"
)
_MORE_KOREAN = (
    "이다에의는로하을가고지서한은기으년대사시를리도인스일수있것정부통령국민경제회위원장관계획발표지산업"
    "시장문제련역세미중북울찰조결과말했밝혔예번올해난오늘내개월만원억명당통따후상및또그러나하지"
)
_KANA = "".join(
    chr(code) for start, end in ((0x3041, 0x3096), (0x30A1, 0x30FA), (0x30FC, 0x30FE))
    for code in range(start, end + 1)
)


def _language_letters() -> list[dict[str, float]]:
    """Per language, its telling letters and their weights: 1 for the most
    frequent, falling to 0.4 for the last of a frequency-ordered table, so
    that a text whose letters merely belong to a language's alphabet (as a
    mis-decoded one may) scores less than one that has its frequencies."""
    ordered: dict[str, list[str]] = {}

    def add(language: str, letters: str) -> None:
        known = ordered.setdefault(language, [])
        for ch in letters:
            if ord(ch) > 0x7F and not ch.isupper() and ch not in known:
                known.append(ch)

    for name, letters in FREQUENCIES.items():
        # "Japanese", "Japanese—" (katakana) and "Japanese——" (hiragana)
        # are one language here.
        add(name.rstrip("\u2014"), "".join(letters))
    add("Chinese (Traditional)", _TRADITIONAL_CHINESE)
    add("Korean", _MORE_KOREAN)
    languages = []
    for name, letters in ordered.items():
        if name in _TABLE_LANGUAGES_REPLACED:
            continue
        flat = name == "Japanese"  # kana and kanji lists: rank means little
        last = max(len(letters) - 1, 1)
        languages.append(
            {ch: 1.0 if flat else 1.0 - 0.6 * rank / last for rank, ch in enumerate(letters)}
        )
    for letters in _LATIN_LETTERS.values():
        languages.append(dict.fromkeys(letters, 1.0))
    japanese = next(lang for lang in languages if "の" in lang)
    japanese.update(dict.fromkeys(_KANA, 1.0))
    return [letters for letters in languages if letters]


# charset_normalizer's tables for Latin-script languages hold only the few
# accented letters among each one's 26 most frequent letters.
_TABLE_LANGUAGES_REPLACED = frozenset(
    "German French Dutch Italian Polish Spanish Portuguese Swedish Norwegian Finnish "
    "Vietnamese Czech Hungarian Turkish Romanian Danish Lithuanian Slovene Slovak "
    "Croatian Estonian English Indonesian".split()
)


def _letter_languages() -> dict[str, tuple[tuple[int, float], ...]]:
    """For each letter, (language index, weight) of the languages it tells."""
    index: dict[str, list[tuple[int, float]]] = {}
    for number, letters in enumerate(_language_letters()):
        for ch, weight in letters.items():
            index.setdefault(ch, []).append((number, weight))
    return {ch: tuple(pairs) for ch, pairs in index.items()}


def _unlikely_characters() -> frozenset[str]:
    """Characters that real text almost never holds but mis-decoding makes:
    C1 controls, private use, replacement, box drawing and block elements."""
    points = list(range(0x80, 0xA0))
    points += list(range(0x2500, 0x25A0))
    points += list(range(0xE000, 0xE800))  # private use (start: what codecs emit)
    points.append(0xFFFD)
    return frozenset(chr(point) for point in points)


_LETTER_LANGUAGES = _letter_languages()
_LANGUAGE_COUNT = 1 + max(n for pairs in _LETTER_LANGUAGES.values() for n, _ in pairs)
_UNLIKELY = _unlikely_characters()


def _shape_of(code_point: int) -> str:
    """One letter per script and case, for spotting words that mix scripts
    or cases: ASCII "a"/"A", other Latin "l"/"L", Greek "g"/"G", Cyrillic
    "c"/"C" (small/capital), Hebrew "h", Arabic "r", Thai "t", Hangul "k",
    Han and kana "j"; "s" for the Latin-1 and windows symbols that
    mis-decoded letters become; " " for anything else."""
    ch = chr(code_point)
    if code_point < 0x80:
        if not ch.isalpha():
            return " "
        return "A" if ch.isupper() else "a"
    if code_point in _MISDECODING_SYMBOLS:
        return "s"
    if 0x300 <= code_point <= 0x36F:
        return "l"  # combining accents (windows-1258) continue a Latin word
    if not ch.isalpha() and unicodedata.category(ch) != "Mn":
        return " "
    for first, last, small, capital in _BICAMERAL_RANGES:
        if first <= code_point <= last:
            return capital if ch.isupper() else small
    for first, last, shape in _CASELESS_RANGES:
        if first <= code_point <= last:
            return shape
    return " "


_MISDECODING_SYMBOLS = (set(range(0xA1, 0xC0)) - {0xAA, 0xB5, 0xBA}) | {
    0xD7, 0xF7, 0x20AC, 0x201A, 0x201E, 0x2020, 0x2021, 0x2030, 0x2039, 0x203A,
    0x2022, 0x2122, 0x02DC, 0x02C6, 0x2116,
}
_BICAMERAL_RANGES = (
    (0xC0, 0x24F, "l", "L"), (0x1E00, 0x1EFF, "l", "L"),
    (0x370, 0x3FF, "g", "G"), (0x400, 0x52F, "c", "C"),
)
_CASELESS_RANGES = (
    (0x590, 0x5FF, "h"), (0x600, 0x6FF, "r"), (0x750, 0x77F, "r"), (0xFB50, 0xFEFF, "r"),
    (0xE00, 0xE7F, "t"), (0x1100, 0x11FF, "k"), (0x3130, 0x318F, "k"), (0xAC00, 0xD7AF, "k"),
    # Han and kana share one letter: they mix within Japanese words.
    (0x3040, 0x30FF, "j"), (0x3400, 0x4DBF, "j"), (0x4E00, 0x9FFF, "j"), (0xF900, 0xFAFF, "j"),
)


def _build_shape_table() -> dict[int, str]:
    table = {code_point: _shape_of(code_point) for code_point in range(0x3100)}
    for first, last, shape in _CASELESS_RANGES:
        for code_point in range(max(first, 0x3100), last + 1):
            table[code_point] = shape
    return table


def _script_switch_pattern() -> str:
    """Two letters of different scripts side by side.  ASCII letters may
    touch other Latin letters, Han, kana, Hangul and Thai ("iPhone发布",
    "GDP는"), but not Greek, Cyrillic, Hebrew or Arabic ones."""
    scripts = ("aA", "lL", "gG", "cC", "h", "r", "t", "k", "j")
    allowed = {("aA", "lL"), ("aA", "t"), ("aA", "k"), ("aA", "j")}
    alternatives = []
    for script in scripts:
        others = "".join(
            other for other in scripts
            if other != script and (script, other) not in allowed and (other, script) not in allowed
        )
        alternatives.append(f"[{script}][{others}]")
    return "(?=" + "|".join(alternatives) + ")"


_SHAPE_TABLE = _build_shape_table()
_SCRIPT_SWITCH = re.compile(_script_switch_pattern())
# A Latin-1/windows symbol between two letters: "g³ówny" is cp1250 read as
# cp1252; and a lone Han or Hangul character inside an ASCII word:
# "g這sowa這" is cp1250 read as Big5.
# (Each pattern starts with what it looks for, which regex scans for fast.)
_SYMBOL_IN_WORD = re.compile(r"s(?<=[aAlLgGcChrtkj]s)(?=[aAlLgGcChrtkj])|[jk](?<=[aA][jk])(?=[aA])")
# A non-ASCII capital after a small letter inside a word, and one that
# starts a word (which earns what a frequent small letter earns).
_CASE_FLIP = re.compile(r"[algc][LGC]")
_INITIAL_CAPITAL = re.compile(r"[LGC](?<![aAlLgGcC][LGC])")


def _score(text: str) -> float:
    """How plausible `text` is as real writing, roughly -4..1 per character.

    Each non-ASCII character that is a frequent letter of the language the
    text reads best as counts +1 (as does a capital that starts a word);
    characters typical of mis-decoding (C1 controls, box drawing, private
    use) count -4; a word that switches script, turns to a capital midway
    or holds a symbol costs 2.  The sum is divided by the number of
    non-ASCII characters.
    """
    counts = Counter(text)
    non_ascii = 0
    unlikely = 0
    per_language = [0.0] * _LANGUAGE_COUNT
    letter_languages = _LETTER_LANGUAGES
    for ch, count in counts.items():
        if ch <= "\x7f":
            continue
        non_ascii += count
        languages = letter_languages.get(ch)
        if languages:
            for number, weight in languages:
                per_language[number] += count * weight
        elif ch in _UNLIKELY:
            unlikely += count
    if not non_ascii:
        return 0.0
    shapes = text.translate(_SHAPE_TABLE)
    penalties = (
        len(_SCRIPT_SWITCH.findall(shapes))
        + len(_SYMBOL_IN_WORD.findall(shapes))
        + len(_CASE_FLIP.findall(shapes))
    )
    total = max(per_language) + len(_INITIAL_CAPITAL.findall(shapes))
    return (total - 4 * unlikely - 2 * penalties) / non_ascii


# Codecs always tried, whatever charset_normalizer proposes: the legacy
# encodings of most of the web.  On a tie in plausibility the earlier one
# wins, so the more common codec is preferred over a near-identical rare
# one (windows-1251 over mac-cyrillic, for pages whose letters agree).
_CANDIDATE_CODECS = (
    "cp1252", "gb18030", "cp1251", "cp932", "big5hkscs", "euc_jp", "cp949",
    "cp1256", "koi8-r", "cp1250", "iso8859-2", "cp1253", "cp1254", "cp1255",
    "cp1257", "cp874", "cp1258",
)
_TIE = 0.01


def _whole_characters(data: bytes) -> bytes:
    """`data` up to its last byte below 0x40 when it ends in a non-ASCII
    byte: a body cut at max_page_bytes, or a sample cut short, may end
    inside a multi-byte character, and charset_normalizer drops every
    codec that cannot decode the end.  No multi-byte codec of the web uses
    a byte below 0x40 inside a character, save GB18030's rare four-byte ones."""
    if data[-1:] < b"\x80":
        return data
    return data.rstrip(_NOT_BELOW_0X40) or data


_NOT_BELOW_0X40 = bytes(range(0x40, 0x100))
_NON_LATIN_SHAPES = frozenset("gGcChrtkj")


def _reads_as_latin(text: str) -> bool:
    """Whether every letter of `text` is Latin (or it has none)."""
    return not _NON_LATIN_SHAPES & set(text.translate(_SHAPE_TABLE))


def guess_encoding(body: bytes) -> str:
    """Statistical detection for a page that declares no charset."""
    window = body[:DETECTION_WINDOW]
    if b"\x1b" not in window and decode_prefix(window, "utf-8") is not None:
        # ASCII, or UTF-8: legacy multi-byte text is almost never valid
        # UTF-8 by chance.  (ISO-2022-JP is ASCII bytes with escapes.)
        return "utf-8"
    text = page_text_bytes(body)
    if not NON_ASCII_BYTE.search(text):
        # All the non-ASCII bytes sit in markup (attribute values, scripts).
        text = window
    text = _whole_characters(text)
    # The declarations a page holds were read already (charset_labels.py);
    # one the prescan does not reach is ignored, as browsers ignore it.
    matches = charset_normalizer.from_bytes(text, preemptive_behaviour=False)
    best = matches.best()
    codec = codec_for_label(best.encoding) if best else None
    if codec and (is_multi_byte_encoding(best.encoding) or not _reads_as_latin(str(best)[:SCORING_SAMPLE])):
        return best_sibling(body, codec)
    proposals = []
    for match in matches:
        codec = codec_for_label(match.encoding)
        if codec and codec not in proposals:
            proposals.append(codec)
    return best_sibling(body, _most_plausible(text, proposals))


def _most_plausible(text: bytes, proposals: list[str]) -> str:
    """The codec, of the web's common ones and the proposals, whose
    decoding of `text` is the most plausible writing."""
    candidates = [canonical_codec_name(codec) for codec in _CANDIDATE_CODECS]
    candidates += [codec for codec in proposals if codec not in candidates]
    scoring_text = text[:SCORING_SAMPLE]
    decoded = {}
    for codec in candidates:
        text_in_codec = decode_prefix(scoring_text, codec)
        if text_in_codec is not None:
            decoded[codec] = text_in_codec
    if not decoded:
        return proposals[0] if proposals else DEFAULT_ENCODING
    # Candidates keep their order (the tie-break) through both rounds.
    previews = {codec: _score(text_in_codec[:PREVIEW_CHARS]) for codec, text_in_codec in decoded.items()}
    ranked = sorted(previews.values(), reverse=True)
    if len(ranked) > 1 and ranked[0] - ranked[1] >= CLEAR_LEAD:
        return max(previews, key=previews.get)
    cutoff = ranked[:FINALISTS][-1] - _TIE
    best_codec, best_score = None, float("-inf")
    for codec, text_in_codec in decoded.items():
        if previews[codec] < cutoff:
            continue
        score = _score(text_in_codec) if len(text_in_codec) > PREVIEW_CHARS else previews[codec]
        if score > best_score + _TIE:
            best_codec, best_score = codec, score
    return best_codec
