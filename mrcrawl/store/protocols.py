"""Line formats of the stores, as mrjob protocol classes.

mrjob only needs `read(line) -> (key, value)` and `write(key, value) -> bytes`,
so these classes do not import mrjob.  We write UTF-8 JSON rather than use
mrjob's JSONProtocol because the standard JSON backend writes CJK text as
`\\uXXXX` escapes (about twice the bytes), and mrjob silently switches to
ujson when it is importable, which changes the output bytes.  JSON never
contains a raw tab or newline, so a line is always one record.

The JSON is read and written by orjson, straight from and to UTF-8 bytes:
every job reads or writes doc records of tens of kilobytes, and the
standard library's scan of each string was a tenth of a job's time.  Its
output is compact JSON with non-ASCII characters as they are: the same
bytes as the standard library's encoder with ensure_ascii=False and
separators (",", ":") (tests/test_protocols.py checks it).
"""
from __future__ import annotations

import orjson

_decode = orjson.loads
_encode = orjson.dumps


class Utf8JsonProtocol:
    """`JSON key TAB JSON value` lines, in UTF-8: the doc and out stores."""

    def read(self, line: bytes):
        key, value = line.split(b"\t", 1)
        return _decode(key), _decode(value)

    def write(self, key, value) -> bytes:
        return _encode(key) + b"\t" + _encode(value)


class UndecodedRecordProtocol:
    """The same lines as Utf8JsonProtocol, passed through undecoded as (key
    bytes, value bytes), for a job that moves whole records and looks inside
    few of them (Merge).  A doc record is mostly its base64 body; decoding
    and re-encoding it at every stage was most of that job's time.  Equal
    keys are equal bytes, because every store is written by the one encoder
    above."""

    def read(self, line: bytes):
        key, value = line.split(b"\t", 1)
        return key, value

    def write(self, key: bytes, value: bytes) -> bytes:
        return key + b"\t" + value


class LineChunkProtocol:
    """Output only: each value is a chunk of whole store lines, joined by
    newlines and without the last one, written as it is (the key is
    ignored).  For a job that passes most of what it reads through in large
    slices, which one write each costs far less than one record each
    (DbUpdate)."""

    def read(self, line: bytes):
        return None, line

    def write(self, key, value: bytes) -> bytes:
        return value


def decode_value(value: bytes):
    """The value of an UndecodedRecordProtocol line."""
    return _decode(value)


def encode_value(value) -> bytes:
    """A value as an UndecodedRecordProtocol line holds it."""
    return _encode(value)


class TextLineProtocol:
    """`key TAB text` with both written as they are: the XML store."""

    def read(self, line: bytes):
        key, value = line.decode("utf-8").split("\t", 1)
        return key, value

    def write(self, key, value) -> bytes:
        return f"{key}\t{value}".encode("utf-8")
