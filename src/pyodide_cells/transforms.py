"""Doctree transforms for doctest blocks in MyST pages.

A doctest block in a page is a fenced ``python`` block whose first line starts
with ``>>>``. It ends with a blank line before the closing fence, because
``pytest --doctest-glob="*.md"`` reads the whole page as one doctest and would
otherwise take the fence for expected output (CONTRIBUTING.md, "Checks"). Sphinx keeps
that blank line; :class:`StripDoctestBlankLine` removes it from the rendered
block and marks the block with the ``doctest-block`` class, which the page's
assertion console looks for.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

PROMPT = ">>>"


def is_doctest_block(node: nodes.literal_block) -> bool:
    """True for a literal block holding an interactive Python session."""
    language = node.get("language", "")
    return language in {"python", "pycon", "python3", "py", "default"} and node.astext().lstrip().startswith(PROMPT)


class StripDoctestBlankLine(SphinxTransform):
    """Drop the trailing blank line of doctest blocks and tag them ``doctest-block``."""

    default_priority = 400

    def apply(self, **kwargs) -> None:
        for node in self.document.findall(nodes.literal_block):
            if not is_doctest_block(node):
                continue
            text = node.astext()
            stripped = text.rstrip("\n").rstrip()
            if stripped != text:
                node.children = [nodes.Text(stripped)]
                node.rawsource = stripped
            node["classes"].append("doctest-block")


def setup(app: Sphinx) -> None:
    app.add_transform(StripDoctestBlankLine)
