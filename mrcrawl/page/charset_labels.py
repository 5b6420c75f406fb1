"""Charsets a page declares, and the Python codecs their labels mean.

Labels map to the superset codecs browsers really decode with (WHATWG
Encoding Standard): a page labelled gb2312 is GBK in practice, big5 means
Big5-HKSCS, shift_jis means Windows-31J, so the recorded codec decodes every
byte the page's author could have meant.  A page declares its charset with a
byte order mark, the HTTP Content-Type charset, a `<meta charset>` or
`<meta http-equiv>` found by the HTML standard's prescan, or an XML
declaration; `declared_encoding` reads them in the order browsers do.
"""
from __future__ import annotations

import codecs
import re

DEFAULT_ENCODING = "utf-8"

# Browsers prescan 1024 bytes for a <meta> charset; real pages often put the
# meta tag after a long <head> of scripts, so a little more is read.
PRESCAN_BYTES = 4096

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


def canonical_codec_name(codec: str) -> str:
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
        return canonical_codec_name(codec)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _REFUSED_PYTHON_CODECS:
        return None
    return canonical_codec_name(_PYTHON_SUPERSETS.get(info.name, info.name))


# A few codecs miss characters that browsers decode under the same label:
# Python's euc_jp lacks the NEC row 13 (circled digits) that JIS X 0213 has,
# and big5hkscs lacks the euro sign of Microsoft's Big5.  When the first
# codec cannot decode the body and a sibling can, the sibling is used.
_SIBLING_CODECS = {
    "euc_jp": ("euc_jp", "euc_jis_2004"),
    "euc_jis_2004": ("euc_jp", "euc_jis_2004"),
    "big5hkscs": ("big5hkscs", "cp950"),
}


NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")


def decode_prefix(data: bytes, codec: str) -> str | None:
    """`data` decoded, or None if it holds an invalid sequence.  An
    incomplete final character, as a body cut at max_page_bytes ends
    with, is not an error."""
    try:
        return codecs.getincrementaldecoder(codec)("strict").decode(data, final=False)
    except UnicodeDecodeError:
        return None


def best_sibling(body: bytes, codec: str) -> str:
    siblings = _SIBLING_CODECS.get(codec)
    if not siblings or decode_prefix(body, codec) is not None:
        return codec
    for sibling in siblings:
        if sibling != codec and decode_prefix(body, sibling) is not None:
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
    return best_sibling(body, codec)


def declared_encoding(body: bytes, content_type: str | None) -> str | None:
    """The codec the page declares, or None when it declares none usable.

    Order: BOM, HTTP Content-Type charset, <meta> prescan of the first
    bytes, then an XML declaration.  A BOM is checked first because browsers
    let it override the header.  A label that maps to no usable codec falls
    through to the next step.  The header is obeyed, as browsers obey it;
    but a <meta> or XML declaration of a legacy charset on a body that has
    non-ASCII bytes and is valid UTF-8 throughout (a character cut at the
    very end aside) is a template's leftover: the page is UTF-8.
    """
    bom = bom_encoding(body)
    if bom:
        return bom
    codec = _usable_declared_codec(charset_from_content_type(content_type), body)
    if codec:
        return codec
    head = body[:PRESCAN_BYTES]
    codec = _usable_declared_codec(meta_charset_label(head), body) or _usable_declared_codec(
        xml_declaration_label(head), body
    )
    if (codec and not codec.startswith("utf") and NON_ASCII_BYTE.search(body)
            and decode_prefix(body, "utf-8") is not None):
        # Legacy text with non-ASCII bytes is almost never valid UTF-8 by
        # chance; a body cut inside a character is still valid up to it.
        return "utf-8"
    return codec

