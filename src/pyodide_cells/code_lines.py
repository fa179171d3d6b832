"""A cell's code, laid out at build time as its editor will lay it out.

A cell's editor (CodeMirror, js/page/editor.js) takes the place of its code when the
cell comes onto the screen. The editor numbers its lines in a gutter, wraps a
line too long for the box, and continues a wrapped line under its own
indentation. Pygments' ``<pre>`` did none of these: where a line wrapped in the
editor, the cell grew as its editor was made and everything below it moved (on
a phone, most cells; at 1280 px, a cell in three). So each line of a cell's
code is written here as a block of its own, with its line number and its
hanging indent, and cells.css draws them in the editor's geometry; a test
compares the two heights for every cell at phone and desktop widths
(tests/browser/test_edits_and_output.py).

The hanging indent is the editor's rule: a line's leading whitespace, a tab
counting as ``TAB_SIZE`` columns, when the line has more than that. js/page/codelines.js
holds the same rule for the page and the editor.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
    from sphinx.application import Sphinx

TAB_SIZE = 4  # Python's indent (PEP 8), as the editor's indentUnit
_PRE = re.compile(r"<pre>(.*?)</pre>", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def hanging_columns(line: str, tab_size: int = TAB_SIZE) -> int:
    """Columns a wrapped part of ``line`` starts at: its leading whitespace, 0 for none or all.

    >>> hanging_columns("        return x"), hanging_columns("\\tx = 1"), hanging_columns("x"), hanging_columns("    ")
    (8, 4, 0, 0)
    """
    lead = len(line) - len(line.lstrip(" \t"))
    columns = lead + (tab_size - 1) * line[:lead].count("\t")
    return columns if 0 < columns < len(line) else 0


def lined(highlighted: str) -> str:
    """Pygments' HTML for a block, with each line a ``pc-line`` block and the ``<pre>`` a ``pc-lines`` one.

    Pygments closes its spans at every line end, so a line's HTML stands alone.
    The text of the block (what copying it or the page's script reads) is unchanged.
    Raises ValueError if ``highlighted`` holds no ``<pre>``.

    >>> lined('<div class="highlight"><pre><span></span>def f():\\n    pass\\n</pre></div>')
    '<div class="highlight"><pre class="pc-lines" style="--pc-digits: 1"><span class="pc-line"><span></span>def f():\\n</span><span class="pc-line" style="--pc-indent: 4">    pass\\n</span></pre></div>'
    """
    match = _PRE.search(highlighted)
    if not match:
        raise ValueError(f"pyodide_cells: expected Pygments' <pre> block, got {highlighted[:80]!r}")
    lines = match.group(1).split("\n")
    if lines[-1] == "":
        lines.pop()
    out = []
    for line in lines:
        indent = hanging_columns(html.unescape(_TAG.sub("", line)))
        style = f' style="--pc-indent: {indent}"' if indent else ""
        out.append(f'<span class="pc-line"{style}>{line}\n</span>')
    # The editor's gutter is as wide as its largest line number, one digit at least.
    digits = len(str(max(len(lines), 1)))
    pre = f'<pre class="pc-lines" style="--pc-digits: {digits}">{"".join(out)}</pre>'
    return highlighted[: match.start()] + pre + highlighted[match.end() :]


def is_cell_code(node: Any) -> bool:
    """True for the literal block of a myst-nb code cell's source (not its outputs, not other code)."""
    return isinstance(node, nodes.literal_block) and getattr(node.parent, "get", lambda _: None)("nb_element") == "cell_code_source"


def on_builder_inited(app: Sphinx) -> None:
    highlighter = getattr(app.builder, "highlighter", None)
    if app.builder.format != "html" or highlighter is None:
        return
    highlight_block = highlighter.highlight_block

    def highlight_cell_lines(source: str, lang: str, *args: Any, location: Any = None, **kwargs: Any) -> str:
        block = highlight_block(source, lang, *args, location=location, **kwargs)
        return lined(block) if is_cell_code(location) else block

    highlighter.highlight_block = highlight_cell_lines


def setup(app: Sphinx) -> None:
    app.connect("builder-inited", on_builder_inited)
