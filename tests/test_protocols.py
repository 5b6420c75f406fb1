"""The stores' line formats: what protocols.py writes, and that it reads it back."""
from __future__ import annotations

import base64
import json
import random

import pytest

from mrcrawl.store.protocols import UndecodedRecordProtocol, Utf8JsonProtocol, decode_value
from mrcrawl.store.records import body_bytes, encode_body, response_body

LINES = Utf8JsonProtocol()
# The format as the standard library writes it: compact, non-ASCII kept.
STDLIB_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
ALPHABET = [chr(code) for code in [*range(0x80), 0x85, 0xA0, 0xE9, 0x2028, 0x2029, 0x4E2D, 0xFEFF, 0xFFFD, 0x1F600]]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24)))


def test_lines_are_the_standard_librarys_compact_utf8_json():
    rng = random.Random(7)
    for _ in range(5000):
        key = random_text(rng)
        value = {"text": random_text(rng), "list": [random_text(rng), 3, None, True, False, -2**40], "": {}}
        line = LINES.write(key, value)
        assert line == f"{STDLIB_ENCODE(key)}\t{STDLIB_ENCODE(value)}".encode("utf-8")
        assert b"\n" not in line and line.count(b"\t") == 1  # one line, one record
        assert LINES.read(line) == (key, value)


def test_cjk_text_is_written_as_itself():
    line = LINES.write("http://新华.cn/", {"title": "新华社北京电"})
    assert "新华社北京电".encode("utf-8") in line and b"\\u" not in line


def test_a_line_that_is_not_utf8_json_is_refused():
    for line in (b'"http://a.test/"\t{"title": "\xff"}', b'"http://a.test/"\t{not json', b'"http://a.test/"'):
        with pytest.raises(ValueError):
            LINES.read(line)


def test_undecoded_records_pass_through_byte_for_byte():
    line = LINES.write("http://a.test/", {"outcome": "fetched", "body": encode_body(b"<p>\x00\xff</p>")})
    protocol = UndecodedRecordProtocol()
    key, value = protocol.read(line)
    assert protocol.write(key, value) == line
    assert decode_value(value) == LINES.read(line)[1]


def test_bodies_round_trip_and_non_canonical_base64_still_decodes():
    rng = random.Random(11)
    for size in (0, 1, 2, 3, 4, 57, 20_000):
        body = bytes(rng.randrange(256) for _ in range(size))
        field = encode_body(body)
        assert field == base64.b64encode(body).decode("ascii")
        assert body_bytes({"body": field}) == body
        # Wrapped at 76 columns, as some tools write it: decoded as the standard library would.
        wrapped = "\n".join(field[i:i + 76] for i in range(0, len(field), 76))
        assert response_body({"archive_body": wrapped, "status": 200}) == base64.b64decode(wrapped) == body
