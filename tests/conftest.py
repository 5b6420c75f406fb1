import pytest

from mrcrawl.testweb import start_test_web


@pytest.fixture
def web_server():
    """A fresh test web per test: its flaky pages fail only their first request."""
    with start_test_web(seed=1) as server:
        yield server


# The longest test files, longest first, run before all others.  xdist hands
# each process whole files in the order they were collected, and a file
# that takes minutes handed out last would run alone at the end while the
# other processes sat idle (the Spark cluster's crawl takes about 7).
LONGEST_FIRST = ("test_spark_cluster.py", "test_bench.py", "test_bench_week.py", "test_kill_anywhere.py")


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)  # stable: each file's tests keep their order, and stay together
