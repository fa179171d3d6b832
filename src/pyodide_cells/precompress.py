"""Brotli copies of the built site's files, for the guide's server (``serve.py``) to send.

Each compressible file (:data:`pyodide_cells.serve.COMPRESSIBLE`, source maps
aside) gets ``<file>.br`` beside it, made by ``precompress.mjs`` with Node's
zlib. Pyodide's WebAssembly is most of the bytes and the slowest to compress,
so its copy (and the interpreter's JavaScript and lock file) starts when the
build starts, in the background, and the rest follow when the pages are
written. Results are cached by content under ``node_modules/.cache``: an
unchanged file is compressed once per machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from .assets import SITE_SNAPSHOT_NAME, _node_modules
from .serve import COMPRESSIBLE

HERE = Path(__file__).parent
MIN_BYTES = 1024  # below this, headers cost more than compression saves
EARLY = ("pyodide.asm.wasm", "pyodide.asm.js", "pyodide-lock.json")  # under _static/pyodide/


def compressible(outdir: Path) -> list[Path]:
    """The files of ``outdir`` that get a Brotli copy, sorted: the server's compressible types,
    at least :data:`MIN_BYTES`, not source maps and not in hidden or ``_sources`` folders."""
    found = []
    for path in outdir.rglob("*"):
        parts = path.relative_to(outdir).parts
        if any(part.startswith(".") or part == "_sources" for part in parts[:-1]):
            continue
        if path.is_file() and path.name.endswith(COMPRESSIBLE) and not path.name.endswith(".map") \
                and path.stat().st_size >= MIN_BYTES:
            found.append(path)
    return sorted(found)


def is_fresh(path: Path) -> bool:
    """True when ``path`` has a Brotli copy made after it was last written."""
    copy = path.with_name(path.name + ".br")
    return copy.is_file() and copy.stat().st_mtime >= path.stat().st_mtime


def _command(app: Sphinx, files: list[Path]) -> list[str]:
    node = shutil.which("node")
    if node is None:
        raise ExtensionError("pyodide_cells: Node.js (node) is needed to write the Brotli copies")
    cache = _node_modules(app) / ".cache" / "pyodide-cells-brotli"
    return [node, str(HERE / "precompress.mjs"), str(cache), *map(str, files)]


def on_builder_inited(app: Sphinx) -> None:
    app.pyodide_cells_brotli = None
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    # The site's start-up snapshot is early too: of all the files, it takes longest to compress.
    candidates = [static / "pyodide" / name for name in EARLY] + sorted((static / "pyodide_cells").glob(SITE_SNAPSHOT_NAME))
    files = [path for path in candidates if path.is_file() and not is_fresh(path)]
    if files:
        app.pyodide_cells_brotli = subprocess.Popen(
            _command(app, files), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )


def _finish(proc: subprocess.Popen) -> None:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise ExtensionError(f"pyodide_cells: precompress.mjs failed:\n{err}")
    for line in out.splitlines():
        json.loads(line)  # one JSON record per file written, or the script misbehaved


def on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    early = getattr(app, "pyodide_cells_brotli", None)
    if exception is not None or app.builder.format != "html":
        if early is not None:
            early.kill()
            early.wait()
        return
    if early is not None:
        _finish(early)
    rest = [path for path in compressible(Path(app.outdir)) if not is_fresh(path)]
    if rest:
        proc = subprocess.Popen(_command(app, rest), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _finish(proc)


def setup(app: Sphinx) -> None:
    # After assets.py has copied Pyodide's files in, and after publish.py has written sw.js.
    app.connect("builder-inited", on_builder_inited, priority=900)
    app.connect("build-finished", on_build_finished, priority=900)
