"""A generated test web served over real HTTP on loopback, and its oracle.

- web.py: `generate_web()` builds the deterministic model of every page
  (model.py: the dataclasses; sites.py: what each host contains).
- server.py: `TestWebServer` / `start_test_web()` serve it on 127.0.0.2, .3,
  ... and log every request.
- oracle.py: `expected_layers()` says what a correct crawl of it records,
  and `expected_traps_for_config()` which links its trap guards catch.
- faults.py: `FaultServer`, answers that go wrong below HTTP (a drip, a
  connection closed or reset mid-answer, a body that never ends or runs past
  its length, a decompression bomb, too many headers ...), served from a raw
  socket.
- pagefaults.py: `PageFaultServer`, well-formed answers whose pages go wrong
  inside (100,000 nested elements, 10 MB on one line, NUL bytes, invalid
  bytes in every charset, unknown charset labels, 50,000 links, a <base> of
  another scheme, a meta refresh loop), served beside the test web.
- announcefaults.py: `announce_fault_server()`, feeds and sitemaps that go
  wrong (truncated, a wrong Content-Type, 10 MB of entries, an index listing
  itself, indexes nested 20 deep, a billion laughs, an external entity
  naming a local file), served by a PageFaultServer for a crawl to seed.
- daily.py: `DailyWeb`, a news web that changes day by day (new, updated,
  deleted and failing articles, and on some sites the feeds and sitemaps
  that announce them), for recrawls; `start_daily_web()` serves it
  one day at a time, and its methods are the ground truth of each day.

    with start_test_web(seed=1) as server:
        config = server.web.crawl_config()
        expected = expected_layers_for_config(server.web, config, server.seeds, depth=4)
"""

from .daily import DailySpec, DailyWeb, start_daily_web
from .model import AGENT_TOKEN, USER_AGENT, Host, Page, Robots, RobotsGroup, Web
from .oracle import (
    expected_duplicates,
    expected_layers,
    expected_layers_for_config,
    expected_payload_duplicates,
    expected_traps_for_config,
    outcome_counts,
)
from .server import LogEntry, TestWebServer, start_test_web
from .web import generate_web, seeds

__all__ = ["AGENT_TOKEN", "USER_AGENT", "DailySpec", "DailyWeb", "Host", "LogEntry", "Page", "Robots",
           "RobotsGroup", "TestWebServer", "Web", "expected_duplicates", "expected_layers", "expected_layers_for_config",
           "expected_payload_duplicates", "expected_traps_for_config", "generate_web", "outcome_counts", "seeds", "start_daily_web",
           "start_test_web"]
