"""Which charset decodes a page, and the one function that decodes it.

A doc record keeps the exact body bytes plus `encoding`, the Python codec
that turns them into the page's text.  `detect_encoding` picks that codec
when the page is fetched; `decode_page` is what every job calls to get the
text back, so all of them see the same characters.

The choice follows browsers (WHATWG Encoding and HTML standards):
a byte order mark, then the HTTP Content-Type charset, then a
`<meta charset>` / `<meta http-equiv>` found by the standard's prescan, then
statistical detection.  A BOM is checked first because browsers let it
override the header: a page that starts with one is in that encoding
whatever the server says.  Labels map to the superset codecs browsers
really decode with (a page labelled gb2312 is GBK in practice, big5 means
Big5-HKSCS, shift_jis means Windows-31J), so the recorded codec decodes
every byte the page's author could have meant.
"""
from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter

import charset_normalizer
from charset_normalizer.constant import FREQUENCIES

from mrcrawl.records import body_bytes

DEFAULT_ENCODING = "utf-8"

# How much of the body each step looks at.  Browsers prescan 1024 bytes;
# real pages often put the meta tag after a long <head> of scripts, so
# a little more is read.
PRESCAN_BYTES = 4096
# Statistical detection: markup stripped from this much of the body...
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

# --------------------------------------------------------------------------
# Labels -> codecs

# The WHATWG Encoding Standard's labels, grouped by the Python codec that
# decodes what a browser decodes for them.
_WHATWG_LABELS = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "cp866": "866 cp866 csibm866 ibm866",
    "iso8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
    "iso_8859-2:1987 l2 latin2",
    "iso8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
    "iso_8859-3:1988 l3 latin3",
    "iso8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
    "iso_8859-4:1988 l4 latin4",
    "iso8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
    "iso_8859-5 iso_8859-5:1988",
    "iso8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 "
    "iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 "
    "iso_8859-6:1987",
    "iso8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
    "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    "iso8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
    "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual "
    "csiso88598i iso-8859-8-i logical",
    "iso8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso8859-13": "iso-8859-13 iso8859-13 iso885913",
    "iso8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8-u": "koi8-ru koi8-u",
    "mac-roman": "csmacintosh mac macintosh x-mac-roman",
    "cp874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "cp1250": "cp1250 windows-1250 x-cp1250",
    "cp1251": "cp1251 windows-1251 x-cp1251",
    # Browsers decode Latin-1 and ASCII labels as windows-1252.
    "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 "
    "iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii "
    "windows-1252 x-cp1252",
    "cp1253": "cp1253 windows-1253 x-cp1253",
    "cp1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
    "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254",
    "cp1255": "cp1255 windows-1255 x-cp1255",
    "cp1256": "cp1256 windows-1256 x-cp1256",
    "cp1257": "cp1257 windows-1257 x-cp1257",
    "cp1258": "cp1258 windows-1258 x-cp1258",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    # GB2312 and GBK pages use GBK's extra characters; GB18030 is a superset
    # of both and is what browsers decode gbk with.
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk "
    "iso-ir-58 x-gbk gb18030",
    "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    # Includes half-width katakana (ESC ( I), as the browsers' decoder does.
    "iso2022_jp_ext": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 "
    "ks_c_5601-1989 ksc5601 ksc_5601 windows-949",
    "utf-16-be": "unicodefffe utf-16be",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
}
# Labels browsers decode as U+FFFD (the "replacement" encoding, a guard
# against encodings that smuggle ASCII), or with a decoder Python lacks.
_UNDECODABLE_LABELS = frozenset(
    "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr replacement "
    "x-user-defined".split()
)
LABEL_TO_CODEC = {
    label: codec for codec, labels in _WHATWG_LABELS.items() for label in labels.split()
}

# Labels outside the WHATWG list are looked up in Python's codec registry;
# these canonical Python names are then widened to the superset browsers use.
_PYTHON_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "utf-8-sig": "utf-8",
    "utf-16": "utf-16-le",
}
# Python text codecs no browser decodes a web page with: UTF-7 and the
# escape codecs would turn ASCII into markup, the rest are not page encodings.
_REFUSED_PYTHON_CODECS = frozenset(
    "utf-7 idna punycode raw-unicode-escape unicode-escape undefined "
    "utf-32 utf-32-be utf-32-le mbcs oem".split()
)


def _canonical_codec_name(codec: str) -> str:
    return codecs.lookup(codec).name


def codec_for_label(label: str | None) -> str | None:
    """The Python codec that decodes what browsers decode for `label`.

    WHATWG labels map to superset codecs (gb2312 -> gb18030, big5 ->
    big5hkscs, shift_jis -> cp932, euc-kr -> cp949, iso-8859-1 -> cp1252...).
    Other names Python knows as text codecs are accepted and widened the
    same way.  None for an unknown label.
    """
    if not label:
        return None
    name = label.strip().strip("\"'").strip().lower()
    if not name or name in _UNDECODABLE_LABELS:
        return None
    codec = LABEL_TO_CODEC.get(name)
    if codec is not None:
        return _canonical_codec_name(codec)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _REFUSED_PYTHON_CODECS:
        return None
    return _canonical_codec_name(_PYTHON_SUPERSETS.get(info.name, info.name))


# A few codecs miss characters that browsers decode under the same label:
# Python's euc_jp lacks the NEC row 13 (circled digits) that JIS X 0213 has,
# and big5hkscs lacks the euro sign of Microsoft's Big5.  When the first
# codec cannot decode the body and a sibling can, the sibling is used.
_SIBLING_CODECS = {
    "euc_jp": ("euc_jp", "euc_jis_2004"),
    "euc_jis_2004": ("euc_jp", "euc_jis_2004"),
    "big5hkscs": ("big5hkscs", "cp950"),
}


def _decode_prefix(data: bytes, codec: str) -> str | None:
    """`data` decoded, or None if it holds an invalid sequence.  An
    incomplete final character, as a body cut at max_page_bytes ends
    with, is not an error."""
    try:
        return codecs.getincrementaldecoder(codec)("strict").decode(data, final=False)
    except UnicodeDecodeError:
        return None


def _best_sibling(body: bytes, codec: str) -> str:
    siblings = _SIBLING_CODECS.get(codec)
    if not siblings or _decode_prefix(body, codec) is not None:
        return codec
    for sibling in siblings:
        if sibling != codec and _decode_prefix(body, sibling) is not None:
            return sibling
    return codec


# --------------------------------------------------------------------------
# Declared charsets: HTTP header, BOM, meta prescan

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)


def bom_encoding(body: bytes) -> str | None:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec
    return None


_CONTENT_TYPE_CHARSET = re.compile(
    r"""[;\s]charset\s*=\s*("[^"]*"|'[^']*'|[^;\s"']+)""", re.IGNORECASE
)


def charset_from_content_type(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type value, unquoted, or None."""
    if not content_type:
        return None
    match = _CONTENT_TYPE_CHARSET.search(";" + content_type)
    if not match:
        return None
    return match.group(1).strip("\"'").strip() or None


_WHITESPACE = b"\t\n\x0c\r "
_META_CHARSET = re.compile(rb"charset[\t\n\x0c\r ]*=", re.IGNORECASE)


_UNQUOTED_VALUE = re.compile(rb"[^\t\n\x0c\r ;]*")


def _charset_from_meta_content(content: bytes) -> bytes | None:
    """WHATWG "extracting a character encoding from a meta element":
    the value after the first "charset" that is followed by "="."""
    match = _META_CHARSET.search(content)
    if not match:
        return None
    rest = content[match.end() :].lstrip(_WHITESPACE)
    quote = rest[:1]
    if quote in (b'"', b"'"):
        end = rest.find(quote, 1)
        return rest[1:end] if end > 0 else None
    return _UNQUOTED_VALUE.match(rest).group(0) or None


def _get_attribute(data: bytes, position: int) -> tuple[bytes, bytes, int] | None:
    """WHATWG prescan "get an attribute": (name, value, new position) or None
    at the end of the tag.  `data` is lower-cased already."""
    length = len(data)
    while position < length and (data[position] in _WHITESPACE or data[position] == 0x2F):
        position += 1
    if position >= length or data[position] == 0x3E:  # ">"
        return None
    name_start = position
    # The name runs to "=", whitespace, "/" or ">"; its first character may be "=".
    position += 1
    while position < length and data[position] not in b"=\t\n\x0c\r />":
        position += 1
    name = data[name_start:position]
    while position < length and data[position] in _WHITESPACE:
        position += 1
    if position >= length or data[position] != 0x3D:  # no "=": empty value
        return name, b"", position
    position += 1
    while position < length and data[position] in _WHITESPACE:
        position += 1
    if position >= length:
        return name, b"", position
    quote = data[position]
    if quote in (0x22, 0x27):
        end = data.find(bytes([quote]), position + 1)
        if end < 0:
            return name, data[position + 1 :], length
        return name, data[position + 1 : end], end + 1
    value_start = position
    while position < length and data[position] not in b"\t\n\x0c\r >":
        position += 1
    return name, data[value_start:position], position


def _starts_tag(data: bytes, position: int) -> bool:
    """"<" then an optional "/" then an ASCII letter (data is lower-cased)."""
    following = data[position + 1 : position + 3]
    if following.startswith(b"/"):
        following = following[1:]
    return bool(following) and 0x61 <= following[0] <= 0x7A


def meta_charset_label(head: bytes) -> str | None:
    """The charset label a WHATWG prescan finds in `head`, or None.

    Skips comments and the attributes of other tags as browsers do, and
    handles both `<meta charset=...>` and `<meta http-equiv=Content-Type
    content="...; charset=...">`.
    """
    data = head.lower()  # labels and names are ASCII case-insensitive
    length = len(data)
    position = 0
    while position < length:
        tag_start = data.find(b"<", position)
        if tag_start < 0:
            return None
        position = tag_start
        if data.startswith(b"<!--", position):
            end = data.find(b"-->", position + 2)
            if end < 0:
                return None
            position = end + 3
        elif data.startswith(b"<meta", position) and (
            position + 5 < length and data[position + 5] in b"\t\n\x0c\r /"
        ):
            position += 5
            label, position = _meta_label(data, position)
            if label:
                return label
        elif _starts_tag(data, position):
            # Another tag: skip its attributes so that "<meta" inside one
            # of their values is not taken for a tag.
            while position < length and data[position] not in b"\t\n\x0c\r >":
                position += 1
            while True:
                attribute = _get_attribute(data, position)
                if attribute is None:
                    break
                position = attribute[2]
            position += 1
        elif data.startswith((b"<!", b"</", b"<?"), position):
            end = data.find(b">", position)
            position = length if end < 0 else end + 1
        else:
            position += 1
    return None


def _meta_label(data: bytes, position: int) -> tuple[str | None, int]:
    """Reads one <meta>'s attributes; returns (label or None, position)."""
    seen: set[bytes] = set()
    got_pragma = False
    need_pragma: bool | None = None
    charset: bytes | None = None
    while True:
        attribute = _get_attribute(data, position)
        if attribute is None:
            break
        name, value, position = attribute
        if name in seen:
            continue
        seen.add(name)
        if name == b"http-equiv" and value == b"content-type":
            got_pragma = True
        elif name == b"content" and charset is None:
            found = _charset_from_meta_content(value)
            if found is not None:
                charset, need_pragma = found, True
        elif name == b"charset":
            charset, need_pragma = value, False
    if need_pragma is None or (need_pragma and not got_pragma) or not charset:
        return None, position
    label = charset.decode("ascii", "replace").strip()
    # WHATWG: a document that can be prescanned is ASCII-compatible, so a
    # UTF-16 label in it is wrong and means UTF-8.
    if label in ("utf-16", "utf-16be", "utf-16le", "unicode", "ucs-2", "unicodefffe"):
        label = "utf-8"
    elif label == "x-user-defined":
        label = "windows-1252"
    return label, position


_XML_DECLARATION = re.compile(
    rb"""<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']"""
)


def xml_declaration_label(head: bytes) -> str | None:
    """The encoding of an XML declaration at the very start (XHTML pages)."""
    match = _XML_DECLARATION.match(head.lstrip())
    return match.group(1).decode("ascii") if match else None


def _usable_declared_codec(label: str | None, body: bytes) -> str | None:
    codec = codec_for_label(label)
    if codec is None:
        return None
    if codec.startswith("utf-16") and b"\x00" not in body[:1024]:
        # A UTF-16 page without a single NUL byte in its first kilobyte
        # is not UTF-16: the label is a server misconfiguration.
        return None
    return _best_sibling(body, codec)


# --------------------------------------------------------------------------
# Statistical detection


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
_NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")
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


def guess_encoding(body: bytes) -> str:
    """Statistical detection for a page that declares no charset."""
    window = body[:DETECTION_WINDOW]
    if not _NON_ASCII_BYTE.search(window):
        return DEFAULT_ENCODING
    if _decode_prefix(window, "utf-8") is not None:
        # Legacy multi-byte text is almost never valid UTF-8 by chance.
        return "utf-8"
    text = page_text_bytes(body)
    if not _NON_ASCII_BYTE.search(text):
        # All the non-ASCII bytes sit in markup (attribute values, scripts).
        text = window
    proposals = []
    for match in charset_normalizer.from_bytes(text):
        codec = codec_for_label(match.encoding)
        if codec and codec not in proposals:
            proposals.append(codec)
    candidates = [_canonical_codec_name(codec) for codec in _CANDIDATE_CODECS]
    candidates += [codec for codec in proposals if codec not in candidates]
    scoring_text = text[:SCORING_SAMPLE]
    decoded = {}
    for codec in candidates:
        text_in_codec = _decode_prefix(scoring_text, codec)
        if text_in_codec is not None:
            decoded[codec] = text_in_codec
    if not decoded:
        return proposals[0] if proposals else DEFAULT_ENCODING
    # Candidates keep their order (the tie-break) through both rounds.
    previews = {codec: _score(text_in_codec[:PREVIEW_CHARS]) for codec, text_in_codec in decoded.items()}
    ranked = sorted(previews.values(), reverse=True)
    if len(ranked) > 1 and ranked[0] - ranked[1] >= CLEAR_LEAD:
        return _best_sibling(body, max(previews, key=previews.get))
    cutoff = ranked[:FINALISTS][-1] - _TIE
    best_codec, best_score = None, float("-inf")
    for codec, text_in_codec in decoded.items():
        if previews[codec] < cutoff:
            continue
        score = _score(text_in_codec) if len(text_in_codec) > PREVIEW_CHARS else previews[codec]
        if score > best_score + _TIE:
            best_codec, best_score = codec, score
    return _best_sibling(body, best_codec)


# --------------------------------------------------------------------------
# The public entry points


def detect_encoding(body: bytes, content_type: str | None) -> str:
    """The Python codec that decodes this page, as a browser would choose it.

    Order: BOM, HTTP Content-Type charset, <meta> prescan of the first
    bytes (then an XML declaration), statistical detection, UTF-8.  A label
    that maps to no usable codec falls through to the next step.
    """
    bom = bom_encoding(body)
    if bom:
        return bom
    codec = _usable_declared_codec(charset_from_content_type(content_type), body)
    if codec:
        return codec
    head = body[:PRESCAN_BYTES]
    codec = _usable_declared_codec(meta_charset_label(head), body)
    if codec:
        return codec
    codec = _usable_declared_codec(xml_declaration_label(head), body)
    if codec:
        return codec
    return guess_encoding(body)


def decode_body(body: bytes, encoding: str | None) -> str:
    """The body's text in `encoding` (bad bytes become U+FFFD), BOM removed.

    `encoding` is a Python codec or a WHATWG label; labels are widened as
    browsers widen them ("iso-8859-1" decodes as windows-1252).  A BOM
    decides, as it did in detect_encoding.
    """
    codec = bom_encoding(body) or codec_for_label(encoding) or DEFAULT_ENCODING
    text = body.decode(codec, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def decode_page(doc: dict, body: bytes | None = None) -> str:
    """The text of a doc record's page: THE decoder every job uses.

    Records written before `encoding` was known (or without it) are
    detected from their bytes and Content-Type here, the same way.
    `body` spares decoding the base64 again when the caller has the bytes.
    """
    if body is None:
        body = body_bytes(doc)
    encoding = doc.get("encoding") or detect_encoding(body, doc.get("content_type"))
    return decode_body(body, encoding)
