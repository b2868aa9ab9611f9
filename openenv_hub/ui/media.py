"""Pictures for custom UI tabs: images, SVG drawings and line charts as accessible HTML.

These helpers return HTML strings for a ``gradio.HTML`` component, so an environment's tab can
show a game frame, a board or a chart without new dependencies. Images travel as ``data:``
URIs inside ``<img>`` elements with alt text; SVG is wrapped the same way, so the browser draws
it in an isolated image and no markup of it reaches the page. Nothing here imports gradio.

Example:
    >>> html = image_html(svg_data_uri('<svg xmlns="http://www.w3.org/2000/svg"/>'), alt="Empty")
    >>> html.startswith('<img') and 'alt="Empty"' in html
    True

Layer: ui.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence

__all__ = ["PALETTE", "image_html", "line_chart_svg", "svg_data_uri"]

#: Line colours of :func:`line_chart_svg`, distinguishable for common colour blindness.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def svg_data_uri(svg: str) -> str:
    """``svg`` as a ``data:image/svg+xml;base64,...`` URI."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def image_html(
    src: str,
    *,
    alt: str,
    elem_id: str | None = None,
    width: int | None = None,
    pixelated: bool = False,
) -> str:
    """An ``<img>`` element showing ``src`` (a URL or a ``data:`` URI) with ``alt`` text.

    Args:
        src: Where the picture is; ``data:`` URIs are typical (PNG frames, SVG drawings).
        alt: What the picture shows, for screen readers and when it cannot load.
        elem_id: The element's id, for tests and styles.
        width: Display width in CSS pixels (the height follows the aspect ratio).
        pixelated: Scale without smoothing (for low-resolution game frames).
    """
    attributes = {"src": src, "alt": alt, "role": "img"}
    if elem_id:
        attributes["id"] = elem_id
    styles = ["max-width:100%", "height:auto"]
    if width:
        styles.append(f"width:{int(width)}px")
    if pixelated:
        styles.append("image-rendering:pixelated")
    attributes["style"] = ";".join(styles)
    rendered = " ".join(
        f'{key}="{html.escape(value, quote=True)}"' for key, value in attributes.items()
    )
    return f"<img {rendered}>"


def line_chart_svg(
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    x_labels: Sequence[str] = (),
    width: int = 720,
    height: int = 320,
    y_label: str = "",
) -> str:
    """A line chart of one or more series sharing the x axis, as an SVG document.

    Args:
        series: Name -> values; every series is drawn against its index (0, 1, ...).
        title: Shown at the top and used as the chart's accessible name.
        x_labels: Labels of the first and last index (e.g. dates), shown under the axis.
        width: Width in pixels.
        height: Height in pixels.
        y_label: Unit of the values, shown beside the axis.
    """
    left, right, top, bottom = 64, 16, 36, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for line in series.values() for v in line if math.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high - low < 1e-12:
        low, high = low - 1.0, high + 1.0
    longest = max((len(line) for line in series.values()), default=0)

    def x(i: int) -> float:
        return left + plot_w * (i / max(longest - 1, 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - low) / (high - low))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_attr(title)}">',
        f"<title>{html.escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="22" font-family="sans-serif" font-size="15" fill="#111">'
        f"{html.escape(title)}</text>",
        _axes(left, top, plot_w, plot_h, low, high, y_label),
    ]
    if x_labels:
        parts.append(_x_labels(x_labels, left, top + plot_h, plot_w))
    for index, (name, line) in enumerate(series.items()):
        colour = PALETTE[index % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(line) if math.isfinite(v))
        if len(line) == 1:
            parts.append(f'<circle cx="{x(0):.1f}" cy="{y(line[0]):.1f}" r="3" fill="{colour}"/>')
        elif points:
            parts.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>'
            )
        legend_x = left + 8 + 150 * index
        parts.append(
            f'<rect x="{legend_x}" y="{top + 6}" width="12" height="3" fill="{colour}"/>'
            f'<text x="{legend_x + 16}" y="{top + 11}" font-family="sans-serif" font-size="12" '
            f'fill="#111">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _axes(left: int, top: int, w: int, h: int, low: float, high: float, unit: str) -> str:
    lines = [
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" stroke="#555"/>',
        f'<line x1="{left}" y1="{top + h}" x2="{left + w}" y2="{top + h}" stroke="#555"/>',
    ]
    for fraction in (0.0, 0.5, 1.0):
        value = low + (high - low) * fraction
        ypos = top + h * (1 - fraction)
        lines.append(
            f'<text x="{left - 6}" y="{ypos + 4:.1f}" text-anchor="end" font-family="sans-serif" '
            f'font-size="11" fill="#333">{_short(value)}</text>'
            f'<line x1="{left}" y1="{ypos:.1f}" x2="{left + w}" y2="{ypos:.1f}" stroke="#eee"/>'
        )
    if unit:
        lines.append(
            f'<text x="12" y="{top + h / 2:.1f}" font-family="sans-serif" font-size="11" '
            f'fill="#333" transform="rotate(-90 12 {top + h / 2:.1f})" text-anchor="middle">'
            f"{html.escape(unit)}</text>"
        )
    return "".join(lines)


def _x_labels(labels: Sequence[str], left: int, base: float, w: int) -> str:
    first, last = labels[0], labels[-1]
    style = 'font-family="sans-serif" font-size="11" fill="#333"'
    return (
        f'<text x="{left}" y="{base + 18:.1f}" {style}>{html.escape(first)}</text>'
        f'<text x="{left + w}" y="{base + 18:.1f}" text-anchor="end" {style}>'
        f"{html.escape(last)}</text>"
    )


def _short(value: float) -> str:
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.2f}M"
    if magnitude >= 1e4:
        return f"{value / 1e3:.1f}k"
    return f"{value:.4g}"


def _attr(text: str) -> str:
    return html.escape(text, quote=True)
