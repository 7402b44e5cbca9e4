"""Charts of the report page as inline SVG strings: pure layout of numbers the Report already holds.

No scripts, fonts or images: the page stays one self-contained file. Labels are escaped
here because the SVG goes into the page as markup. Each chart is as large as its bars need (a row per
bar, a column of at most _COLUMN px per bar) and at most WIDTH wide: a phone's column (390 px less the
page's margins) shows it at its own size, its text as large as the page's small print, never shrunk.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

from markupsafe import Markup, escape

PALETTE = ("#4f6bed", "#2aa876", "#f2a93b", "#e5534b", "#8e6fd8", "#2bb3c0", "#d45d9e", "#7a8b99")
HIGHLIGHT = "#e5534b"
MUTED = "#9aa5b1"
WIDTH = 356
_ROW = 26
_COLUMN = 64
_LABEL_CHARS = 14
_FONT = 14  # the chart's text, px (the page's CSS sets it on the <svg>)
_NOTE_FONT = 12  # a bar's value and the reference's note (svg.chart .note)
_GAP = 4  # px at least between two axis labels


class Bar(NamedTuple):
    label: str
    value: float
    # Shown next to the bar, e.g. "7 · 23%".
    note: str = ""


def hbar_chart(bars: Sequence[Bar], *, title: str) -> Markup:
    """One horizontal bar per row: label, bar, note; each bar in the next palette colour."""
    label_w, note_w = 120, 44
    span = WIDTH - label_w - note_w - 12
    top = _top(bars)
    height = _ROW * len(bars) + 8
    rows = []
    for i, bar in enumerate(bars):
        y = 4 + i * _ROW
        width = max(span * bar.value / top, 2 if bar.value else 0)
        rows.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.note or _num(bar.value))}</title>"
            f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end">{escape(_short(bar.label))}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{width:.1f}" height="{_ROW - 8}" rx="3" '
            f'fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{label_w + width + 6:.1f}" y="{y + 17}" class="note">{escape(bar.note)}</text></g>'
        )
    return _svg(title, WIDTH, height, rows)


def column_chart(
    bars: Sequence[Bar], *, title: str, highlight_last: int = 0, reference: Bar | None = None
) -> Markup:
    """Vertical columns left to right (days, weeks); the last `highlight_last` are the current period;
    ``reference`` a dashed level across them (the earlier periods' mean), named in a key above the columns
    so its words never cross a column. Axis labels that would touch are thinned out, keeping the last."""
    key = 18 if reference else 0
    height, head = 160 + key, 20 + key
    base = height - 26
    step = min(_COLUMN, (WIDTH - 20) / max(len(bars), 1))
    width = round(20 + step * len(bars))
    top = _top([*bars, *([reference] if reference else [])])
    labels = _spaced_labels([_short(b.label, 10) for b in bars], step, width)
    cols = []
    if reference is not None:
        y = base - (base - head - 14) * reference.value / top
        cols.append(
            f"<g><title>{escape(reference.label)}: {escape(reference.note)}</title>"
            f'<line x1="10" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="{MUTED}" '
            f'stroke-dasharray="4 3"/><line x1="10" y1="10" x2="28" y2="10" stroke="{MUTED}" '
            f'stroke-dasharray="4 3"/><text x="32" y="14" class="note">{escape(reference.note)}</text></g>'
        )
    for i, bar in enumerate(bars):
        x = 10 + i * step
        h = (base - head - 14) * bar.value / top
        last = i >= len(bars) - highlight_last
        colour = HIGHLIGHT if last else PALETTE[0]  # one series: one colour, the current period apart
        centre, label = labels[i]
        cols.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.note or _num(bar.value))}</title>"
            f'<rect x="{x + step * 0.15:.1f}" y="{base - h:.1f}" width="{step * 0.7:.1f}" height="{h:.1f}" '
            f'rx="3" fill="{colour}"/>'
            f'<text x="{x + step / 2:.1f}" y="{base - h - 4:.1f}" text-anchor="middle" class="note">'
            f"{escape(bar.note)}</text>"
            f'<text x="{centre:.1f}" y="{base + 16}" text-anchor="middle">{escape(label)}</text></g>'
        )
    axis = f'<line x1="10" y1="{base}" x2="{width - 10}" y2="{base}" stroke="{MUTED}"/>'
    return _svg(title, width, height, [axis, *cols])


def _spaced_labels(labels: list[str], step: float, width: int) -> list[tuple[float, str]]:
    """Each column's axis label and its centre, "" for one that would touch the next label kept: from the
    last (the current period) leftwards, so the period the chart is about is always named. A label wider
    than its column is moved in from the chart's edges rather than cut by them."""
    out: list[tuple[float, str]] = []
    left = math.inf  # the left edge of the label kept last
    for i in range(len(labels) - 1, -1, -1):
        half = _text_width(labels[i], _FONT) / 2
        centre = min(max(10 + (i + 0.5) * step, half), width - half)
        keep = centre + half + _GAP <= left
        out.append((centre, labels[i] if keep else ""))
        left = centre - half if keep else left
    return out[::-1]


def _text_width(text: str, size: float) -> float:
    """About how wide ``text`` is drawn at ``size`` px: a wide (CJK) character a full em, others 0.55."""
    return sum(size if unicodedata.east_asian_width(c) in "WF" else size * 0.55 for c in text)


def _svg(title: str, width: int, height: int, parts: list[str]) -> Markup:
    return Markup(
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" class="chart">{"".join(parts)}</svg>'
    )


def _top(bars: Sequence[Bar]) -> float:
    """The value a full-length bar stands for (layout scale, not a figure)."""
    return max((b.value for b in bars), default=0) or 1


def _short(label: str, limit: int = _LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _num(value: float) -> str:
    return f"{value:g}"
