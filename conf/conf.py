"""Sphinx configuration for the lab guide (``sphinx-build -c conf docs build/html``)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
# The cell runtime extension lives in src/ beside (not inside) labs; labs must
# also be importable by the Jupyter kernel myst-nb starts to execute the pages.
sys.path.insert(0, str(SRC))
os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])

# The pages' cells run at build time in a Jupyter kernel that myst-nb starts.
# Over TCP (the only transport myst-nb asks for) ipykernel warns at every start
# that the local connection is not encrypted, and nbclient logs each start at
# INFO: neither says anything about the pages. The kernel gets a profile of
# its own, under build/, that keeps its log to errors.
KERNEL_PROFILE = ROOT / "build" / "ipython" / "profile_default"
KERNEL_PROFILE.mkdir(parents=True, exist_ok=True)
(KERNEL_PROFILE / "ipython_kernel_config.py").write_text('c.IPKernelApp.log_level = "ERROR"\n')
os.environ["IPYTHONDIR"] = str(KERNEL_PROFILE.parent)
logging.getLogger("traitlets").setLevel(logging.WARNING)

project = "AI-Systems Lab Guide"
author = "The lab guide authors"
copyright = "2026, the lab guide authors"
release = "0.1.0"

extensions = [
    "myst_nb",
    "sphinx_design",
    "sphinxcontrib.katex",
    "pyodide_cells",
]

root_doc = "index"
exclude_patterns = ["_build", "_generated", "**.ipynb_checkpoints"]
nitpicky = True

# --- MyST / myst-nb ---------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_raise_on_error = True  # a failing build-time cell fails the build
nb_execution_timeout = 120
nb_merge_streams = True
# Markdown output (IPython.display.Markdown, _repr_markdown_) is read as MyST, so its $math$
# renders at build time as it does live in the page (js/page/richtext.js).
nb_render_markdown_format = "myst"

# --- Math: rendered to HTML at build time by KaTeX (sphinxcontrib-katex) -----
# No math script runs in the page, so nothing competes with Python's start-up
# for the CPU; the stylesheet and fonts come from the npm package (assets.py),
# and node renders with that same package's katex.min.js.
katex_prerender = True
katex_css_path = "katex/katex.min.css"
katex_js_path = str(ROOT / "node_modules" / "katex" / "dist" / "katex.min.js")

# --- HTML ------------------------------------------------------------------
html_theme = "furo"
html_title = "AI-Systems Lab Guide"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": True,
}
html_permalinks_icon = "#"

# --- The cell runtime (src/pyodide_cells) ----------------------------------
pyodide_cells_node_modules = str(ROOT / "node_modules")
pyodide_cells_project_root = str(ROOT)
sd_card_legacy_separators = False
html_favicon = "favicon.svg"
