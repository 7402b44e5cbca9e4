"""Charts of the report page as inline SVG strings: pure layout of numbers the Report already holds.

No scripts, fonts or images: the page stays one self-contained file. Labels are escaped
here because the SVG goes into the page as markup. Each chart is as large as its bars need (a row per
bar, a column of at most _COLUMN px per bar) and is drawn at that size, narrower only on a narrow screen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from markupsafe import Markup, escape

PALETTE = ("#4f6bed", "#2aa876", "#f2a93b", "#e5534b", "#8e6fd8", "#2bb3c0", "#d45d9e", "#7a8b99")
HIGHLIGHT = "#e5534b"
MUTED = "#9aa5b1"
WIDTH = 480
_ROW = 26
_COLUMN = 64
_LABEL_CHARS = 18
_MAX_TICKS = 14


class Bar(NamedTuple):
    label: str
    value: float
    # Shown next to the bar, e.g. "7 · 23%".
    note: str = ""


def hbar_chart(bars: Sequence[Bar], *, title: str) -> Markup:
    """One horizontal bar per row: label, bar, note; each bar in the next palette colour."""
    label_w, note_w = 130, 70
    span = WIDTH - label_w - note_w - 16
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
    ``reference`` a dashed level across them (the earlier periods' mean), its note at the right end."""
    height, base, head = 160, 134, 20
    step = min(_COLUMN, (WIDTH - 20) / max(len(bars), 1))
    width = round(20 + step * len(bars))
    every = math.ceil(len(bars) / _MAX_TICKS) or 1  # thin out labels on long windows
    top = _top([*bars, *([reference] if reference else [])])
    cols = []
    for i, bar in enumerate(bars):
        x = 10 + i * step
        h = (base - head - 14) * bar.value / top
        last = i >= len(bars) - highlight_last
        colour = HIGHLIGHT if last else PALETTE[0]  # one series: one colour, the current period apart
        label = escape(_short(bar.label, 10)) if i % every == 0 or last else ""
        cols.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.note or _num(bar.value))}</title>"
            f'<rect x="{x + step * 0.15:.1f}" y="{base - h:.1f}" width="{step * 0.7:.1f}" height="{h:.1f}" '
            f'rx="3" fill="{colour}"/>'
            f'<text x="{x + step / 2:.1f}" y="{base - h - 4:.1f}" text-anchor="middle" class="note">'
            f"{escape(bar.note)}</text>"
            f'<text x="{x + step / 2:.1f}" y="{base + 16}" text-anchor="middle">{label}</text></g>'
        )
    axis = f'<line x1="10" y1="{base}" x2="{width - 10}" y2="{base}" stroke="{MUTED}"/>'
    if reference is not None:
        y = base - (base - head - 14) * reference.value / top
        note = escape(reference.note)
        cols.append(
            f"<g><title>{escape(reference.label)}: {note}</title>"
            f'<line x1="10" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="{MUTED}" '
            f'stroke-dasharray="4 3"/><text x="{width - 10}" y="{y - 4:.1f}" text-anchor="end" '
            f'class="note">{note}</text></g>'
        )
    return _svg(title, width, height, [axis, *cols])


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
