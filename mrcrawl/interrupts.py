"""Ctrl-C during a crawl: remembered, so that the step it broke is known to
have failed because of it, and raised again where Python could not raise it.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

# Set by Ctrl-C, which the driver checks after every step and at a failed one.
INTERRUPTED = threading.Event()
# How long after a Ctrl-C lost in a finalizer it is sent again, from another thread.
RESEND_SECONDS = 0.05


@contextlib.contextmanager
def interrupts_remembered():
    """Within this block, Ctrl-C sets INTERRUPTED as well as raising KeyboardInterrupt.

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
        INTERRUPTED.set()
        raise KeyboardInterrupt

    def send_again():
        if inside.is_set():
            os.kill(os.getpid(), signal.SIGINT)

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
        except KeyboardInterrupt:  # another Ctrl-C, inside this hook
            send_again_later()

    INTERRUPTED.clear()
    previous_handler = signal.signal(signal.SIGINT, interrupt)
    previous_hook, sys.unraisablehook = sys.unraisablehook, raise_again
    inside.set()
    try:
        yield
    finally:
        inside.clear()
        signal.signal(signal.SIGINT, previous_handler)
        sys.unraisablehook = previous_hook
