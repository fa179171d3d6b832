"""A picture of a serving engine's KV block pool: which request holds each physical block, which are cached, which free.

Lab 4. It draws ``labs.engine.LLMEngine.block_pool_view()`` (one
:class:`labs.engine.BlockView` per physical block) as a grid of squares, the
way vLLM's design docs draw the block pool of the prefix cache ("Automatic
Prefix Caching"): a block held by running requests is filled with its
request's colour (a block shared through the prefix cache shows the first
holder's colour and the number of holders), a free block that still holds a
cached prefix is outlined and marked "c", a free block is empty.

The SVG is drawn at its own size (labels 11 px; its HTML box scrolls sideways
where the page is narrower), has role="img" with a <title>
and a <desc> that states the counts, uses currentColor for text and strokes
(light and dark themes), escapes all text and references no URL.
"""

from __future__ import annotations

import itertools
from html import escape

# Eight colours that keep >= 3:1 contrast on white and on near-black (Okabe-Ito, less black and yellow).
PALETTE = ("#2C7FB8", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8E6CC0", "#B8860B")
_ids = itertools.count()  # unique <title>/<desc> ids when a page shows several pictures


class BlockPoolDiagram:
    """The block pool as a grid: held blocks in their request's colour, cached blocks marked, free ones empty.

    Args:
        views: (num_blocks,) objects with ``block`` (int), ``holders`` (tuple of
            request ids) and ``cached`` (bool), as ``LLMEngine.block_pool_view()`` returns.
        title: the SVG <title> (escaped).
        columns: squares per row, >= 1.

    Raises TypeError when a view lacks those attributes, ValueError when
    ``views`` is empty or ``columns`` < 1.

    >>> from labs.engine import BlockView
    >>> d = BlockPoolDiagram([BlockView(0, ("a",), True), BlockView(1, (), True), BlockView(2, (), False)])
    >>> d.counts()
    {'in use': 1, 'cached': 1, 'free': 1}
    >>> svg = d._repr_svg_(); svg.startswith("<svg"), "1 in use, 1 cached, 1 free" in svg
    (True, True)
    """

    CELL, GAP, LEFT, TOP = 26, 4, 8, 30

    def __init__(self, views, title: str = "KV block pool", columns: int = 16):
        self.views = list(views)
        if not self.views:
            raise ValueError("views is empty: expected one BlockView per physical block (LLMEngine.block_pool_view())")
        for i, v in enumerate(self.views):
            if not all(hasattr(v, a) for a in ("block", "holders", "cached")):
                raise TypeError(f"views[{i}] = {v!r:.60}: expected a BlockView (block, holders, cached)")
        if isinstance(columns, bool) or not isinstance(columns, int) or columns < 1:
            raise ValueError(f"columns = {columns!r}; expected an int >= 1")
        self.title, self.columns = str(title), columns
        order = []  # request ids in the order they first appear: a request keeps its colour while it runs
        for v in self.views:
            order += [h for h in v.holders if h not in order]
        self.colours = {rid: PALETTE[i % len(PALETTE)] for i, rid in enumerate(order)}

    def counts(self) -> dict:
        """Blocks per state: ``{"in use": n, "cached": n, "free": n}`` (cached = free but holding a prefix)."""
        out = {"in use": 0, "cached": 0, "free": 0}
        for v in self.views:
            out["in use" if v.holders else ("cached" if v.cached else "free")] += 1
        return out

    def description(self) -> str:
        """Plain-text summary (the <desc>): the counts and each request's blocks."""
        c = self.counts()
        held = "; ".join(f"request {rid}: blocks {[v.block for v in self.views if rid in v.holders]}" for rid in self.colours)
        return f"{len(self.views)} physical blocks: {c['in use']} in use, {c['cached']} cached, {c['free']} free." + (
            f" {held}." if held else ""
        )

    def _repr_svg_(self) -> str:
        n, cols, step = len(self.views), min(self.columns, len(self.views)), self.CELL + self.GAP
        rows = -(-n // cols)
        legend = list(self.colours.items())  # every request coloured, holding blocks or not
        width = max(self.LEFT * 2 + cols * step, 300)
        legend_top = self.TOP + rows * step + 8
        height = legend_top + 20 * (1 + (len(legend) + 3) // 4) + 4
        uid = next(_ids)
        c = self.counts()
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'style="min-width:{width}px;max-width:{width}px;height:auto" role="img" class="block-pool" '
            f'aria-labelledby="pool-title-{uid}" aria-describedby="pool-desc-{uid}" '
            'font-family="system-ui, sans-serif" font-size="11" fill="currentColor">',
            f'<title id="pool-title-{uid}">{escape(self.title)}</title>',
            f'<desc id="pool-desc-{uid}">{escape(self.description())}</desc>',
            f'<text x="{self.LEFT}" y="18">{escape(self.title)}: {c["in use"]} in use, {c["cached"]} cached, {c["free"]} free</text>',
        ]
        for i, v in enumerate(self.views):
            x, y = self.LEFT + (i % cols) * step, self.TOP + (i // cols) * step
            box = f'x="{x}" y="{y}" width="{self.CELL}" height="{self.CELL}" rx="3"'
            if v.holders:
                out.append(f'<rect {box} fill="{self.colours[v.holders[0]]}" stroke="currentColor"/>')
                if len(v.holders) > 1:  # shared through the prefix cache
                    out.append(
                        f'<text x="{x + self.CELL / 2}" y="{y + 17}" text-anchor="middle" '
                        f'fill="#fff" font-weight="bold">{len(v.holders)}</text>'
                    )
            elif v.cached:
                out.append(
                    f'<rect {box} fill="none" stroke="currentColor" stroke-width="2" stroke-dasharray="3 2"/>'
                    f'<text x="{x + self.CELL / 2}" y="{y + 17}" text-anchor="middle">c</text>'
                )
            else:
                out.append(f'<rect {box} fill="none" stroke="currentColor" stroke-opacity="0.45"/>')
        for i, (rid, colour) in enumerate(legend):
            x, y = self.LEFT + (i % 4) * 110, legend_top + 20 * (i // 4)
            out.append(
                f'<rect x="{x}" y="{y}" width="12" height="12" fill="{colour}"/>'
                f'<text x="{x + 17}" y="{y + 10}">request {escape(str(rid))[:14]}</text>'
            )
        y = legend_top + 20 * ((len(legend) + 3) // 4)
        out.append(f'<text x="{self.LEFT}" y="{y + 10}">number: requests sharing a block · c: cached, free · empty: free</text>')
        out.append("</svg>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        # Drawn at its own size, never scaled down: on a phone its 11 px labels stay 11 px, and the
        # picture scrolls sideways in its box rather than shrinking them to 7 px.
        return f'<div class="block-pool-picture" style="overflow-x:auto">{self._repr_svg_()}</div>'


class ServingReport:
    """A live engine's picture: its running figures, each request's text so far, and the block pool.

    Args:
        engine: a ``labs.engine.LLMEngine`` whose model has a tokenizer.
        seconds: wall-clock seconds since serving started (for tokens per second), >= 0.

    Rendered as HTML: one line of figures (tokens per second, blocks in use,
    prefix hit rate, preemptions), a <pre> with one line per request (its
    generated text underlined in the request's colour in the pool), and the
    pool's SVG (:class:`BlockPoolDiagram`). All text is escaped.

    >>> from labs.engine import LLMEngine
    >>> from labs.tiny_lm import ModelConfig, TinyLM
    >>> engine = LLMEngine(TinyLM.random(ModelConfig(8, 8, 1, 2, 16)), num_blocks=4, block_size=2)
    >>> rid = engine.add_request([1, 2, 3], max_new_tokens=2)
    >>> _ = engine.step()
    >>> r = ServingReport(engine, seconds=0.5)
    >>> r.summary()
    '1 tokens in 1 steps, 0.50 s (2 tokens/s); blocks in use 2 of 4; prefix hit rate 0%; preemptions 0'
    >>> "<svg" in r._repr_html_()
    True
    """

    def __init__(self, engine, seconds: float):
        self.engine, self.seconds = engine, max(float(seconds), 0.0)
        self.pool = BlockPoolDiagram(engine.block_pool_view(), title="KV block pool")
        self.pool.colours = {rid: PALETTE[i % len(PALETTE)] for i, rid in enumerate(engine.requests)}  # stable

    def summary(self) -> str:
        """The running figures, one line."""
        s, kv = self.engine.stats, self.engine.kv
        rate = s.tokens_generated / self.seconds if self.seconds > 0 else 0.0
        return (
            f"{s.tokens_generated} tokens in {s.steps} steps, {self.seconds:.2f} s ({rate:.0f} tokens/s); "
            f"blocks in use {s.blocks_in_use} of {kv.num_blocks}; prefix hit rate {s.prefix_hit_rate:.0%}; "
            f"preemptions {s.preemptions}"
        )

    def _repr_html_(self) -> str:
        decode = self.engine.model.tokenizer.decode
        lines = []
        for rid, request in self.engine.requests.items():
            style = f' style="border-bottom:3px solid {self.pool.colours[rid]}"'
            lines.append(
                f"{escape(str(rid))[:14]:>3} {request.status:8} {escape(decode(request.prompt_ids))}"
                f"<b{style}>{escape(decode(request.output_ids))}</b>"
            )
        return (
            f'<div class="serving-report"><p>{escape(self.summary())}</p>'
            f'<pre style="white-space:pre-wrap">{chr(10).join(lines)}</pre>{self.pool._repr_html_()}</div>'
        )
