"""A generated test web served over real HTTP on loopback, and its oracle.

- web.py: `generate_web()` builds the deterministic model of every page
  (model.py: the dataclasses; sites.py: what each host contains).
- server.py: `TestWebServer` / `start_test_web()` serve it on 127.0.0.2, .3,
  ... and log every request.
- oracle.py: `expected_layers()` says what a correct crawl of it records.

    with start_test_web(seed=1) as server:
        config = server.web.crawl_config()
        expected = expected_layers_for_config(server.web, config, server.seeds, depth=4)
"""

from .model import AGENT_TOKEN, USER_AGENT, Host, Page, Robots, RobotsGroup, Web
from .oracle import expected_layers, expected_layers_for_config, outcome_counts
from .server import LogEntry, TestWebServer, start_test_web
from .web import generate_web, seeds

__all__ = ["AGENT_TOKEN", "USER_AGENT", "Host", "LogEntry", "Page", "Robots", "RobotsGroup",
           "TestWebServer", "Web", "expected_layers", "expected_layers_for_config", "generate_web",
           "outcome_counts", "seeds", "start_test_web"]
