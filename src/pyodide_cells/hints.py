"""The ``check-hints`` directive: hints for one check, written in the page next to it.

    ```{check-hints} Reused node
    - A node used twice gets a gradient from each use.
    - In ``__add__``'s ``_backward``, does ``grad`` get ``=`` or ``+=``?
    ```

Each list item is one hint, from gentle to precise; none gives the solution.
The hints are not shown in the page's text: the assertion console offers them
one at a time when that check fails (pages.py hands them to it). The argument
must name a check of the page (``# Name: description``), or the build fails.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


class check_hints(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lower case
    """The hints of one check (``check``: its name; ``hints``: the text of each)."""


class CheckHints(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {"class": directives.class_option}

    def run(self) -> list[nodes.Node]:
        holder = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, holder)
        items = [item for item in holder.findall(nodes.list_item)]
        if not items:
            raise self.error(f"check-hints {self.arguments[0]!r}: write the hints as a list, one item per hint")
        hints = [" ".join(item.astext().split()) for item in items]
        return [check_hints(check=self.arguments[0].strip(), hints=hints)]


def page_hints(doctree: nodes.document) -> dict[str, list[str]]:
    """``{check name: [hint, ...]}`` for the page's ``check-hints`` directives."""
    found: dict[str, list[str]] = {}
    for node in doctree.findall(check_hints):
        found.setdefault(node["check"], []).extend(node["hints"])
    return found


def skip(self, node: nodes.Element) -> None:
    """Writers show nothing of the hints: the console gives them out one at a time."""
    raise nodes.SkipNode


def setup(app: Sphinx) -> None:
    app.add_node(check_hints, **{fmt: (skip, None) for fmt in ("html", "latex", "text", "man", "texinfo")})
    app.add_directive("check-hints", CheckHints)
