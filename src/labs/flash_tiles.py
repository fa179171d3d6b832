"""FlashTiles: an inline SVG picture of FlashAttention's tile loop, drawn from a run of it.

The picture for Lab 2's second exercise. It runs a ``flash_attention``
function (the learner's, or :func:`labs.attention.flash_attention`) with a
``trace`` list, into which the function appends ``(r0, c0, m)`` after each
(query block, key block) tile it computes: the tile's first query row, its
first key, and the running max ``m`` of the block's query rows after it
(Dao 2023, FlashAttention-2, Algorithm 1, the loop over key blocks). The grid
shows every score (query row x key), shaded where the (bottom-right causal)
mask lets the query see the key; tiles that ran are outlined and carry each
row's running max after them, tiles that never ran (skipped: the causal mask
hides all of their scores) are dashed; with no trace at all, no tile is drawn
as skipped. A note on the run as a whole (no trace; O or L of the wrong
shape) gets a line of its own below the grid. Beside each row: the returned
logsumexp L and whether the row's output and L match :func:`labs.attention.attention`
and the exact logsumexp.

The SVG follows :mod:`labs.softmax_trace`: self-contained, responsive
(viewBox, width 100%), ``role="img"`` with <title> and <desc>, currentColor for
text and strokes, blue #2C7FB8 for tiles that ran and vermillion #D55E00 for a
wrong row (>= 3:1 contrast on the light and dark themes, marked by shape too).
"""

from __future__ import annotations

import itertools
import math
from html import escape

from labs import attention as _att

RAN_COLOR = "#2C7FB8"
WRONG_COLOR = "#D55E00"
MAX_SIDE = 16  # queries or keys: beyond this the numbers no longer fit a cell
_LEFT, _TOP, _ROW_H = 44, 40, 24
_ids = itertools.count()


def _fmt_m(v: float) -> str:
    if v == -math.inf:
        return "\u2212\u221e"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}"


def _close(a, b: float) -> bool:
    """a (whatever the learner's function returned) equals b up to rounding."""
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        return False
    a = float(a)
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b
    return abs(a - b) <= 1e-9 * (1.0 + abs(b))


class FlashTiles:
    """Picture of one run of a tiled attention forward pass: which tiles ran, the running max.

    Args:
        flash_attention: a function ``(q, k, v, block_q, block_k, causal=, scale=, trace=)
            -> (O, L)`` that appends ``(r0, c0, m)`` to ``trace`` after each tile it
            computes (``m``: the running max of query rows r0 .. r0 + block_q - 1, a list).
        q: (N_q, d), k: (N_k, d), v: (N_k, d_v): lists of rows, 1 <= N_q, N_k <= 16.
        block_q, block_k: tile sizes (query rows, keys), ints >= 1.
        causal: bottom-right causal mask (query i sees key j iff j <= i + N_k - N_q).
        scale: score multiplier; default 1 / sqrt(d).
        title: text of the SVG <title> (escaped).

    Raises:
        TypeError: ``flash_attention`` not callable or without a ``trace``
            parameter; a bad title; bad inputs (as ``labs.attention.flash_attention``).
        ValueError: more than 16 queries or keys, no queries; a trace entry that
            is not (r0, c0, m) for a tile of the grid; bad inputs.

    Whatever the function raises propagates: the picture draws a run that finished.

    >>> q = k = v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> t = FlashTiles(_att.flash_attention, q, k, v, block_q=2, block_k=2, causal=True)
    >>> t.ran, t.skipped, t.rows_ok
    ([(0, 0), (1, 0), (1, 1)], [(0, 1)], [True, True, True])
    >>> t._repr_svg_().startswith('<svg')
    True
    """

    def __init__(
        self, flash_attention, q, k, v, block_q: int, block_k: int, causal: bool = False, scale=None, title: str | None = None
    ):
        if not callable(flash_attention):
            raise TypeError(f"flash_attention must be a function, got {type(flash_attention).__name__}")
        if title is not None and not isinstance(title, str):
            raise TypeError(f"title must be a str or None, got {title!r} ({type(title).__name__})")
        _att.check_block_sizes(block_q, block_k)
        q, k, v, scale = _att.check_attention_inputs(q, k, v, causal, scale)
        if not q:
            raise ValueError("q has no rows; expected at least one query to draw")
        if len(q) > MAX_SIDE or len(k) > MAX_SIDE:
            raise ValueError(f"{len(q)} queries x {len(k)} keys; expected at most {MAX_SIDE} of each to draw")
        self.n_q, self.n_k, self.block_q, self.block_k, self.causal = len(q), len(k), block_q, block_k, causal
        self.trace: list = []
        try:
            o, lse = flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale, trace=self.trace)
        except TypeError as err:
            if "trace" in str(err):
                raise TypeError(
                    "flash_attention takes no trace= argument; keep the starter's "
                    "`trace=None` parameter and its `trace.append((r0, c0, list(m)))` line"
                ) from err
            raise
        self.o = list(o) if isinstance(o, (list, tuple)) else []
        self.lse = list(lse) if isinstance(lse, (list, tuple)) else []
        self.d_v = len(v[0]) if v else 0
        self.notes = self._notes(o, lse)
        offset = self.n_k - self.n_q
        self.visible = [[not causal or j <= i + offset for j in range(self.n_k)] for i in range(self.n_q)]
        # m after each tile, keyed by (query block, key block)
        self.m_after: dict[tuple[int, int], list[float]] = {}
        for n, entry in enumerate(self.trace):
            self.m_after[self._tile_of(n, entry)] = [float(x) for x in entry[2]]
        self.ran = sorted(self.m_after)
        tiles = [(a, b) for a in range(self._blocks(self.n_q, block_q)) for b in range(self._blocks(self.n_k, block_k))]
        # With no trace at all there is nothing to tell a skipped tile from one that ran unrecorded.
        self.skipped = [t for t in tiles if t not in self.m_after] if self.trace else []
        o_ref = _att.attention(q, k, v, causal=causal, scale=scale)
        lse_ref = [
            _att.logsumexp(
                [_att.attention_score(scale, q[i], k[j], i, j) if self.visible[i][j] else -math.inf for j in range(self.n_k)]
            )
            for i in range(self.n_q)
        ]
        self.rows_ok = []
        for i in range(self.n_q):
            row = list(self.o[i]) if i < len(self.o) and isinstance(self.o[i], (list, tuple)) else []
            ok = (
                len(row) == len(o_ref[i])
                and all(_close(a, b) for a, b in zip(row, o_ref[i]))
                and i < len(self.lse)
                and _close(self.lse[i], lse_ref[i])
            )
            self.rows_ok.append(ok)
        self.title = (
            title
            if title is not None
            else (
                f"FlashAttention tiles: {self.n_q} queries x {self.n_k} keys in {block_q} x {block_k} tiles"
                + (", causal" if causal else "")
            )
        )

    def _notes(self, o, lse) -> list[str]:
        """What is wrong with the run as a whole, one line each: no trace, outputs of the wrong shape."""
        notes = []
        if not self.trace:
            notes.append("no tile recorded: keep trace.append((r0, c0, list(m)))")

        def count(n: int, one: str, many: str) -> str:
            return f"{n} {one if n == 1 else many}"

        queries = count(self.n_q, "query", "queries")

        if not isinstance(o, (list, tuple)):
            notes.append(f"O is a {type(o).__name__}, expected a list of {self.n_q} rows")
        elif len(o) != self.n_q:
            notes.append(f"{count(len(o), 'output row', 'output rows')} for {queries}")
        else:
            bad = [i for i, row in enumerate(o) if not isinstance(row, (list, tuple)) or len(row) != self.d_v]
            if bad:
                n = len(o[bad[0]]) if isinstance(o[bad[0]], (list, tuple)) else type(o[bad[0]]).__name__
                notes.append(
                    f"output row {bad[0]} has {n} values, expected {self.d_v} (d_v)"
                    if isinstance(n, int)
                    else f"output row {bad[0]} is a {n}, expected {self.d_v} values"
                )
        if not isinstance(lse, (list, tuple)):
            notes.append(f"L is a {type(lse).__name__}, expected a list of {self.n_q} values")
        elif len(lse) != self.n_q:
            notes.append(f"{count(len(lse), 'L value', 'L values')} for {queries}")
        return notes

    @staticmethod
    def _blocks(n: int, b: int) -> int:
        return -(-n // b)

    def _tile_of(self, n: int, entry) -> tuple[int, int]:
        """The (query block, key block) of trace entry n, checked against the grid."""
        try:
            r0, c0, m = entry
            m = list(m)
        except (TypeError, ValueError):
            raise ValueError(f"trace[{n}] = {entry!r}; expected (r0, c0, m) with m a list of running maxima") from None
        ok = (
            isinstance(r0, int)
            and isinstance(c0, int)
            and 0 <= r0 < self.n_q
            and 0 <= c0 < self.n_k
            and r0 % self.block_q == 0
            and c0 % self.block_k == 0
        )
        if not ok:
            raise ValueError(
                f"trace[{n}] starts at query {r0!r}, key {c0!r}; expected the first query and key "
                f"of a tile (multiples of block_q = {self.block_q} and block_k = {self.block_k})"
            )
        rows = min(self.block_q, self.n_q - r0)
        if len(m) != rows or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in m):
            raise ValueError(f"trace[{n}] has m = {m!r}; expected {rows} running maxima (floats), one per query row")
        return r0 // self.block_q, c0 // self.block_k

    def description(self) -> str:
        """Plain-text summary of what is drawn (the SVG <desc>).

        >>> q = k = v = [[1.0, 0.0], [0.0, 1.0]]
        >>> FlashTiles(_att.flash_attention, q, k, v, 1, 1, causal=True).description()
        'Tiles (query block, key block) that ran: (0, 0), (1, 0), (1, 1). Skipped by the causal mask: (0, 1). ...'
        """
        per_row = []
        for i in range(self.n_q):
            a = i // self.block_q
            ms = [
                _fmt_m(self.m_after[a, b][i - a * self.block_q])
                for b in range(self._blocks(self.n_k, self.block_k))
                if (a, b) in self.m_after
            ]
            per_row.append(f"query {i}: " + (", ".join(ms) or "none"))
        lse = ", ".join(_fmt_m(float(x)) if isinstance(x, (int, float)) else repr(x) for x in self.lse)
        wrong = [str(i) for i, ok in enumerate(self.rows_ok) if not ok]
        shape = "".join(f"{note[0].upper()}{note[1:]}. " for note in self.notes if not note.startswith("no tile"))
        if not self.trace:
            return (
                "The function recorded no tile in its trace (keep the line trace.append((r0, c0, list(m)))). "
                + shape
                + (
                    "Every row matches attention and the exact logsumexp."
                    if all(self.rows_ok)
                    else f"Rows that do not match attention or the exact logsumexp: {', '.join(wrong)}."
                )
            )
        return (
            shape
            + f"Tiles (query block, key block) that ran: {', '.join(map(str, self.ran)) or 'none'}. "
            + (f"Skipped by the causal mask: {', '.join(map(str, self.skipped))}. " if self.skipped else "")
            + f"Running max m after each key block, {'; '.join(per_row)}. "
            + f"Returned logsumexp L: {lse}. "
            + (
                "Every row matches attention and the exact logsumexp."
                if not wrong
                else f"Rows that do not match attention or the exact logsumexp: {', '.join(wrong)}."
            )
        )

    # ------------------------------------------------------------------ drawing
    def _repr_svg_(self) -> str:
        cw = max(24.0, 48.0 / self.block_k) if self.n_k * max(24.0, 48.0 / self.block_k) <= 420 else 420 / self.n_k
        grid_w, grid_h = cw * self.n_k, _ROW_H * self.n_q
        side_x = _LEFT + grid_w + 14
        width = max(side_x + 150, 420)
        notes_h = 18 * len(self.notes)  # a line of its own for each note, between the grid and the legend
        height = _TOP + grid_h + 52 + notes_h - (16 if not self.trace else 0)
        uid = next(_ids)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'width="100%" style="max-width:{width:.0f}px;height:auto" role="img" '
            f'aria-labelledby="ft-title-{uid}" aria-describedby="ft-desc-{uid}" '
            'font-family="sans-serif" font-size="11">',
            f'<title id="ft-title-{uid}">{escape(self.title)}</title>',
            f'<desc id="ft-desc-{uid}">{escape(self.description())}</desc>',
            '<g fill="currentColor">',
            f'<text x="{_LEFT}" y="14">keys \u2192 (shaded: the query sees the key)</text>',
        ]
        for j in range(self.n_k):
            out.append(f'<text x="{_LEFT + cw * (j + 0.5):.1f}" y="{_TOP - 6}" text-anchor="middle">{j}</text>')
        for i in range(self.n_q):
            y = _TOP + _ROW_H * (i + 0.5) + 4
            out.append(f'<text x="{_LEFT - 6}" y="{y:.1f}" text-anchor="end">q{i}</text>')
        out.append(f'<text x="{side_x:.1f}" y="{_TOP - 6}">L</text><text x="{side_x + 70:.1f}" y="{_TOP - 6}">row</text>')
        # visible scores, faint
        for i in range(self.n_q):
            for j in range(self.n_k):
                if self.visible[i][j]:
                    out.append(
                        f'<rect x="{_LEFT + cw * j + 1:.1f}" y="{_TOP + _ROW_H * i + 1}" '
                        f'width="{cw - 2:.1f}" height="{_ROW_H - 2}" fill-opacity="0.13"/>'
                    )
        out.append("</g>")
        # tiles: ran (solid, with each row's running max after it) or skipped (dashed)
        for a in range(self._blocks(self.n_q, self.block_q)):
            for b in range(self._blocks(self.n_k, self.block_k)):
                r0, c0 = a * self.block_q, b * self.block_k
                rows, cols = min(self.block_q, self.n_q - r0), min(self.block_k, self.n_k - c0)
                x, y = _LEFT + cw * c0, _TOP + _ROW_H * r0
                w, h = cw * cols, _ROW_H * rows
                if (a, b) in self.m_after:
                    order = self.trace_index(a, b) + 1
                    out.append(
                        f'<rect x="{x + 2:.1f}" y="{y + 2:.1f}" width="{w - 4:.1f}" height="{h - 4:.1f}" '
                        f'fill="none" stroke="{RAN_COLOR}" stroke-width="2">'
                        f"<title>{escape(f'tile ({a}, {b}): queries {r0}-{r0 + rows - 1}, keys {c0}-{c0 + cols - 1}, ran {order}th')}</title></rect>"
                    )
                    before = [self.m_after[a, c] for c in range(b) if (a, c) in self.m_after]
                    for t, m in enumerate(self.m_after[a, b]):
                        # an arrow where the max grew over a finite one: alpha < 1 rescaled l and acc
                        arrow = " \u2191" if before and -math.inf < before[-1][t] < m else ""
                        out.append(
                            f'<text x="{x + w / 2:.1f}" y="{y + _ROW_H * (t + 0.5) + 4:.1f}" '
                            f'text-anchor="middle" fill="currentColor" font-weight="bold">'
                            f"{escape(_fmt_m(m))}{arrow}</text>"
                        )
                elif (a, b) in self.skipped:
                    out.append(
                        f'<rect x="{x + 2:.1f}" y="{y + 2:.1f}" width="{w - 4:.1f}" height="{h - 4:.1f}" '
                        'fill="none" stroke="currentColor" stroke-opacity="0.6" stroke-dasharray="3 3">'
                        f"<title>{escape(f'tile ({a}, {b}): skipped')}</title></rect>"
                    )
        # per row: L and whether the row is right
        out.append('<g fill="currentColor">')
        for i in range(self.n_q):
            y = _TOP + _ROW_H * (i + 0.5) + 4
            lse = self.lse[i] if i < len(self.lse) else None
            text = _fmt_m(float(lse)) if isinstance(lse, (int, float)) and not isinstance(lse, bool) else "?"
            if text not in ("\u2212\u221e", "?") and abs(float(lse)) < 100:
                text = f"{float(lse):.3f}"
            out.append(f'<text x="{side_x:.1f}" y="{y:.1f}">{escape(text)}</text>')
            if self.rows_ok[i]:
                out.append(f'<text x="{side_x + 70:.1f}" y="{y:.1f}">\u2713 right</text>')
            else:
                out.append(f'<text x="{side_x + 70:.1f}" y="{y:.1f}" fill="{WRONG_COLOR}" font-weight="bold">\u2717 wrong</text>')
        # notes on the run as a whole, each on a line of its own below the grid: they cover nothing
        for n, note in enumerate(self.notes):
            out.append(
                f'<text x="{_LEFT}" y="{_TOP + grid_h + 20 + 18 * n}" fill="{WRONG_COLOR}" '
                f'font-weight="bold">\u2717 {escape(note)}</text>'
            )
        # legend
        ly = _TOP + grid_h + 22 + notes_h
        out.append(
            f'<rect x="{_LEFT}" y="{ly - 10}" width="18" height="12" fill="none" stroke="{RAN_COLOR}" stroke-width="2"/>'
            f'<text x="{_LEFT + 24}" y="{ly}">tile that ran: running max m of each row after it '
            "(\u2191 it grew: \u03b1 &lt; 1)</text>"
        )
        if self.trace:
            out.append(
                f'<rect x="{_LEFT}" y="{ly + 6}" width="18" height="12" fill="none" stroke="currentColor" '
                'stroke-opacity="0.6" stroke-dasharray="3 3"/>'
                f'<text x="{_LEFT + 24}" y="{ly + 16}">tile skipped (every score masked)</text>'
            )
        out.append("</g></svg>")
        return "\n".join(out)

    def trace_index(self, a: int, b: int) -> int:
        """Position in the trace of tile (a, b) (its last entry, if the function logged it twice)."""
        found = 0
        for n, (r0, c0, _) in enumerate(self.trace):
            if (r0 // self.block_q, c0 // self.block_k) == (a, b):
                found = n
        return found

    def _repr_html_(self) -> str:
        return f'<div class="flash-tiles">{self._repr_svg_()}</div>'
