"""The report's charts, drawn as inline SVG: no script, no library, no network.

Every chart is an <svg role="img"> with an id, whose data marks are
<rect class="mark">, each with a <title> the browser shows as a tooltip.
Every text taken from a crawl (a host, a URL, an error) is escaped here.
"""
from __future__ import annotations

import math
from html import escape

WIDTH = 720
LEGEND_HEIGHT = 24
AXIS_HEIGHT = 22
LABEL_WIDTH = 190  # the row labels of horizontal bars
LABEL_CHARACTERS = 28  # a longer row label is cut (the tooltip has it whole)
ROW_HEIGHT = 22
PLOT_HEIGHT = 200  # the plot area of column charts
LEFT_AXIS = 56
MOST_COLUMN_LABELS = 12  # a column chart names at most this many of its columns


def _text(value) -> str:
    return escape(str(value), quote=True)


def number(value: float) -> str:
    """A count as a whole number, anything else with up to two decimals."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _axis(largest: float, whole: bool) -> tuple[float, float]:
    """The axis's top and its step between ticks: a step of 1, 2 or 5 times a
    power of ten, about four of them up to `largest`; whole numbers only
    for counts (`whole`)."""
    rough = max(largest, 1e-9) / 4
    power = 10 ** math.floor(math.log10(rough))
    step = next(factor * power for factor in (1, 2, 5, 10) if rough <= factor * power)
    if whole:
        step = max(step, 1.0)
    return step * max(1, math.ceil(largest / step)), step


def _ticks(top: float, step: float) -> list[float]:
    return [step * index for index in range(round(top / step) + 1)]


def _whole(series: list[tuple[str, list[float], str]]) -> bool:
    return all(float(value).is_integer() for _, values, _ in series for value in values)


def _legend(series: list[tuple[str, list[float], str]]) -> str:
    items, x = [], 0
    for name, _, color in series:
        items.append(f'<rect class="swatch" x="{x}" y="6" width="12" height="12" fill="{_text(color)}"/>'
                     f'<text x="{x + 16}" y="16">{_text(name)}</text>')
        x += 24 + 7 * len(name)
    return "".join(items)


def _svg(chart_id: str, title: str, height: int, body: str) -> str:
    return (f'<figure class="chart"><figcaption>{_text(title)}</figcaption>'
            f'<svg id="{_text(chart_id)}" role="img" aria-label="{_text(title)}" '
            f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}"><title>{_text(title)}</title>'
            f'{body}</svg></figure>')


def _mark(x: float, y: float, width: float, height: float, color: str, tooltip: str) -> str:
    """One data mark: a bar, with its figure as the tooltip."""
    return (f'<rect class="mark" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" '
            f'fill="{_text(color)}"><title>{_text(tooltip)}</title></rect>')


def _nothing(chart_id: str, title: str, why: str) -> str:
    return _svg(chart_id, title, 40, f'<text class="empty" x="0" y="24">{_text(why)}</text>')


def stacked_bars(chart_id: str, title: str, rows: list[str], series: list[tuple[str, list[float], str]],
                 unit: str = "", empty: str = "nothing to show") -> str:
    """One horizontal bar per row, stacked from each series' value for that
    row.  `series` is [(name, values by row, colour)]."""
    totals = [sum(values[row] for _, values, _ in series) for row in range(len(rows))]
    if not rows or not any(totals):
        return _nothing(chart_id, title, empty)
    top, step = _axis(max(totals), _whole(series))
    left, right = LABEL_WIDTH, WIDTH - 70
    scale = (right - left) / top
    height = LEGEND_HEIGHT + len(rows) * ROW_HEIGHT + AXIS_HEIGHT
    parts = [_legend(series)] if len(series) > 1 else []
    for index, (row, total) in enumerate(zip(rows, totals)):
        y = LEGEND_HEIGHT + index * ROW_HEIGHT
        shown = row if len(row) <= LABEL_CHARACTERS else row[:LABEL_CHARACTERS - 1] + "…"
        parts.append(f'<text class="label" x="{left - 6}" y="{y + 15}" text-anchor="end">{_text(shown)}'
                     f'<title>{_text(row)}</title></text>')
        x = left
        for name, values, color in series:
            value = values[index]
            if value <= 0:
                continue
            width = max(value * scale, 1.0)
            parts.append(_mark(x, y + 3, width, ROW_HEIGHT - 6, color, f"{row}: {name} {number(value)}{unit}"))
            x += width
        parts.append(f'<text class="value" x="{x + 4:.1f}" y="{y + 15}">{number(total)}{_text(unit)}</text>')
    axis_y = LEGEND_HEIGHT + len(rows) * ROW_HEIGHT
    parts.append(f'<line class="axis" x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}"/>')
    for value in _ticks(top, step):
        parts.append(f'<text class="tick" x="{left + value * scale:.1f}" y="{axis_y + 16}" text-anchor="middle">'
                     f'{number(value)}</text>')
    return _svg(chart_id, title, height, "".join(parts))


def columns(chart_id: str, title: str, labels: list[str], series: list[tuple[str, list[float], str]],
            stacked: bool = True, unit: str = "", axis: str = "", empty: str = "nothing to show") -> str:
    """A column per label: the series stacked in it, or side by side."""
    heights = [sum(values[i] for _, values, _ in series) if stacked else max(values[i] for _, values, _ in series)
               for i in range(len(labels))]
    if not labels or not any(heights):
        return _nothing(chart_id, title, empty)
    top, step = _axis(max(heights), _whole(series))
    plot_bottom = LEGEND_HEIGHT + 8 + PLOT_HEIGHT
    left, right = LEFT_AXIS, WIDTH - 10
    slot = (right - left) / len(labels)
    scale = PLOT_HEIGHT / top
    parts = [_legend(series)] if len(series) > 1 else []
    for value in _ticks(top, step):
        y = plot_bottom - value * scale
        parts.append(f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}"/>'
                     f'<text class="tick" x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{number(value)}</text>')
    every = math.ceil(len(labels) / MOST_COLUMN_LABELS)
    width = slot * 0.8 / (1 if stacked else len(series))
    for index, label in enumerate(labels):
        x, bottom = left + index * slot + slot * 0.1, plot_bottom
        for name, values, color in series:
            value = values[index]
            if value > 0:
                tall = max(value * scale, 1.0)
                y = bottom - tall if stacked else plot_bottom - tall
                parts.append(_mark(x, y, width, tall, color, f"{label}: {name} {number(value)}{unit}"))
                bottom = y if stacked else bottom
            if not stacked:
                x += width
        if index % every == 0:
            parts.append(f'<text class="tick" x="{left + (index + 0.5) * slot:.1f}" y="{plot_bottom + 16}" '
                         f'text-anchor="middle">{_text(label)}</text>')
    parts.append(f'<line class="axis" x1="{left}" y1="{plot_bottom}" x2="{right}" y2="{plot_bottom}"/>')
    if axis:
        parts.append(f'<text class="tick" x="{right}" y="{plot_bottom + 34}" text-anchor="end">{_text(axis)}</text>')
    return _svg(chart_id, title, plot_bottom + AXIS_HEIGHT + (18 if axis else 4), "".join(parts))
