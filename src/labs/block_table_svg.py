"""Block-table picture for Lab 3: each sequence's logical blocks -> physical blocks.

Draws what Kwon et al., "Efficient Memory Management for Large Language Model
Serving with PagedAttention" (SOSP 2023), show in Figures 6-8: the block table
of every sequence as a row of logical blocks, a line from each to its physical
block in the pool, filled slots shaded, and shared blocks (after a fork) marked
with their reference count ("×2"). Plain SVG text, no scripts and no external
URLs; text and strokes use currentColor so it reads in light and dark themes.
"""

from __future__ import annotations

import itertools
from html import escape

_ids = itertools.count()  # unique ids for <title>/<desc> when a page shows several diagrams
SHARED = "#d97706"  # amber: contrast >= 3:1 on white and on near-black backgrounds
WRONG = "#e11d48"  # rose: a reference count that disagrees with the tables; >= 3:1 on both themes
BW, BH = 64, 30  # block box width, height (px)
ROW, POOL_ROW = 54, 38  # vertical stride of a sequence row (block + wiring gutter), of a pool block
LABEL_W, GAP = 96, 110  # width of the sequence-label column, gap before the pool
# The largest pool drawn: one row of 38 px per physical block makes a 39,000 px picture at 1,024
# blocks; a pool of 2**62 would never finish drawing (or counting its references).
MAX_DRAWN_BLOCKS = 1024


def _esc(text) -> str:
    return escape(str(text), quote=True)


def _slots(x: float, y: float, filled: int, block_size: int) -> list[str]:
    """Slot strip of one block: one cell per slot (bar for large blocks), filled ones shaded."""
    w = BW - 8
    if block_size > 32:  # too many cells to read: a proportional bar
        return [
            f'<rect x="{x + 4}" y="{y + 18}" width="{w}" height="8" fill="none" stroke="currentColor" stroke-opacity="0.4"/>',
            f'<rect x="{x + 4}" y="{y + 18}" width="{w * filled / block_size:.2f}" height="8" '
            f'fill="currentColor" fill-opacity="0.45"/>',
        ]
    cell = w / block_size
    return [
        f'<rect x="{x + 4 + i * cell:.2f}" y="{y + 18}" width="{cell:.2f}" height="8" '
        f'fill="currentColor" fill-opacity="{0.5 if i < filled else 0.08}" stroke="currentColor" '
        f'stroke-opacity="0.25" stroke-width="0.5"/>'
        for i in range(block_size)
    ]


class BlockTableDiagram:
    """SVG picture of block tables over a pool of physical blocks.

    Args:
        source: a ``labs.paged_attention.BlockManager``, or a list of
            ``(seq_id, block_table, num_tokens)`` where block_table is a list of
            physical block ids (or a BlockTable).
        num_blocks: pool size in physical blocks (taken from a manager).
        block_size: token slots per block (taken from a manager).
        ref_counts: (num_blocks,) reference counts; default from the manager,
            or the number of tables that map each block.
        title: the <title>; default names the block size.

    Raises ValueError for a block id outside the pool, a token count that does
    not fit the table, a missing pool size, or a pool of more than
    MAX_DRAWN_BLOCKS (1,024) blocks. Source: Kwon et al. 2023, Fig. 6-8.

    >>> from labs.paged_attention import BlockManager
    >>> m = BlockManager(num_blocks=6, block_size=4)
    >>> _ = m.add_sequence("a"); _ = m.append("a", 6); _ = m.fork("a", "b")
    >>> svg = BlockTableDiagram(m)._repr_svg_()
    >>> svg.startswith("<svg"), "×2" in svg
    (True, True)
    """

    def __init__(
        self,
        source,
        num_blocks: int | None = None,
        block_size: int | None = None,
        ref_counts=None,
        title: str | None = None,
        cached=None,
    ):
        if hasattr(source, "allocator") and isinstance(getattr(source, "tables", None), dict):
            # a manager that keeps plain lists (labs.block_sharing's, or the learner's in exercise 2)
            pool = source.allocator
            num_blocks = pool.num_blocks if num_blocks is None else num_blocks
            block_size = pool.block_size if block_size is None else block_size
            if ref_counts is None:
                ref_counts = [pool.ref_count(b) for b in range(pool.num_blocks)]
            if cached is None and isinstance(getattr(source, "cached", None), dict):
                cached = list(source.cached.values())
            source = [(s, list(t), source.lengths[s]) for s, t in source.tables.items()]
        elif hasattr(source, "allocator") and hasattr(source, "seq_ids"):  # a BlockManager
            pool = source.allocator
            num_blocks = pool.num_blocks if num_blocks is None else num_blocks
            block_size = pool.block_size if block_size is None else block_size
            if ref_counts is None:
                ref_counts = [pool.ref_count(b) for b in range(pool.num_blocks)]
            source = [(s, source.table(s).physical_blocks, source.table(s).num_tokens) for s in source.seq_ids]
        entries = []
        for seq_id, table, num_tokens in source:
            if hasattr(table, "physical_blocks"):
                block_size = table.block_size if block_size is None else block_size
                table = table.physical_blocks
            entries.append((seq_id, list(table), num_tokens))
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int >= 1, got {value!r} ({type(value).__name__})")
        if num_blocks < 1 or block_size < 1:
            raise ValueError(f"need num_blocks >= 1 and block_size >= 1, got {num_blocks!r} and {block_size!r}")
        if num_blocks > MAX_DRAWN_BLOCKS:
            raise ValueError(
                f"num_blocks = {num_blocks:,}: a diagram draws at most {MAX_DRAWN_BLOCKS:,} physical blocks "
                "(labs.block_table_svg.MAX_DRAWN_BLOCKS)"
            )
        if title is not None and not isinstance(title, str):  # checked here, not when drawn
            raise TypeError(f"title must be a str or None, got {title!r} ({type(title).__name__})")
        for seq_id, blocks, n in entries:
            for b in blocks:
                if not isinstance(b, int) or not 0 <= b < num_blocks:
                    raise ValueError(f"sequence {seq_id!r} maps to block {b!r}, outside the pool 0..{num_blocks - 1}")
            if not isinstance(n, int) or not 0 <= n <= len(blocks) * block_size:
                raise ValueError(f"sequence {seq_id!r}: {n!r} tokens do not fit {len(blocks)} blocks of {block_size} slots")
        if ref_counts is None:
            ref_counts = [sum(blocks.count(b) for _, blocks, _ in entries) for b in range(num_blocks)]
        ref_counts = list(ref_counts)
        if len(ref_counts) != num_blocks:
            raise ValueError(f"ref_counts has {len(ref_counts)} entries, expected num_blocks {num_blocks}")
        self.entries, self.num_blocks, self.block_size = entries, num_blocks, block_size
        self.ref_counts = ref_counts
        self.cached = set(cached or ())
        # How many tables map each block: a reference count that disagrees is a bug worth showing.
        self.mapped = [sum(blocks.count(b) for _, blocks, _ in entries) for b in range(num_blocks)]
        self.title = title or f"Block tables: logical blocks mapped to physical blocks (block size {block_size})"

    def description(self) -> str:
        """Plain-text summary for the SVG <desc> (screen readers).

        >>> BlockTableDiagram([("s", [2], 3)], num_blocks=3, block_size=4).description()
        'Sequence s: 3 tokens, logical blocks 0..0 -> physical blocks [2]. 2 of 3 physical blocks free.'
        """
        parts = [f"Sequence {s}: {n} tokens, logical blocks 0..{len(b) - 1} -> physical blocks {b}." for s, b, n in self.entries]
        shared = [f"P{b} (×{c})" for b, c in enumerate(self.ref_counts) if c >= 2]
        if shared:
            parts.append("Shared blocks: " + ", ".join(shared) + ".")
        if self.cached:
            parts.append("In the prefix cache: " + ", ".join(f"P{b}" for b in sorted(self.cached)) + ".")
        wrong = [
            f"P{b} has reference count {c} but {m} table(s) map it"
            for b, (c, m) in enumerate(zip(self.ref_counts, self.mapped))
            if c != m
        ]
        if wrong:
            parts.append("Reference counts disagree: " + "; ".join(wrong) + ".")
        free = sum(1 for c in self.ref_counts if c == 0)
        parts.append(f"{free} of {self.num_blocks} physical blocks free.")
        return " ".join(parts)

    def _repr_svg_(self) -> str:
        """The picture as an SVG string (Jupyter / the lab runtime render it inline)."""
        bs, uid = self.block_size, next(_ids)
        widest = max((len(blocks) for _, blocks, _ in self.entries), default=1)
        x0, top = LABEL_W + 8, 40
        pool_x = x0 + max(widest, 1) * (BW + 8) + GAP
        body_h = max(len(self.entries) * ROW, self.num_blocks * POOL_ROW)
        fan_x = x0 + max(widest, 1) * (BW + 8) + 6  # where the lines leave the rows
        wrong = any(c != m for c, m in zip(self.ref_counts, self.mapped))
        # The badge shows the reference count; the red flag says when it is not the number of tables.
        legend = [
            "shaded = filled slots · dashed = free block",
            "×n = reference count: n block tables map the block (copy-on-write on append)",
        ]
        if self.cached or wrong:
            legend.append(
                " · ".join(
                    ["cached = full block in the prefix cache (kept when free, until evicted)"] * bool(self.cached)
                    + ["count ≠ mapped: the reference count disagrees with the tables"] * wrong
                )
            )
        width = max(pool_x + (250 if wrong else 180), 600)
        height = top + body_h + 20 + 14 * len(legend)
        fill = [0] * self.num_blocks  # tokens held by each physical block
        for _, blocks, n in self.entries:
            for j, b in enumerate(blocks):
                fill[b] = max(fill[b], min(bs, max(0, n - j * bs)))
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
            f'style="max-width:{width}px;height:auto" role="img" '
            f'aria-labelledby="bt-title-{uid} bt-desc-{uid}" font-family="system-ui, sans-serif" '
            f'font-size="11" fill="currentColor">',
            f'<title id="bt-title-{uid}">{_esc(self.title)}</title>',
            f'<desc id="bt-desc-{uid}">{_esc(self.description())}</desc>',
            '<text x="8" y="20" font-weight="600">Sequences (logical blocks)</text>',
            f'<text x="{pool_x}" y="20" font-weight="600">Physical blocks (B = {bs})</text>',
        ]
        for i, (seq_id, blocks, n) in enumerate(self.entries):
            y = top + i * ROW
            label = str(seq_id) if len(str(seq_id)) <= 12 else str(seq_id)[:11] + "…"
            out.append(f'<text x="8" y="{y + 13}">{_esc(label)}</text>')
            out.append(f'<text x="8" y="{y + 26}" font-size="9" opacity="0.75">{n} tokens</text>')
            for j, b in enumerate(blocks):
                x = x0 + j * (BW + 8)
                shared = self.ref_counts[b] >= 2
                stroke = SHARED if shared else "currentColor"
                out.append(
                    f'<rect x="{x}" y="{y}" width="{BW}" height="{BH}" rx="3" fill="none" '
                    f'stroke="{stroke}" stroke-width="{2 if shared else 1}"/>'
                )
                out.append(f'<text x="{x + 4}" y="{y + 12}" font-size="9">L{j} → P{b}</text>')
                out.extend(_slots(x, y, min(bs, max(0, n - j * bs)), bs))
                # Route below the row (each block on its own track of the gutter) so no line
                # crosses another block box; the lines fan out only in the gap before the pool.
                yg, py = y + BH + 4 + (j % 5) * 4, top + b * POOL_ROW + BH / 2
                out.append(
                    f'<polyline points="{x + BW / 2},{y + BH} {x + BW / 2},{yg} {fan_x},{yg} '
                    f'{pool_x - 4},{py}" fill="none" stroke="{stroke}" '
                    f'stroke-opacity="{0.9 if shared else 0.55}" stroke-width="{1.5 if shared else 1}"/>'
                )
                out.append(f'<circle cx="{pool_x - 2}" cy="{py}" r="2.5" fill="{stroke}"/>')
        for b, count in enumerate(self.ref_counts):
            y = top + b * POOL_ROW
            shared = count >= 2
            stroke = SHARED if shared else "currentColor"
            dash = ' stroke-dasharray="3 3" stroke-opacity="0.5"' if count == 0 else ""
            out.append(
                f'<rect x="{pool_x}" y="{y}" width="{BW}" height="{BH}" rx="3" '
                f'fill="{SHARED if shared else "none"}" fill-opacity="0.15" stroke="{stroke}" '
                f'stroke-width="{2 if shared else 1}"{dash}/>'
            )
            # vLLM v1 keeps a free block's prefix cached until the block is handed out again
            state = (" free" if count == 0 else "") + (" cached" if b in self.cached else "")
            out.append(f'<text x="{pool_x + 4}" y="{y + 12}" font-size="9">P{b}{state}</text>')
            out.extend(_slots(pool_x, y, fill[b], bs))
            if shared:
                out.append(
                    f'<rect x="{pool_x + BW + 6}" y="{y + 6}" width="30" height="18" rx="9" '
                    f'fill="{SHARED}" fill-opacity="0.25" stroke="{SHARED}"/>'
                )
                out.append(f'<text x="{pool_x + BW + 21}" y="{y + 19}" text-anchor="middle" font-weight="600">×{count}</text>')
            if count != self.mapped[b]:
                out.append(
                    f'<text x="{pool_x + BW + 42}" y="{y + 19}" fill="{WRONG}" font-weight="600">'
                    f"count {count}, mapped by {self.mapped[b]}</text>"
                )
        for i, line in enumerate(legend):
            y = height - 10 - 14 * (len(legend) - 1 - i)
            out.append(f'<text x="8" y="{y}" font-size="10" opacity="0.8">{_esc(line)}</text>')
        out.append("</svg>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        """The SVG inline in a div: pages inline it, so it follows the theme's colours.

        (A bare ``image/svg+xml`` output is saved as a file and shown through
        ``<img>``, where ``currentColor`` and the accessible title are lost.)
        """
        return f'<div class="block-table-diagram">{self._repr_svg_()}</div>'

    def svg(self) -> str:
        """Same as :meth:`_repr_svg_`, for saving to a file."""
        return self._repr_svg_()
