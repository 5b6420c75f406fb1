"""Line formats of the stores, as mrjob protocol classes.

mrjob only needs `read(line) -> (key, value)` and `write(key, value) -> bytes`,
so these classes do not import mrjob.  We write UTF-8 JSON rather than use
mrjob's JSONProtocol because the standard JSON backend writes CJK text as
`\\uXXXX` escapes (about twice the bytes), and mrjob silently switches to
ujson when it is importable, which changes the output bytes.  Neither JSON
form ever contains a raw tab or newline, so a line is always one record.
"""
from __future__ import annotations

import json

_decode = json.JSONDecoder().decode
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Utf8JsonProtocol:
    """`JSON key TAB JSON value` lines, in UTF-8: the doc and out stores."""

    def read(self, line: bytes):
        key, value = line.decode("utf-8").split("\t", 1)
        return _decode(key), _decode(value)

    def write(self, key, value) -> bytes:
        return f"{_encode(key)}\t{_encode(value)}".encode("utf-8")


class UrlLineProtocol:
    """One URL per line, no key: the frontier store `in/`."""

    def read(self, line: bytes):
        return None, line.decode("utf-8").strip()

    def write(self, key, value) -> bytes:
        return value.encode("utf-8")


class TextLineProtocol:
    """`key TAB text` with both written as they are: the XML store."""

    def read(self, line: bytes):
        key, value = line.decode("utf-8").split("\t", 1)
        return key, value

    def write(self, key, value) -> bytes:
        return f"{key}\t{value}".encode("utf-8")
