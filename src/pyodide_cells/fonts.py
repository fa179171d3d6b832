"""Preload, from each page's ``<head>``, the KaTeX fonts its equations use.

A browser asks for a web font only once it lays out text set in it, and when
the font arrives it restyles the whole page (Chromium's "Fonts" style
invalidation). On a lab page of 28,000 elements, a font found late (the online
softmax lab's first ``\\mathcal`` is far down the page) cost a full restyle
while Python was starting, and held up the page's first output. Asked for in
``<head>``, every font has arrived before the first layout.

Which fonts a page uses is read from KaTeX's own stylesheet, not from a list
of ours: each rule that sets a ``KaTeX_*`` font family names the classes that
select it, and a page uses the font when an element of its equations carries
all of them (``.katex`` alone: KaTeX_Main).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx

FONT_FACE = re.compile(r"@font-face\{([^}]*)\}")
RULE = re.compile(r"([^{}@]+)\{([^{}]*)\}")
CLASS_ATTR = re.compile(r'class="([^"]*)"')


def _declared(body: str, prop: str) -> str | None:
    found = re.search(rf"(?:^|;){prop}:([^;]+)", body)
    return found.group(1).strip() if found else None


def font_rules(css: str) -> list[tuple[frozenset[str], str]]:
    """The fonts KaTeX's stylesheet ``css`` sets, as (classes that select one, its woff2 file).

    A rule's selector list is split at commas; the classes of each selector's
    last compound that names a class (``.delimsizing.size1``; ``.delim-size1`` for
    ``.delim-size1>span``) must all be on one element. The face is found by
    family, weight (default 400) and style (default normal) among the
    ``@font-face`` rules; the base ``.katex`` rule (``font:`` shorthand) gives
    KaTeX_Main regular. Raises ValueError when the stylesheet has no
    ``@font-face`` rule (not KaTeX's).

    >>> css = ('@font-face{font-family:KaTeX_Main;font-style:normal;font-weight:400;src:url(fonts/KaTeX_Main-Regular.woff2)}'
    ...        '@font-face{font-family:KaTeX_Caligraphic;font-style:normal;font-weight:400;src:url(fonts/KaTeX_Caligraphic-Regular.woff2)}'
    ...        '.katex .mathcal{font-family:KaTeX_Caligraphic}')
    >>> sorted(font_rules(css), key=str)
    [(frozenset({'katex'}), 'KaTeX_Main-Regular.woff2'), (frozenset({'mathcal'}), 'KaTeX_Caligraphic-Regular.woff2')]
    """
    faces = {}
    for body in FONT_FACE.findall(css):
        woff2 = re.search(r"url\(fonts/([^)]+\.woff2)\)", body)
        family = _declared(body, "font-family")
        if woff2 and family:
            faces[(family, _declared(body, "font-weight") or "400", _declared(body, "font-style") or "normal")] = woff2.group(1)
    if not faces:
        raise ValueError("no @font-face rule with a woff2 file: expected KaTeX's katex.min.css")
    rules = [(frozenset({"katex"}), faces[("KaTeX_Main", "400", "normal")])] if ("KaTeX_Main", "400", "normal") in faces else []
    for selectors, body in RULE.findall(FONT_FACE.sub("", css)):
        family = (_declared(body, "font-family") or "").split(",")[0].strip()
        if not family.startswith("KaTeX_"):
            continue
        weight = _declared(body, "font-weight") or "400"
        style = _declared(body, "font-style") or "normal"
        woff2 = faces.get((family, weight, style))
        if woff2 is None:
            continue
        for selector in selectors.split(","):
            # The last compound that names a class (`.delim-size1>span`: the span's parent).
            compounds = [set(re.findall(r"\.([\w-]+)", c)) for c in re.split(r"[\s>+~]+", selector.strip())]
            classes = next((c for c in reversed(compounds) if c), None)
            if classes:
                rules.append((frozenset(classes), woff2))
    return rules


def fonts_used(html: str, rules: list[tuple[frozenset[str], str]]) -> list[str]:
    """The woff2 files of ``rules`` (font_rules) that an element of ``html`` selects, sorted.

    >>> rules = [(frozenset({"katex"}), "Main.woff2"), (frozenset({"delimsizing", "size1"}), "Size1.woff2")]
    >>> fonts_used('<span class="katex"><span class="delimsizing size1">(</span></span>', rules)
    ['Main.woff2', 'Size1.woff2']
    >>> fonts_used('<span class="delimsizing size2">(</span>', rules)
    []
    """
    if "katex" not in html:
        return []
    elements = {frozenset(attr.split()) for attr in CLASS_ATTR.findall(html)}
    return sorted({woff2 for classes, woff2 in rules if any(classes <= element for element in elements)})


def on_html_page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if app.builder.format != "html":
        return
    rules = getattr(app, "pyodide_cells_katex_fonts", None)
    if rules is None:
        from .assets import _node_modules

        css = _node_modules(app) / "katex" / "dist" / "katex.min.css"
        rules = app.pyodide_cells_katex_fonts = font_rules(css.read_text(encoding="utf-8"))
    links = "".join(
        f'<link rel="preload" href="{context["pathto"]("_static/katex/fonts/" + woff2, 1)}" as="font" type="font/woff2" crossorigin>\n'
        for woff2 in fonts_used(context.get("body", ""), rules)
    )
    context["metatags"] = context.get("metatags", "") + links


def setup(app: Sphinx) -> None:
    # After pages.py, whose boot script (the worker's start) comes first in <head>.
    app.connect("html-page-context", on_html_page_context, priority=600)
