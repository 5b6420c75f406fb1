"""The crawl report as a person sees it: two days of crawls of the daily test
web on one crawl db, and their report opened in headless Chromium.

The README's screenshot of the report is made by this file:

    .venv/bin/python tests/report_support.py docs/report.png
"""
from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, it finds crawl_support beside it

from crawl_support import crawl, write_daily_inputs  # noqa: E402

from mrcrawl.testweb.daily import DailySpec, start_daily_web  # noqa: E402

# Debian's chromium and chromium-driver packages (.ci/run installs them).
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
DAYS = (1, 2)
DEPTH = 3
# Articles are revisited the next day: day 2 has 304s, 404s (deleted) and new articles.
REVISIT = {"first_days": 1}
WINDOW_WIDTH = 1100


@dataclass
class TwoDays:
    """What the two runs left: a crawl directory per day, the shared db, what each exited with."""

    outputs: dict[int, Path]
    db: Path
    statuses: dict[int, int]
    seeds: Path
    conf: Path
    config: dict
    web: object  # the DailyWeb, for its ground truth


def crawl_two_days(directory: Path) -> TwoDays:
    """Crawl the daily web as it is on day 1 then day 2, each as of its date
    (--now), into its own directory, on one --db."""
    outputs, statuses = {}, {}
    db = directory / "db"
    with start_daily_web(DailySpec()) as server:
        seeds, conf, config = write_daily_inputs(server, directory, revisit=REVISIT, retries=0)
        for day in DAYS:
            server.set_day(day)
            outputs[day] = directory / f"day{day}"
            statuses[day] = crawl(seeds, conf, outputs[day], DEPTH, "inline", "--db", str(db),
                                  "--now", server.web.date_iso(day))
        return TwoDays(outputs, db, statuses, seeds, conf, config, server.web)


def start_browser() -> webdriver.Chrome:
    """Headless Chromium that keeps every console message; it fails, never
    skips, when Chromium or its driver is missing."""
    for program in (CHROMIUM, CHROMEDRIVER):
        if not Path(program).exists():
            raise FileNotFoundError(f"{program} is missing: install Debian's chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", f"--window-size={WINDOW_WIDTH},900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def screenshot(browser: webdriver.Chrome, page: Path, png: Path) -> None:
    """The whole page, top to bottom, as a PNG."""
    browser.get(page.resolve().as_uri())
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(WINDOW_WIDTH, height + 100)
    png.parent.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(png))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} PNG")
    with tempfile.TemporaryDirectory(prefix="mrcrawl-report-") as scratch:
        days = crawl_two_days(Path(scratch))
        browser = start_browser()
        try:
            screenshot(browser, days.outputs[DAYS[-1]] / "report.html", Path(sys.argv[1]))
        finally:
            browser.quit()
    print(sys.argv[1])
