"""Ctrl-C, SIGTERM and SIGHUP during a crawl: remembered, so that the step
one broke is known to have failed because of it, and raised again where
Python could not raise it.

All three stop a crawl the same way: Ctrl-C (SIGINT) from a terminal;
SIGTERM from `kill`, systemd, `timeout` or a scheduler ending its job; and
SIGHUP when the terminal closes.  The run's exit status is 128 + the
signal's number, as shells report a process the signal ended.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

# The signals that stop a crawl, and how its last line names each.
STOPPING_SIGNALS = {
    signal.SIGINT: "Ctrl-C (SIGINT)",
    signal.SIGTERM: "SIGTERM",
    signal.SIGHUP: "SIGHUP",
}
# How long after a stopping signal lost in a finalizer it is sent again, from another thread.
RESEND_SECONDS = 0.05


class Interruption:
    """Whether a stopping signal has come, and which came first."""

    def __init__(self):
        self._came = threading.Event()
        self.signal = signal.SIGINT

    def set(self, signum: int) -> None:
        if not self._came.is_set():
            self.signal = signal.Signals(signum)
            self._came.set()

    def is_set(self) -> bool:
        return self._came.is_set()

    def clear(self) -> None:
        self._came.clear()
        self.signal = signal.SIGINT

    @property
    def name(self) -> str:
        return STOPPING_SIGNALS[self.signal]

    @property
    def exit_status(self) -> int:
        return stopped_status(self.signal)


# Set by a stopping signal, which the driver checks after every step and at a failed one.
INTERRUPTED = Interruption()


def stopped_status(signum: int) -> int:
    """The exit status of a run that `signum` stopped."""
    return 128 + signum


@contextlib.contextmanager
def interrupts_remembered():
    """Within this block, a stopping signal sets INTERRUPTED and raises KeyboardInterrupt.

    A signal this process was started ignoring stays ignored: under
    `nohup`, a closed terminal must not stop the crawl.

    Python raises KeyboardInterrupt wherever the main thread is.  Inside a
    weakref callback, a __del__ or an at-fork hook it cannot propagate:
    Python prints it as "Exception ignored" and drops it.  Here such an
    interrupt is not printed but sent again, to be raised where it can be.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals
        return
    inside = threading.Event()

    def interrupt(signum, frame):
        INTERRUPTED.set(signum)
        raise KeyboardInterrupt

    def send_again():
        if inside.is_set():
            os.kill(os.getpid(), INTERRUPTED.signal)

    def send_again_later():
        # Sent from this hook, the signal's handler would run before the
        # hook returns and raise inside it, which Python prints too.
        resend = threading.Timer(RESEND_SECONDS, send_again)
        resend.daemon = True
        resend.start()

    def raise_again(unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous_hook(unraisable)
            return
        try:
            send_again_later()
        except KeyboardInterrupt:  # another stopping signal, inside this hook
            send_again_later()

    INTERRUPTED.clear()
    previous_handlers = {signum: signal.signal(signum, interrupt) for signum in STOPPING_SIGNALS
                         if signal.getsignal(signum) is not signal.SIG_IGN}
    previous_hook, sys.unraisablehook = sys.unraisablehook, raise_again
    inside.set()
    try:
        yield
    finally:
        inside.clear()
        for signum, handler in previous_handlers.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: not set from Python
        sys.unraisablehook = previous_hook
