"""Copy the self-hosted runtime into ``_static`` (HTML builders only).

What lands in the built site, all served from the same origin:

- ``_static/pyodide/``: the Pyodide 0.26.2 core from the npm package
  (pyodide.js, pyodide.asm.js, pyodide.asm.wasm, python_stdlib.zip,
  pyodide-lock.json);
- ``_static/pyodide_cells/``: our page script and worker, bundled by esbuild
  with CodeMirror 6; the cell runner (Python) and the stylesheet;
- ``_static/viz/viz-global.js``: Graphviz compiled to WebAssembly (@viz-js/viz);
- ``_static/mathjax/``: MathJax 3 (tex-chtml and the files it loads lazily);
- ``_static/wheels/``: the ``labs`` wheel, built from ``src/labs`` for this build.
"""

from __future__ import annotations

import json
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
PYODIDE_VERSION = "0.26.2"
PYODIDE_FILES = (
    "pyodide.js",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
# MathJax loads some components lazily (menu, accessibility, TeX extensions):
# copy the folders it may ask for along with the combined tex-chtml bundle.
MATHJAX_PARTS = ("tex-chtml.js", "a11y", "adaptors", "input", "output", "sde", "sre", "ui")



def _node_modules(app: Sphinx) -> Path:
    path = Path(app.config.pyodide_cells_node_modules)
    if not path.is_absolute():
        path = Path(app.confdir) / path
    if not (path / "pyodide" / "package.json").is_file():
        raise ExtensionError(
            f"pyodide_cells: no npm packages in {path} (expected pyodide@{PYODIDE_VERSION} "
            "there); run `npm ci` in the project root first"
        )
    version = json.loads((path / "pyodide" / "package.json").read_text())["version"]
    if version != PYODIDE_VERSION:
        raise ExtensionError(
            f"pyodide_cells: node_modules has pyodide {version}, expected {PYODIDE_VERSION}; run `npm ci`"
        )
    return path


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dst)


def bundle_js(node_modules: Path, outdir: Path, snapshot: str = "") -> None:
    """Bundle the page script (with CodeMirror 6) and the worker with esbuild.

    ``snapshot`` is compiled into the worker as ``SNAPSHOT_KEY`` (see
    :func:`snapshot_key`): the worker, not the pages, carries it, so a page
    that an incremental build did not rewrite can never name a stale one.
    """
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.exists():
        raise ExtensionError(f"pyodide_cells: esbuild not found at {esbuild}; run `npm ci`")
    js = HERE / "js"
    # The page script is an ES module (it finds _static/ from import.meta.url);
    # the worker is a classic script (it loads Pyodide with importScripts).
    for entry, fmt in (("cells.js", "esm"), ("worker.js", "iife")):
        cmd = [
            str(esbuild),
            str(js / entry),
            "--bundle",
            "--minify",
            "--sourcemap",
            f"--format={fmt}",
            "--target=es2020",
            f"--outfile={outdir / entry}",
            "--log-level=warning",
        ]
        if entry == "worker.js":
            cmd.append(f"--define:SNAPSHOT_KEY={json.dumps(snapshot)}")
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=node_modules.parent)
        if proc.returncode != 0:
            raise ExtensionError(f"pyodide_cells: esbuild failed on {entry}:\n{proc.stderr}")


def build_labs_wheel(project_root: Path, outdir: Path) -> str:
    """Build the ``labs`` wheel with pip + the project's build backend; return its file name."""
    outdir.mkdir(parents=True, exist_ok=True)
    for old in outdir.glob("*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--quiet", "--wheel-dir", tmp, str(project_root)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise ExtensionError(f"pyodide_cells: building the labs wheel failed:\n{proc.stderr}")
        wheels = list(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            raise ExtensionError(f"pyodide_cells: expected one wheel, got {wheels}")
        shutil.copy2(wheels[0], outdir / wheels[0].name)
        return wheels[0].name


def on_builder_inited(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    node_modules = _node_modules(app)
    static = Path(app.outdir) / "_static"
    for name in PYODIDE_FILES:
        _copy(node_modules / "pyodide" / name, static / "pyodide" / name)
    for part in MATHJAX_PARTS:
        src = node_modules / "mathjax" / "es5" / part
        if src.exists():
            _copy(src, static / "mathjax" / part)
    _copy(node_modules / "@viz-js" / "viz" / "dist" / "viz-global.js", static / "viz" / "viz-global.js")
    ours = static / "pyodide_cells"
    _copy(HERE / "python" / "runner.py", ours / "runner.py")
    _copy(HERE / "css" / "cells.css", ours / "cells.css")
    wheel = ""
    if app.config.pyodide_cells_build_wheel:
        root = Path(app.config.pyodide_cells_project_root)
        if not root.is_absolute():
            root = Path(app.confdir) / root
        wheel = build_labs_wheel(root, static / "wheels")
    # pages.py names the wheel in each page's runtime config.
    app.builder.pyodide_cells_wheel = wheel  # type: ignore[attr-defined]
    bundle_js(node_modules, ours, snapshot=snapshot_key(snapshot_inputs(static, wheel)))


def snapshot_inputs(static: Path, wheel: str) -> list[Path]:
    """What a start-up snapshot holds: the interpreter, the worker's source, the runner, the wheel."""
    files = [static / "pyodide" / "pyodide.asm.wasm", HERE / "js" / "worker.js", HERE / "python" / "runner.py"]
    return files + ([static / "wheels" / wheel] if wheel else [])


def snapshot_key(files: list[Path]) -> str:
    """A digest of what a start-up snapshot holds: the interpreter, the worker, the runner, the wheel.

    The worker keeps one memory snapshot per site in the browser's Cache Storage
    under this key, so a rebuilt site never restores a stale interpreter.
    """
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def setup(app: Sphinx) -> None:
    app.connect("builder-inited", on_builder_inited)
