"""A page load's files in transfer order, drawn as an SVG waterfall from the harness's own log.

The harness (``benchmarks/__main__.py``) logs every response a visit received:
its path, when its request left and when its last byte arrived (ms from the
page's navigation, from Playwright's resource timing), and the bytes on the
wire. :func:`draw` turns one visit's log into a picture; nothing in it is
typed by hand.

>>> svg = draw([{"path": "/a.html", "start_ms": 0.0, "end_ms": 120.0, "bytes": 5000, "cached": False}],
...            first_output_ms=300.0, title="demo")
>>> svg.startswith("<svg") and "a.html" in svg and "first output" in svg
True
>>> short_name("/_static/pyodide/pyodide.asm.wasm"), short_name("/_static/267ff0bd372690045ca344a6b62be495e.css")
('pyodide/pyodide.asm.wasm', '267ff0bd372690…6b62be495e.css')
"""

from __future__ import annotations

from html import escape

ROW = 15  # px per file
LABEL_W = 250  # px for the file names
BAR_W = 520  # px for the time axis
TOP = 34  # px: title and axis labels


def _ticks(end_ms: float) -> list[float]:
    """Round tick positions (ms) covering 0..end_ms, about six of them."""
    for step in (100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000):
        if end_ms / step <= 7:
            return [i * step for i in range(int(end_ms // step) + 1)]
    return [0.0, end_ms]


def short_name(path: str) -> str:
    """The part of a URL path a reader recognises: the file name and, for the runtime, its folder."""
    path = path.split("?", 1)[0]
    parts = [p for p in path.split("/") if p]
    if not parts:
        return "/"
    name = parts[-1]
    name = f"{parts[-2]}/{name}" if len(parts) > 1 and parts[-2] in {"pyodide", "pyodide_cells"} else name
    return name if len(name) <= 32 else f"{name[:14]}…{name[-14:]}"  # a hashed name: its ends say enough


def draw(log: list[dict], first_output_ms: float, title: str) -> str:
    """One visit's responses as an SVG waterfall: one row per file, in the order the requests left.

    ``log``: dicts with ``path``, ``start_ms``, ``end_ms`` (ms from navigation),
    ``bytes`` (on the wire) and ``cached`` (answered from the HTTP cache).
    ``first_output_ms``: where the first output line is drawn. Colours come from
    ``currentColor`` and two mid-tone fills, readable on light and dark pages.

    Raises ValueError when ``log`` is empty.
    """
    if not log:
        raise ValueError("draw() needs at least one response in the log")
    rows = sorted(log, key=lambda r: (r["start_ms"], r["end_ms"]))
    end = max(max(r["end_ms"] for r in rows), first_output_ms) * 1.04
    width, height = LABEL_W + BAR_W + 90, TOP + ROW * len(rows) + 12

    def x(ms: float) -> float:
        return LABEL_W + BAR_W * ms / end

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'role="img" aria-label="{escape(title)}" class="bench-waterfall" '
        'style="font: 11px system-ui, sans-serif; max-width: 100%; height: auto">',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="12" fill="currentColor" font-weight="600">{escape(title)}</text>',
    ]
    for tick in _ticks(end):
        out.append(
            f'<line x1="{x(tick):.1f}" y1="{TOP - 6}" x2="{x(tick):.1f}" y2="{height - 10}" '
            'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        out.append(f'<text x="{x(tick):.1f}" y="{TOP - 9}" fill="currentColor" text-anchor="middle">{tick / 1000:g} s</text>')
    for i, r in enumerate(rows):
        y = TOP + i * ROW
        fill = "#8a8a8a" if r.get("cached") else "#2f7fd1"
        size = "cache" if r.get("cached") else f"{r['bytes'] / 1e6:.2f} MB" if r["bytes"] >= 1e5 else f"{r['bytes'] / 1e3:.0f} kB"
        out.append(
            f'<text x="{LABEL_W - 6}" y="{y + 10}" fill="currentColor" text-anchor="end">{escape(short_name(r["path"]))}</text>'
        )
        bar_w = max(x(r["end_ms"]) - x(r["start_ms"]), 1.5)
        out.append(
            f'<rect x="{x(r["start_ms"]):.1f}" y="{y + 2}" width="{bar_w:.1f}" height="{ROW - 4}" '
            f'fill="{fill}"><title>{escape(r["path"])}: {r["start_ms"]:.0f}–{r["end_ms"]:.0f} ms, '
            f"{size}</title></rect>"
        )
        out.append(f'<text x="{x(r["start_ms"]) + bar_w + 4:.1f}" y="{y + 10}" fill="currentColor" fill-opacity="0.75">{size}</text>')
    fx = x(first_output_ms)
    out.append(f'<line x1="{fx:.1f}" y1="{TOP - 6}" x2="{fx:.1f}" y2="{height - 10}" stroke="#d1452f" stroke-width="2"/>')
    out.append(
        f'<text x="{fx - 4:.1f}" y="{height - 1}" fill="#d1452f" text-anchor="end">first output {first_output_ms / 1000:.2f} s</text>'
    )
    out.append("</svg>")
    return "\n".join(out)
