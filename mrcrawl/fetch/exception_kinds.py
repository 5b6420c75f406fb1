"""The kind of failure (store/failures.py) an exception of one request is.

The fetcher catches what urllib3 and the sockets under it raise, and sorts
it here by class, and by the class of the exception it wraps: urllib3
wraps what went wrong below it (a ProtocolError holds the connection's
ConnectionResetError, a ProxyError what failed on the way to the proxy, a
NewConnectionError the connect's OSError as its cause), and the wrapped
exception is what tells a reset from a close or from a broken answer.
"""
from __future__ import annotations

import http.client
import ssl

from urllib3.exceptions import (
    DecodeError,
    IncompleteRead,
    InvalidChunkLength,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    SSLError,
    TimeoutError as Urllib3TimeoutError,
)

from mrcrawl.fetch.connection import HeadersCutOffError, ResponseTimeLimitError
from mrcrawl.store.failures import FailureKind


def exception_kind(error: BaseException) -> FailureKind:
    """The kind of failure `error`, raised by one request (connect, send,
    or reading the answer), is."""
    if isinstance(error, ProxyError):
        return _proxy_kind(error.original_error)
    if isinstance(error, NameResolutionError):
        return FailureKind.DNS
    if isinstance(error, NewConnectionError):  # before the timeouts: urllib3 makes it a ConnectTimeoutError
        return FailureKind.REFUSED if isinstance(error.__cause__, ConnectionRefusedError) else FailureKind.CONNECT
    if isinstance(error, ResponseTimeLimitError):  # before the timeouts: it is one, of the whole answer
        return FailureKind.TIME_LIMIT
    if isinstance(error, (SSLError, ssl.SSLError, ssl.CertificateError)):
        return FailureKind.TLS
    if isinstance(error, DecodeError):
        return FailureKind.BAD_ENCODING
    if isinstance(error, HeadersCutOffError):
        return FailureKind.CLOSED
    if isinstance(error, ProtocolError):
        wrapped = _wrapped(error)
        # urllib3 raises a ProtocolError that wraps nothing where a chunked
        # body's next chunk-size line is missing, as it is when the server
        # closes the connection before the last chunk (or, far rarer, where
        # that line is too long).
        return FailureKind.CLOSED if wrapped is None else _connection_kind(wrapped)
    return _connection_kind(error)


def _connection_kind(error: BaseException) -> FailureKind:
    """The kind of what happened on the connection: an exception of the
    socket or of http.client, as raised or as urllib3 wrapped it."""
    # RemoteDisconnected is both a ConnectionResetError and a BadStatusLine:
    # the server closed the connection where the answer should start.
    if isinstance(error, http.client.RemoteDisconnected):
        return FailureKind.CLOSED
    if isinstance(error, InvalidChunkLength):  # an IncompleteRead, but what it read is no chunk size
        return FailureKind.PROTOCOL
    if isinstance(error, (IncompleteRead, http.client.IncompleteRead)):
        return FailureKind.CLOSED
    if isinstance(error, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
        return FailureKind.RESET
    if isinstance(error, http.client.HTTPException):  # a bad status line, too many or too long header lines
        return FailureKind.PROTOCOL
    if isinstance(error, (Urllib3TimeoutError, TimeoutError)):  # connect or read timeout
        return FailureKind.TIMEOUT
    return FailureKind.OTHER


def _proxy_kind(error: BaseException) -> FailureKind:
    """The kind of what urllib3 calls a failure to reach the proxy: its
    name, its port, or its answer (a CONNECT it refused, a hang-up)."""
    if isinstance(error, NameResolutionError):
        return FailureKind.PROXY_DNS
    if isinstance(error, NewConnectionError) and isinstance(error.__cause__, ConnectionRefusedError):
        return FailureKind.PROXY_REFUSED
    return FailureKind.PROXY


def _wrapped(error: ProtocolError) -> BaseException | None:
    """What a ProtocolError wraps: urllib3 passes it as the second argument."""
    return next((arg for arg in error.args[1:] if isinstance(arg, BaseException)), None)
