import pytest

from mrcrawl.testweb import start_test_web


@pytest.fixture
def web_server():
    """A fresh test web per test: its flaky pages fail only their first request."""
    with start_test_web(seed=1) as server:
        yield server
