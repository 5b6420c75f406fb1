"""The report as one self-contained HTML page: inline CSS and SVG, no script.

Its Content-Security-Policy allows nothing to be loaded or run, so even a
page that escaped something wrongly could not reach the network or run a
script; and every text from the crawl is escaped all the same.
"""
from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timezone
from html import escape

from mrcrawl.frontier.crawldb import RUN_COUNTS, URLS_ADDED, URLS_FETCHED, URLS_GONE, URLS_NOT_MODIFIED
from mrcrawl.frontier.score_spread import bucket_label
from mrcrawl.report.charts import columns, number, stacked_bars
from mrcrawl.report.figures import (LAYER_STEPS, TEXT_LENGTH_BINS, CrawlFigures, LayerFigures, StepCount,
                                    TaskLoad, below_delay)
from mrcrawl.store.records import DEFERRALS, FETCHED, NOT_MODIFIED, OUTCOMES, TRAP_GUARDS

# By outcome, in the order of OUTCOMES: fetched, not_html, not_modified,
# redirect, http_error, network_error, robots_denied, blocked.
OUTCOME_COLORS = dict(zip(OUTCOMES, ("#2e7d32", "#4db6ac", "#9ccc65", "#64b5f6", "#e53935", "#fb8c00", "#8e24aa",
                                     "#757575"), strict=True))
# The steps of a layer, in the order they run: crawl, parse, dbbatch, dedup, dbupdate, optimize.
STEP_COLORS = dict(zip(LAYER_STEPS, ("#90a4ae", "#1565c0", "#43a047", "#fbc02d", "#8d6e63", "#ef6c00", "#6a1b9a"), strict=True))
# How the trend names and colours each of the crawl db's RUN_COUNTS.
TREND_STYLE = {URLS_ADDED: ("new URLs", "#1565c0"), URLS_FETCHED: ("fetched", "#2e7d32"),
               URLS_NOT_MODIFIED: ("not modified", "#9ccc65"), URLS_GONE: ("gone", "#e53935")}
TREND_SERIES = tuple((name, *TREND_STYLE[name]) for name in RUN_COUNTS)
THROUGHPUT_COLUMNS = 60  # the run's wall time is cut into at most this many columns
HOSTS_CHARTED = 25  # the hosts with the most URLs get a bar
HOSTS_LISTED = 200  # rows of the host table
TASKS_LISTED = 16  # a layer's busiest reduce tasks listed; one row sums the rest
TOP_ERRORS = 10
OTHER_COLOR = "#90a4ae"
SCORE_COLOR = "#00897b"

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 980px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: 2px 10px; text-align: left; }
th { background: #eceff1; } tr:nth-child(even) td { background: #f7f9fa; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 12px; word-break: break-all; }
p, figcaption, .wrap { overflow-wrap: anywhere; }
#summary-table td:first-child { white-space: nowrap; }
.below { color: #c62828; font-weight: bold; }
.note { background: #fff8e1; border-left: 4px solid #ffb300; padding: .5em 1em; }
.bad { background: #ffebee; border-left: 4px solid #e53935; padding: .5em 1em; }
figure.chart { margin: 1em 0; } figcaption { font-weight: bold; margin-bottom: .3em; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg .axis { stroke: #555; } svg .grid { stroke: #e0e0e0; }
"""


def _e(value) -> str:
    return escape(str(value), quote=True)


def _path(path: str) -> tuple[str, str]:
    """A path as a table cell: code, which breaks anywhere, so that a long one never widens its table."""
    return ("html", f"<code>{_e(path)}</code>")


def _detail(error: str) -> str:
    """An error's detail, which may quote a long unbroken word (a URL): it breaks anywhere."""
    return f"<span class=wrap>{_e(error)}</span>"


def _bytes(count: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1024
    return ""


def _table(headers: list[str], rows: list[list], numeric: set[int] = frozenset(), table_id: str = "") -> str:
    """A table; cells are escaped unless they are already HTML (a tuple ("html", text))."""
    def cell(index, value, tag):
        html = value[1] if isinstance(value, tuple) else _e(number(value) if isinstance(value, (int, float)) else value)
        return f'<{tag}{" class=n" if index in numeric else ""}>{html}</{tag}>'
    head = "".join(cell(i, h, "th") for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(cell(i, v, "td") for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f'<table{f" id={table_id}" if table_id else ""}><tr>{head}</tr>{body}</table>'


def render(figures: CrawlFigures) -> str:
    sections = [_summary(figures), _layers(figures), _tasks(figures), _throughput(figures), _hosts(figures),
                _waiting(figures), _scores(figures), _types(figures), _errors(figures), _text_lengths(figures),
                _trend(figures)]
    written = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<meta name=viewport content=\"width=device-width\"><title>mrcrawl report: {_e(figures.name)}</title>"
        f"<style>{STYLE}</style></head><body>"
        f"<h1>Crawl report: {_e(figures.name)}</h1>" + "".join(sections)
        + f"<p><small>Written by mrcrawl at {written} from {_e(figures.directory)}.</small></p></body></html>\n"
    )


def _summary(figures: CrawlFigures) -> str:
    outcomes = figures.outcomes
    span = (figures.last_request - figures.first_request) if figures.first_request is not None else None
    rows = [
        ["crawl", f"{figures.name} ({figures.language})"], ["directory", _path(figures.directory)],
        ["as of", figures.run], ["depth", f"{figures.depth} layers ({len(figures.layers)} crawled)"],
        ["runner", ", ".join(figures.runners) or "not recorded"], ["seeds", figures.seeds],
        ["URLs due", _counted(figures.due_urls, "from the crawl db, on layer 0 beside the seeds")],
        ["pages fetched", f"{number(outcomes[FETCHED])} fetched, {number(outcomes[NOT_MODIFIED])} not modified"],
        ["URLs attempted", figures.attempted],
        ["XML pages written", _counted(figures.xml_pages, "new or changed pages, for the index")],
        ["bytes received", _bytes(figures.bytes)],
        ["time in steps", f"{figures.step_seconds:,.1f} s over {len(figures.steps)} steps"],
        ["requests", "none" if span is None else f"from the first to the last: {span:,.1f} s"],
        ["result", figures.result], ["crawl db", _path(figures.db) if figures.db else "none"],
    ]
    html = "<h2 id=summary>Summary</h2>" + _table(["", ""], rows, table_id="summary-table")
    if figures.complete and not figures.fetched:
        top = max(figures.errors.items(), key=lambda item: item[1].count, default=None)
        cause = ""
        if top:
            kind, error = top
            url, detail = next(iter(error.examples.items()))
            cause = (f" The most common error: {_e(kind.label)} ({error.count} URLs), "
                     f"for example <code>{_e(url)}</code>: {_detail(detail)}.")
        html += f'<p class=bad id=nothing-fetched>This crawl fetched no page.{cause}</p>'
    elif not figures.complete:
        html += f'<p class=note>The crawl is not complete: {_e(figures.result)}.</p>'
    return html


def _counted(counted: StepCount, what: str) -> str:
    return f"{number(counted.count)} {what}" if counted.count is not None else counted.missing


def _layers(figures: CrawlFigures) -> str:
    rows = [f"layer {layer.layer}" for layer in figures.layers]
    present = [outcome for outcome in OUTCOMES if any(layer.outcomes[outcome] for layer in figures.layers)]
    outcome_series = [(outcome, [layer.outcomes[outcome] for layer in figures.layers], OUTCOME_COLORS[outcome])
                      for outcome in present]
    step_series = [(kind, [layer.seconds.get(kind, 0.0) for layer in figures.layers], STEP_COLORS[kind])
                   for kind in LAYER_STEPS]
    table = _table(["layer", *present, "seconds"],
                   [[layer.layer, *(layer.outcomes[o] for o in present), round(sum(layer.seconds.values()), 1)]
                    for layer in figures.layers], numeric=set(range(len(present) + 2)), table_id="layer-table")
    return ("<h2 id=layers>Layers</h2>"
            + stacked_bars("chart-layer-outcomes", "Outcomes per layer (URLs)", rows, outcome_series,
                           empty="no layer was crawled")
            + stacked_bars("chart-layer-seconds", "Seconds per layer, by step", rows, step_series, unit=" s",
                           empty="no layer was crawled")
            + table)


def _tasks(figures: CrawlFigures) -> str:
    """Per layer, each reduce task's load as planned and as counted; nothing for a crawl from before placement."""
    layers = [layer for layer in figures.layers if layer.tasks]
    if not layers:
        return ""
    return ("<h2 id=tasks>Reduce tasks</h2>"
            "<p>Per layer, each reduce task of the Crawler: the URLs, politeness queues and seconds its layer's "
            "placement planned for it, beside the URLs and hosts it fetched and the seconds it was busy. A task's "
            "idle seconds are the layer's slowest task's busy seconds less its own: the time it sat done while the "
            f"layer went on. The {TASKS_LISTED} busiest tasks of a layer are listed; one row sums the rest.</p>"
            + "".join(_layer_tasks(layer) for layer in layers))


def _layer_tasks(layer: LayerFigures) -> str:
    said = [f"expected {_task_seconds(layer.expected_seconds)} s by the plan" if layer.expected_seconds is not None
            else "no plan counted", f"the Crawler step took {_task_seconds(layer.crawler_seconds)} s"]
    if layer.busy:
        said.append(f"slowest task busy {_task_seconds(layer.slowest_busy)} s, mean {_task_seconds(layer.mean_busy)} s"
                    + (f": imbalance {layer.imbalance:.2f} (slowest busy / mean busy)" if layer.imbalance else ""))
    else:
        said.append("the Crawler's runner counted no task")
    ranked = sorted(layer.tasks, key=lambda task: (task.busy_seconds is None, -(task.busy_seconds or 0), task.task))
    rows = [[task.task, *_task_cells(layer, [task])] for task in ranked[:TASKS_LISTED]]
    rest = ranked[TASKS_LISTED:]
    if rest:
        rows.append([f"{len(rest)} more {'task' if len(rest) == 1 else 'tasks'} (sums)", *_task_cells(layer, rest)])
    return (f"<p id=tasks-{layer.layer}><strong>Layer {layer.layer}</strong>: {_e('; '.join(said))}.</p>"
            + _table(["task", "planned URLs", "planned queues", "expected s", "URLs", "hosts", "busy s", "idle s"],
                     rows, numeric=set(range(1, 8)), table_id=f"task-table-{layer.layer}"))


def _task_cells(layer: LayerFigures, tasks: list[TaskLoad]) -> list:
    """The load of `tasks` (summed when more than one), a cell per column after the task's; — where not counted."""
    def total(values):  # to the millisecond when they are seconds, as the tasks count them
        known = [value for value in values if value is not None]
        return round(sum(known), 3) if known else None
    planned_urls, planned_queues, expected, urls, hosts, busy = (
        total(getattr(task, name) for task in tasks)
        for name in ("planned_urls", "planned_queues", "expected_seconds", "urls", "hosts", "busy_seconds"))
    idle = total(layer.idle_seconds(task) for task in tasks)
    return [_known(planned_urls), _known(planned_queues), _task_seconds(expected), _known(urls), _known(hosts),
            _task_seconds(busy), _task_seconds(idle)]


def _task_seconds(seconds: float | None) -> str:
    """A task's seconds, counted to the millisecond: to the hundredth."""
    return "—" if seconds is None else f"{seconds:,.2f}"


def _throughput(figures: CrawlFigures) -> str:
    title = "URLs finished per second over the run"
    if figures.first_request is None:
        return "<h2 id=throughput>Throughput</h2>" + columns("chart-throughput", title, [], [], empty="no request was sent")
    first = int(figures.first_request)
    seconds = int(figures.last_request) - first + 1
    width = max(1, math.ceil(seconds / THROUGHPUT_COLUMNS))
    count = math.ceil(seconds / width)
    per_column = {"fetched": [0.0] * count, "other": [0.0] * count}
    for (second, kind), urls in figures.requests_per_second.items():
        per_column[kind][(second - first) // width] += urls / width
    labels = [f"+{index * width} s" for index in range(count)]
    series = [("fetched or not modified", per_column["fetched"], OUTCOME_COLORS[FETCHED]),
              ("other outcomes", per_column["other"], OTHER_COLOR)]
    peak = max(a + b for a, b in zip(*per_column.values()))
    mean = figures.fetched / max(figures.last_request - figures.first_request, 1.0)
    return ("<h2 id=throughput>Throughput</h2>"
            + columns("chart-throughput", title, labels, series, unit="/s",
                      axis=f"seconds since the first request; each column is {width} s")
            + f"<p>Pages fetched or not modified: {mean:,.1f} per second on average from the first request to the "
              f"last, {peak:,.1f} URLs per second at the busiest column. The gaps are the other steps "
              "(parse, db update) between layers.</p>")


def _hosts(figures: CrawlFigures) -> str:
    hosts = sorted(figures.hosts.items(), key=lambda item: (-item[1].urls, item[0]))
    charted = hosts[:HOSTS_CHARTED]
    present = [o for o in OUTCOMES if any(host.outcomes[o] for _, host in charted)]
    series = [(o, [host.outcomes[o] for _, host in charted], OUTCOME_COLORS[o]) for o in present]
    flagged = [name for name, host in hosts if below_delay(host.smallest_gap, figures.delay)]
    listed = sorted(hosts, key=lambda item: item[0] not in flagged)[:HOSTS_LISTED]  # flagged first, stable
    rows = []
    for name, host in listed:
        gap = host.smallest_gap
        if gap is None:
            shown = "—"
        elif below_delay(gap, figures.delay):
            shown = ("html", f'<span class=below title="below the delay of {figures.delay} s">{gap:.3f} s ⚠</span>')
        else:
            shown = f"{gap:.3f} s"
        others = sum(count for outcome, count in host.outcomes.items() if outcome not in (FETCHED, NOT_MODIFIED))
        rows.append([("html", f"<code>{_e(name)}</code>"), host.urls, host.outcomes[FETCHED],
                     host.outcomes[NOT_MODIFIED], others, _bytes(host.bytes), host.errors, shown])
    flag_note = (f'<p class=bad id=gap-warning>{len(flagged)} host(s) were asked twice within less than the delay '
                 f'of {figures.delay} s: {_e(", ".join(flagged[:10]))}</p>') if flagged else (
                 f'<p>No host was asked twice within less than the configured delay of {figures.delay} s.</p>')
    more = f"<p>… and {len(hosts) - len(listed)} more hosts.</p>" if len(hosts) > len(listed) else ""
    return ("<h2 id=hosts>Hosts</h2>"
            + stacked_bars("chart-hosts", f"Outcomes per host (the {len(charted)} with the most URLs)",
                           [name for name, _ in charted], series, empty="no URL was attempted")
            + "<p>The smallest gap is the shortest time between the starts of two URLs' last requests to the host "
              "within one layer (a robots.txt request or a retry is not among them).</p>" + flag_note
            + _table(["host", "URLs", "fetched", "not modified", "other", "bytes", "errors", "smallest gap"], rows,
                     numeric={1, 2, 3, 4, 5, 6, 7}, table_id="host-table")
            + more)


def _waiting(figures: CrawlFigures) -> str:
    html = "<h2 id=waiting>What waits in the crawl db</h2>"
    waiting = figures.waiting
    if waiting is None:
        return html + f"<p class=note>Not read: {_e(figures.waiting_note)}.</p>"
    html += (f"<p>{number(waiting.deferred)} URLs deferred, {number(waiting.trapped)} trapped, counted per pay-level "
             "domain over the whole db as it is when the report is written. A deferred URL was held back by a cap, "
             f"or left when a layer's time ran out ({_codes(DEFERRALS)}): it waits, unfetched or due, and is offered "
             f"again. A trapped URL was linked, and a trap guard ({_codes(TRAP_GUARDS)}) caught it: it is never "
             "fetched unless injected.</p>")
    ranked = waiting.ranked()
    if not ranked:
        return html
    reasons = waiting.reasons()
    listed = ranked[:HOSTS_LISTED]
    rows = [[("html", f"<code>{_e(pld)}</code>"), counts.deferred.total(), counts.trapped.total(),
             *((counts.deferred + counts.trapped)[reason] for reason in reasons)] for pld, counts in listed]
    more = f"<p>… and {len(ranked) - len(listed)} more pay-level domains.</p>" if len(ranked) > len(listed) else ""
    headers = ["pay-level domain", "deferred", "trapped", *(("html", _codes([reason])) for reason in reasons)]
    return html + _table(headers, rows, numeric=set(range(1, len(reasons) + 3)), table_id="waiting-table") + more


def _scores(figures: CrawlFigures) -> str:
    html = "<h2 id=scores>Scores</h2>"
    spread = figures.scores
    if spread is None:
        return html + f"<p class=note>Not read: {_e(figures.scores_note)}.</p>"
    if not spread.scored:
        return html + (f"<p class=note>No URL of the crawl db has a score yet (of {number(spread.urls)} URLs): "
                       "scores are computed at the start of a run.</p>")
    buckets = spread.ranked_buckets()
    chart = columns("chart-scores", "URLs by score / mean score", [bucket_label(bucket) for bucket, _ in buckets],
                    [("URLs", [float(count) for _, count in buckets], SCORE_COLOR)],
                    axis="score / mean score: each column from its first value to its second")
    rows = [[rank, f"{entry.score:.6g}", f"{spread.ratio(entry.score):,.1f}", entry.status,
             ("html", f"<code>{_e(entry.url)}</code>"), _known(entry.inlinks), _known(entry.inlink_hosts)]
            for rank, entry in enumerate(spread.top, 1)]
    return (html + f"<p>{number(spread.scored)} of {number(spread.urls)} URLs of the crawl db scored, as it is when "
                   f"the report is written; mean score {spread.mean:.6g}. A URL's score over the mean is score × n "
                   "when the scores sum to 1, as PageRank's do: 1 is the score of every URL if no link counted for "
                   "more than another.</p>"
            + chart
            + _table(["", "score", "× mean", "status", "URL", "inlinks", "linking hosts"], rows,
                     numeric={0, 1, 2, 5, 6}, table_id="score-table"))


def _known(count: int | None) -> str | int:
    return "—" if count is None else count


def _codes(names) -> str:
    return ", ".join(f"<code>{_e(name)}</code>" for name in names)


def _single_bars(chart_id: str, title: str, counts: Counter, color: str, empty: str) -> str:
    common = counts.most_common(20)
    return stacked_bars(chart_id, title, [name for name, _ in common], [("pages", [n for _, n in common], color)],
                        empty=empty)


def _types(figures: CrawlFigures) -> str:
    return ("<h2 id=types>Charsets and content types</h2>"
            + _single_bars("chart-charsets", "Charsets of the fetched pages", figures.charsets, "#5c6bc0",
                           "no page was fetched")
            + _single_bars("chart-content-types", "Content types of the answers", figures.content_types, "#26a69a",
                           "no answer was received"))


def _errors(figures: CrawlFigures) -> str:
    top = sorted(figures.errors.items(), key=lambda item: (-item[1].count, item[0]))[:TOP_ERRORS]
    if not top:
        return "<h2 id=errors>Top errors</h2><p>No URL ended in an error.</p>"
    rows = [[kind.label, error.count, ("html", "<br>".join(f"<code>{_e(url)}</code>: {_detail(detail)}"
                                                          for url, detail in error.examples.items()))]
            for kind, error in top]
    return ("<h2 id=errors>Top errors</h2>"
            + _table(["error", "URLs", "for example"], rows, numeric={1}, table_id="error-table"))


def _text_lengths(figures: CrawlFigures) -> str:
    bounds = [*TEXT_LENGTH_BINS[1:], None]
    labels = [("0" if low == 0 else f"{_short(low)}+" if high is None else f"{_short(low)}–{_short(high - 1)}")
              for low, high in zip(TEXT_LENGTH_BINS, bounds)]
    pages = sum(figures.text_lengths)
    why = "the run wrote no XML" if not figures.complete else "the run wrote no XML page (nothing new or changed)"
    return ("<h2 id=text>Main-text lengths</h2>"
            + columns("chart-text-lengths", "Main-text length (characters) of the pages this run wrote as XML",
                      labels, [("pages", [float(n) for n in figures.text_lengths], "#7e57c2")], empty=why)
            + f"<p>{number(pages)} pages: those fetched for the first time or changed since their last fetch.</p>")


def _short(count: int) -> str:
    """999 -> 999, 1999 -> 2k: a bin's bound, short enough to sit under its column."""
    return str(count) if count < 1000 else f"{round(count / 1000)}k"


def _trend(figures: CrawlFigures) -> str:
    html = "<h2 id=trend>Across runs</h2>"
    if figures.trend is None:
        return html + f"<p class=note>No trend: {_e(figures.trend_note)}.</p>"
    days = [day.day for day in figures.trend]
    series = [(label, [float(day.counts[name]) for day in figures.trend], color) for name, label, color in TREND_SERIES]
    rows = [[day.day, day.runs, *(day.counts[name] for name, _, _ in TREND_SERIES)] for day in figures.trend]
    return (html + columns("chart-trend", f"Per day, from the crawl db {figures.db}", days, series, stacked=False,
                           empty=figures.trend_note or "no run recorded")
            + _table(["day", "runs", *(label for _, label, _ in TREND_SERIES)], rows, numeric={1, 2, 3, 4, 5},
                     table_id="trend-table"))
