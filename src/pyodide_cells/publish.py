"""What a static host needs beside the pages, written after every HTML build.

- ``_headers``: the server's header policy (:func:`pyodide_cells.serve.policy`)
  for hosts that read that file (Netlify, Cloudflare Pages);
- ``sw.js``: the service worker (``js/offline/sw.js``), with the site's version and
  the files it keeps for offline use compiled in. The version is a digest of
  those files, so any change to the site (a page, a ``labs`` module, the
  runtime) is a new version, which browsers pick up on their next visit.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from .assets import _node_modules
from .serve import ISOLATION, headers_file

HERE = Path(__file__).parent
# Not kept for offline use: what the pages do not load (sources, source maps,
# Sphinx's inventory), and the site's start-up snapshot (8.8 MB; a browser that
# restored it keeps it in OPFS). The sources of the precompiled standard library
# are kept: a traceback offline shows its lines.
SKIP_SUFFIXES = (".map", ".inv", ".buildinfo", ".txt", ".br", ".bin")  # .br: the server's Brotli copies
OWN = ("sw.js", "_headers")


def offline_files(outdir: Path) -> list[str]:
    """The site's files the service worker keeps, as paths relative to ``outdir``, sorted."""
    files = []
    for path in outdir.rglob("*"):
        rel = path.relative_to(outdir).as_posix()
        if not path.is_file() or rel in OWN or path.suffix in SKIP_SUFFIXES:
            continue
        parts = rel.split("/")
        if any(part.startswith(".") or part == "_sources" for part in parts):
            continue
        if parts[:2] == ["_static", "pyodide"] and parts[-1] == "python_stdlib.zip":
            continue  # Pyodide's own (?plain-start's); the worker loads the precompiled python_stdlib-<key>.zip
        if rel == "_static/pyodide_cells/boot.js":
            continue  # inlined into each page with cells (pages.py); built for that and for the tests
        files.append(rel)
    return sorted(files)


def site_version(outdir: Path, files: list[str]) -> str:
    """A digest of ``files`` (names and contents): the service worker's version."""
    digest = hashlib.sha256()
    for rel in files:
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256((outdir / rel).read_bytes()).digest())
    return digest.hexdigest()[:16]


def write_service_worker(node_modules: Path, outdir: Path) -> str:
    """Bundle ``js/offline/sw.js`` into ``outdir/sw.js`` for the site as built; return its version."""
    files = offline_files(outdir)
    version = site_version(outdir, files)
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.exists():
        raise ExtensionError(f"pyodide_cells: esbuild not found at {esbuild}; run `npm ci`")
    cmd = [
        str(esbuild),
        str(HERE / "js" / "offline" / "sw.js"),
        "--bundle",
        "--minify",
        "--format=iife",
        "--target=es2020",
        "--log-level=warning",
        f"--outfile={outdir / 'sw.js'}",
        f"--define:SW_VERSION={json.dumps(version)}",
        f"--define:SW_FILES={json.dumps(files)}",
        f"--define:SW_HEADERS={json.dumps(ISOLATION)}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=node_modules.parent)
    if proc.returncode != 0:
        raise ExtensionError(f"pyodide_cells: esbuild failed on sw.js:\n{proc.stderr}")
    return version


def on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    (outdir / "_headers").write_text(headers_file(outdir))
    write_service_worker(_node_modules(app), outdir)


def setup(app: Sphinx) -> None:
    app.connect("build-finished", on_build_finished)
