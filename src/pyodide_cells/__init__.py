"""pyodide_cells: make myst-nb ``{code-cell} python`` cells live in the browser.

Cells keep the outputs myst-nb baked in at build time and, on pages that have
cells, become editable and runnable on Pyodide 0.26.2 in a Web Worker. All the
runtime files (Pyodide core, the editor bundle, Graphviz, KaTeX's stylesheet and fonts, the ``labs``
wheel) are copied into the site's ``_static`` folder: nothing is fetched from
another origin.

Only HTML builders get JavaScript; other builders see plain code and outputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__version__ = "0.1.0"


def setup(app: Sphinx) -> dict[str, Any]:
    # Imported here, not with the package: `python -m pyodide_cells.serve` needs
    # the standard library only, not Sphinx.
    from . import assets, code_lines, fonts, hints, katex_socket, pages, precompress, publish, transforms

    app.add_config_value("pyodide_cells_node_modules", "node_modules", "env", str)
    app.add_config_value("pyodide_cells_project_root", ".", "env", str)
    app.add_config_value("pyodide_cells_build_wheel", True, "env", bool)
    # A start-up snapshot made at build time (assets.make_snapshot), restored on fast links.
    app.add_config_value("pyodide_cells_site_snapshot", True, "env", bool)
    transforms.setup(app)
    code_lines.setup(app)
    hints.setup(app)
    assets.setup(app)
    pages.setup(app)
    fonts.setup(app)
    publish.setup(app)
    precompress.setup(app)
    # Every page: equations are on the landing page too, and the sidebar and the
    # landing page's cards show the learner's progress (js/reader/nav.js).
    app.add_css_file("site.css")
    app.add_js_file("pyodide_cells/nav.js", type="module")
    try:
        katex_socket.install()  # sphinxcontrib-katex's flaky server start (see the module)
    except ImportError:
        pass
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
