"""Copy the self-hosted runtime into ``_static`` (HTML builders only).

What lands in the built site, all served from the same origin:

- ``_static/pyodide/``: the Pyodide 0.26.2 core from the npm package
  (pyodide.js, pyodide.asm.js, pyodide.asm.wasm, python_stdlib.zip,
  pyodide-lock.json);
- ``_static/pyodide/python_stdlib-<key>.zip``: the modules of the standard
  library a page imports before its first output, as bytecode, and
  ``python_stdlib_rest-<key>.zip``, the rest, which the worker fetches once the
  page is ready (:func:`precompile_bytecode`); the stock zip stays for anyone else;
- ``_static/pyodide_cells/``: our page script and worker, bundled by esbuild
  with CodeMirror 6; the cell runner (Python) and the stylesheet;
- ``_static/viz/viz-global.js``: Graphviz compiled to WebAssembly (@viz-js/viz);
- ``_static/katex/``: KaTeX's stylesheet and fonts, for the equations
  sphinxcontrib-katex renders to HTML at build time (no math script runs in
  the page);
- ``_static/wheels/``: the ``labs`` wheel, built from ``src/labs`` for this build,
  and ``labs-bytecode-<key>.zip``, its modules' bytecode (:func:`precompile_bytecode`);
- ``_static/pyodide_cells/startup-<key>.bin``: the site's start-up snapshot
  (:func:`make_snapshot`), which a first visit on a fast link restores.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
PYODIDE_VERSION = "0.26.2"
# Everything the worker bundle is made from: a change in any of them is a new snapshot key.
WORKER_SOURCES = (
    HERE / "js" / "protocol.js",
    *sorted((HERE / "js" / "protocol").rglob("*.js")),
    *sorted((HERE / "js" / "worker").rglob("*.js")),
    HERE / "make_snapshot.mjs",
    HERE / "limits.json",
    HERE / "python" / "worker_boot.py",
    HERE / "python" / "ipython" / "__init__.py",
    HERE / "python" / "ipython" / "display.py",
)
# The site's start-up snapshot under _static/pyodide_cells/, * being its key (make_snapshot).
SITE_SNAPSHOT_NAME = "startup-*.bin"
PYODIDE_FILES = (
    "pyodide.js",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)


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
        raise ExtensionError(f"pyodide_cells: node_modules has pyodide {version}, expected {PYODIDE_VERSION}; run `npm ci`")
    return path


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dst)


class Bytecode(NamedTuple):
    """File names written by :func:`precompile_bytecode`."""

    stdlib: str  #: in ``_static/pyodide/``: the standard library zip the worker starts with
    labs: str  #: in ``_static/wheels/``: labs bytecode, unpacked over the wheel ("" without one)
    stdlib_rest: str  #: in ``_static/pyodide/``: the rest of the standard library, fetched after start-up


def bundle_js(
    node_modules: Path,
    outdir: Path,
    snapshot: str = "",
    wheel: str = "",
    bytecode: Bytecode = Bytecode("", "", ""),
    site_snapshot: SiteSnapshot | None = None,
) -> None:
    """Bundle the page script (CodeMirror 6 in a chunk of its own) and the worker with esbuild.

    ``snapshot`` (see :func:`snapshot_key`), ``wheel`` (the labs wheel's
    file name), ``bytecode`` (:func:`precompile_bytecode`'s file names) and
    ``site_snapshot`` (:func:`make_snapshot`'s file)
    are compiled into the worker as ``SNAPSHOT_KEY``, ``LABS_WHEEL``,
    ``STDLIB_ZIP``, ``LABS_BYTECODE``, ``STDLIB_REST_ZIP``, ``SITE_SNAPSHOT``, ``SITE_SNAPSHOT_BYTES`` and ``SITE_SNAPSHOT_INTEGRITY``:
    the worker starts loading without waiting for the page,
    and a page that an incremental build did not rewrite cannot name a stale
    file.
    """
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.exists():
        raise ExtensionError(f"pyodide_cells: esbuild not found at {esbuild}; run `npm ci`")
    js = HERE / "js"
    # The page script is an ES module (it finds _static/ from import.meta.url)
    # split in chunks: CodeMirror (editor.js) loads only when a cell needs its
    # editor. The worker is a classic script (it loads Pyodide with importScripts).
    chunks = outdir / "chunks"
    shutil.rmtree(chunks, ignore_errors=True)  # a previous build's, named after their content
    # nav.js (every page: the learner's progress beside the links) and richtext.js (Markdown and
    # LaTeX output, loaded by URL when the first arrives) are bundled on their own: a chunk they
    # shared with cells.js (esbuild's helpers for CommonJS) would be one more request before the
    # page script runs.
    # boot.js is inlined into each page's <head> (pages.py): bundled with the protocol it
    # imports, as a classic script, and with no source map (an inline script has no URL of its own).
    # Each comes out under its own name, wherever its folder in js/ (README.md): the URLs stay put.
    entries = (
        ("page/cells.js", "esm"),
        ("reader/nav.js", "esm"),
        ("page/richtext.js", "esm"),
        ("worker/worker.js", "iife"),
        ("page/boot.js", "iife"),
    )
    for source, fmt in entries:
        entry = Path(source).name
        cmd = [
            str(esbuild),
            str(js / source),
            "--bundle",
            "--minify",
            *([] if entry == "boot.js" else ["--sourcemap"]),
            f"--format={fmt}",
            # ES2022: class fields as written (every browser that runs Pyodide 0.26 has them), so
            # esbuild adds no helper that the chunks would share with the page script.
            "--target=es2022",
            "--log-level=warning",
        ]
        if entry == "cells.js":
            cmd += ["--splitting", f"--outdir={outdir}", "--entry-names=[name]", "--chunk-names=chunks/[name]-[hash]"]
        else:
            cmd.append(f"--outfile={outdir / entry}")
        if entry == "worker.js":
            cmd.append("--loader:.py=text")  # the Python it runs while booting (python/worker_boot.py)
            cmd += [
                f"--define:{name}={json.dumps(value)}"
                for name, value in (
                    ("SNAPSHOT_KEY", snapshot),
                    ("LABS_WHEEL", wheel),
                    ("STDLIB_ZIP", bytecode.stdlib),
                    ("LABS_BYTECODE", bytecode.labs),
                    ("STDLIB_REST_ZIP", bytecode.stdlib_rest),
                    *zip(
                        ("SITE_SNAPSHOT", "SITE_SNAPSHOT_BYTES", "SITE_SNAPSHOT_INTEGRITY"), site_snapshot or SiteSnapshot("", 0, "")
                    ),
                )
            ]
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
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--quiet",
                "--wheel-dir",
                tmp,
                str(project_root),
            ],
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
    katex = node_modules / "katex" / "dist"
    _copy(katex / "katex.min.css", static / "katex" / "katex.min.css")
    for font in (katex / "fonts").glob("*.woff2"):  # every browser that runs Pyodide reads woff2
        _copy(font, static / "katex" / "fonts" / font.name)
    _copy(node_modules / "@viz-js" / "viz" / "dist" / "viz-global.js", static / "viz" / "viz-global.js")
    ours = static / "pyodide_cells"
    _copy(HERE / "python" / "runner.py", ours / "runner.py")
    _copy(HERE / "css" / "cells.css", ours / "cells.css")
    _copy(HERE / "css" / "site.css", static / "site.css")  # every page, not only those with cells
    wheel = ""
    if app.config.pyodide_cells_build_wheel:
        root = Path(app.config.pyodide_cells_project_root)
        if not root.is_absolute():
            root = Path(app.confdir) / root
        wheel = build_labs_wheel(root, static / "wheels")
    bytecode = precompile_bytecode(node_modules / "pyodide", static / "wheels" / wheel if wheel else None, static)
    key = snapshot_key(snapshot_inputs(static, wheel, bytecode.stdlib))
    site_snapshot = None
    if app.config.pyodide_cells_site_snapshot:
        site_snapshot = make_snapshot(node_modules / "pyodide", static, wheel, bytecode, key)
    bundle_js(node_modules, ours, snapshot=key, wheel=wheel, bytecode=bytecode, site_snapshot=site_snapshot)
    app.pyodide_cells_worker = versioned(static, "pyodide_cells/worker.js")
    app.pyodide_cells_boot_js = (ours / "boot.js").read_text()  # inlined into each page with cells (pages.py)
    # What pages name by version (or inline: boot.js): a change writes them all again.
    app.pyodide_cells_bundle = snapshot_key(
        [ours / "cells.js", ours / "worker.js", ours / "cells.css", ours / "nav.js", static / "site.css", ours / "boot.js"]
    )


def versioned(static: Path, path: str) -> str:
    """``path`` (under ``_static/``) with its version as a query: ``pyodide_cells/worker.js?v=1a2b3c4d``.

    The version is the CRC-32 of the built file, as Sphinx gives its own CSS
    and scripts: a server may keep such a URL forever (pyodide_cells.serve
    does), and a rebuilt file gets a new URL.
    Raises FileNotFoundError when the file was not built.
    """
    return f"{path}?v={zlib.crc32((static / path).read_bytes()):08x}"


def pages_to_rewrite(app: Sphinx, env, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """Every page again when the runtime's files changed since the last build (``env-get-outdated``).

    Pages name those files by version (``cells.js?v=…``, ``worker.js?v=…``), and
    servers may keep a versioned URL forever: a page an incremental build did
    not rewrite would name the old version of a file whose content changed.
    """
    bundle = getattr(app, "pyodide_cells_bundle", None)
    before = getattr(env, "pyodide_cells_bundle", None)
    env.pyodide_cells_bundle = bundle
    if bundle is None or before is None or before == bundle:
        return []
    return sorted(env.found_docs - changed - added)


# What precompile_bytecode.mjs runs: the worker's boot, with the Python it boots.
PRECOMPILE_INPUTS = (
    HERE / "precompile_bytecode.mjs",
    HERE / "js" / "worker" / "startup" / "boot_python.js",
    HERE / "python" / "worker_boot.py",
    HERE / "python" / "runner.py",
    HERE / "python" / "ipython" / "__init__.py",
    HERE / "python" / "ipython" / "display.py",
)


def precompile_bytecode(pyodide_dir: Path, wheel: Path | None, static: Path) -> Bytecode:
    """Write the standard library in two parts, and bytecode for labs; return the files' names.

    - ``pyodide/python_stdlib-<key>.zip``: the modules of Pyodide's stdlib zip
      that a page imports before its first output (Pyodide's start, the cell
      runner, every labs module, IPython.display), as bytecode only, and the
      index of the rest. The worker starts Python with it.
    - ``pyodide/python_stdlib_rest-<key>.zip``: everything else, the check's
      modules (doctest, pdb, unittest, ...) as bytecode. The worker fetches it
      once the page is ready (worker_boot.StdlibRest).
    - beside them, ``python_stdlib-<key>-src/`` holds the sources of the
      modules the two zips have as bytecode only;
    - ``wheels/labs-bytecode-<key>.zip`` (with a wheel): ``labs/__pycache__/``
      for every labs module, which the worker unpacks over the wheel.

    Runs ``precompile_bytecode.mjs`` with Node (Pyodide itself compiles the
    bytecode, as unchecked hash-based .pyc files, PEP 552). The names carry a
    digest of the inputs, so browsers never mix old bytecode with a new
    snapshot, and an unchanged build reuses the files.

    Raises :class:`~sphinx.errors.ExtensionError` when Node is missing or fails.
    """
    key = snapshot_key([pyodide_dir / "python_stdlib.zip", *PRECOMPILE_INPUTS, *([wheel] if wheel else [])])[:12]
    names = Bytecode(f"python_stdlib-{key}.zip", f"labs-bytecode-{key}.zip" if wheel else "", f"python_stdlib_rest-{key}.zip")
    out, labs_out, rest_out = static / "pyodide" / names.stdlib, static / "wheels" / names.labs, static / "pyodide" / names.stdlib_rest
    sources = out.parent / f"{out.stem}-src"
    if out.is_file() and rest_out.is_file() and (not wheel or labs_out.is_file()):
        return names
    made = [out, rest_out, sources] + ([labs_out] if wheel else [])
    if _from_cache(pyodide_dir, f"bytecode-{key}", made):
        _remove_older(out, labs_out, names, sources)
        return names
    node = shutil.which("node")
    if node is None:
        raise ExtensionError("pyodide_cells: Node.js (node) is needed to precompile the standard library")
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [node, str(PRECOMPILE_INPUTS[0]), str(pyodide_dir), str(HERE / "python"), str(wheel or ""), str(out), str(rest_out)]
    if wheel:
        labs_out.parent.mkdir(parents=True, exist_ok=True)
        cmd.append(str(labs_out))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not out.is_file() or not rest_out.is_file() or (wheel and not labs_out.is_file()):
        raise ExtensionError(f"pyodide_cells: precompiling the standard library failed:\n{proc.stderr[-2000:]}")
    # The sources the zips hold as bytecode only, one file each, for the worker
    # to fetch when a traceback or inspect.getsource asks for one.
    with zipfile.ZipFile(pyodide_dir / "python_stdlib.zip") as stock:
        for part in (out, rest_out):
            with zipfile.ZipFile(part) as compiled:
                for pyc in compiled.namelist():
                    if pyc.endswith(".pyc"):
                        target = sources / pyc[:-1]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(stock.read(pyc[:-1]))
    _remove_older(out, labs_out, names, sources)
    _to_cache(pyodide_dir, f"bytecode-{key}", made)
    logger.info("pyodide_cells: %s %s %s (%s)", *names, proc.stdout.strip())
    return names


def _remove_older(out: Path, labs_out: Path, names: Bytecode, sources: Path) -> None:
    """Remove earlier builds' standard library and labs bytecode from the site."""
    for old in [
        *out.parent.glob("python_stdlib-*"),
        *out.parent.glob("python_stdlib_rest-*"),
        *labs_out.parent.glob("labs-bytecode-*"),
    ]:
        if old.name not in (*names, sources.name):
            shutil.rmtree(old) if old.is_dir() else old.unlink()


# What Node makes (the precompiled standard library, the start-up snapshot) is kept by its
# inputs' digest outside the site, beside precompress.py's Brotli copies: `nox -s tests` and
# `nox -s docs` wipe the site before they build, and the offline tests build copies of it; an
# unchanged input is worked out once per machine. A key names one content, so a cached file
# is never stale; delete the folder to start again.
def _cache_dir(pyodide_dir: Path, entry: str) -> Path:
    return pyodide_dir.parent / ".cache" / "pyodide_cells" / entry


def _from_cache(pyodide_dir: Path, entry: str, files: list[Path]) -> bool:
    """Copy ``files`` (by name) from the cache ``entry`` into place; False (nothing copied) on a miss."""
    folder = _cache_dir(pyodide_dir, entry)
    if not (folder / ".complete").is_file() or not all((folder / f.name).exists() for f in files):
        return False
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        if (folder / f.name).is_dir():
            shutil.rmtree(f, ignore_errors=True)
            shutil.copytree(folder / f.name, f)
        else:
            shutil.copy2(folder / f.name, f)
    return True


def _to_cache(pyodide_dir: Path, entry: str, files: list[Path]) -> None:
    """Keep ``files`` in the cache ``entry``, marked complete only once all are in (a build cut short leaves no half entry)."""
    folder = _cache_dir(pyodide_dir, entry)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for f in files:
        shutil.copytree(f, folder / f.name) if f.is_dir() else shutil.copy2(f, folder / f.name)
    (folder / ".complete").touch()


class SiteSnapshot(NamedTuple):
    """The file written by :func:`make_snapshot`."""

    name: str  #: in ``_static/pyodide_cells/``
    bytes: int  #: its size
    integrity: str  #: its Subresource Integrity digest, ``sha256-<base64>``: the worker checks it (js/worker/startup/snapshot.js checkIntegrity)


def make_snapshot(pyodide_dir: Path, static: Path, wheel: str, bytecode: Bytecode, key: str) -> SiteSnapshot:
    """Write the site's start-up snapshot; return its name under ``_static/pyodide_cells/``, size and digest.

    ``pyodide_cells/startup-<key>.bin``: a Pyodide memory snapshot of the
    interpreter a page starts (runner and labs imported), made by
    ``make_snapshot.mjs`` in Node from the files the site serves. ``key`` is
    :func:`snapshot_key` of :func:`snapshot_inputs`, so a name is one content
    (served as cacheable forever) and an unchanged build reuses the file.
    Older builds' snapshots are removed.

    Raises :class:`~sphinx.errors.ExtensionError` when Node is missing or fails.
    """
    name = SITE_SNAPSHOT_NAME.replace("*", key)
    out = static / "pyodide_cells" / name
    if not out.is_file() and not _from_cache(pyodide_dir, f"snapshot-{key}", [out]):
        node = shutil.which("node")
        if node is None:
            raise ExtensionError("pyodide_cells: Node.js (node) is needed to make the start-up snapshot")
        stdlib = static / "pyodide" / bytecode.stdlib
        # Relative to the worker, as the worker gives them.
        sources, rest = f"../pyodide/{stdlib.stem}-src/", f"../pyodide/{bytecode.stdlib_rest}"
        cmd = [
            node,
            str(HERE / "make_snapshot.mjs"),
            str(pyodide_dir),
            str(stdlib),
            sources,
            rest,
            str(static / "wheels" / wheel) if wheel else "",
            str(static / "wheels" / bytecode.labs) if wheel and bytecode.labs else "",
            str(HERE / "python"),
            str(out),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not out.is_file():
            raise ExtensionError(f"pyodide_cells: making the start-up snapshot failed:\n{proc.stderr[-2000:]}")
        _to_cache(pyodide_dir, f"snapshot-{key}", [out])
        logger.info("pyodide_cells: %s (%s)", name, proc.stdout.strip())
    for old in out.parent.glob(SITE_SNAPSHOT_NAME + "*"):
        if old.name not in (name, name + ".br"):
            old.unlink()
    data = out.read_bytes()
    return SiteSnapshot(name, len(data), "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode())


def snapshot_inputs(static: Path, wheel: str, stdlib: str) -> list[Path]:
    """What a start-up snapshot holds or depends on: the interpreter, its
    standard library zip (zipimport keeps offsets into it), the worker's
    sources (with the protocol and the Python it boots with), the runner, the wheel."""
    files = [static / "pyodide" / "pyodide.asm.wasm", static / "pyodide" / stdlib, *WORKER_SOURCES, HERE / "python" / "runner.py"]
    return files + ([static / "wheels" / wheel] if wheel else [])


def snapshot_key(files: list[Path]) -> str:
    """A digest (16 hex digits) of the files' names and contents.

    Keys the start-up snapshot (:func:`snapshot_inputs`): the worker keeps one
    memory snapshot per site in the origin private file system under it, so a
    rebuilt site never restores a stale interpreter. It also names the
    precompiled standard library after the inputs it was made from.
    """
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def setup(app: Sphinx) -> None:
    app.connect("builder-inited", on_builder_inited)
    app.connect("env-get-outdated", pages_to_rewrite)
