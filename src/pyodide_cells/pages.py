"""Per-page wiring: pages with live cells get the runtime's CSS, JS and config."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from .check_cells import cells_the_checks_need
from .downloads import download_parts
from .hints import page_hints


def has_code_cells(doctree: nodes.document | None) -> bool:
    """True when the page holds at least one myst-nb code cell."""
    if doctree is None:
        return False
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") == "cell_code":
            return True
    return False


def page_checks(doctree: nodes.document) -> dict[str, list]:
    """The page's doctest blocks (as rendered, in page order) and their checks, read by
    ``labs.checks`` (the engine that runs them in the page and in CI): the console lists
    ``checks`` before they run, and sends ``blocks`` to Python to run them."""
    from labs.checks import parse_block

    blocks = [node.astext() + "\n" for node in doctree.findall(nodes.literal_block) if "doctest-block" in node.get("classes", [])]
    checks = [asdict(check) for index, text in enumerate(blocks) for check in parse_block(text, index)]
    hints = page_hints(doctree)
    unknown = sorted(set(hints) - {c["name"] for c in checks})
    if unknown:
        raise ExtensionError(f"check-hints for checks this page does not have: {unknown}")
    for check in checks:
        check["hints"] = hints.get(check["name"], []) if check["name"] else []
    return {"blocks": blocks, "checks": checks}


def check_cells(doctree: nodes.document, blocks: list[str], names: list[str]) -> list[int]:
    """The cells Check my code runs before the checks (check_cells.cells_the_checks_need), numbered
    as the page numbers its live cells: every code cell, in page order."""
    cells, auto = [], set()
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") != "cell_code":
            continue
        classes = node.get("classes", [])
        source = next(iter(node.findall(nodes.literal_block)), None)
        if "tag_auto-rerun" in classes:
            auto.add(len(cells))
        cells.append(("tag_exercise" in classes, source.astext() if source is not None else ""))
    return cells_the_checks_need(cells, blocks, names, auto)


def checks_use(app: Sphinx, pagename: str) -> list[str]:
    """The names a page's checks take from the learner (front matter ``lab.checks_use``)."""
    lab = app.env.metadata.get(pagename, {}).get("lab") or {}
    if isinstance(lab, str):  # MyST keeps nested front matter as JSON text
        lab = json.loads(lab)
    return sorted((lab.get("checks_use") or {}).keys())


def on_html_page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: nodes.document | None
) -> None:
    if app.builder.format != "html" or not has_code_cells(doctree):
        return
    checks = page_checks(doctree)
    names = checks_use(app, pagename)
    title = next(iter(doctree.findall(nodes.title)), None)
    config = {
        "page": pagename,
        "checksUse": names,
        **checks,
        "checkCells": check_cells(doctree, checks["blocks"], names),
        "download": download_parts(
            doctree, checks["blocks"], title.astext() if title else pagename, pagename.rsplit("/", 1)[-1], page_hints(doctree)
        ),
        "worker": app.pyodide_cells_worker,  # assets.py: versioned once per build
    }
    # The config and the boot script go into <head>, right after the meta tags
    # (the themes put page scripts at the end of <body>): the worker's request
    # leaves before the page's stylesheets and scripts queue up for connections.
    # boot.js as assets.py bundled it (with the protocol it imports), for this build.
    boot = f"window.PYODIDE_CELLS_CONFIG = {json.dumps(config)};\n{app.pyodide_cells_boot_js}"
    context["metatags"] = context.get("metatags", "") + f"\n<script>{boot}</script>\n"
    # Added from html-page-context, these reach this page only (Sphinx >= 3.5).
    app.add_css_file("pyodide_cells/cells.css")
    app.add_js_file("pyodide_cells/cells.js", type="module")


def setup(app: Sphinx) -> None:
    app.connect("html-page-context", on_html_page_context)
