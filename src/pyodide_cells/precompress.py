"""Brotli copies of the built site's files, for the guide's server (``serve.py``) to send.

Each compressible file (:data:`pyodide_cells.serve.COMPRESSIBLE`, source maps
aside) gets ``<file>.br`` beside it, made by ``precompress.mjs`` with Node's
zlib. So do the archives a page needs before its first output (:data:`ARCHIVES`),
whose copy holds the same archive stored rather than deflated. Pyodide's
WebAssembly is most of the bytes and the slowest to compress, so its copy (and
the interpreter's JavaScript and lock file) starts when the build starts, in
the background, and the rest follow when the pages are written; each batch is
shared between :data:`PROCESSES` Node processes. Results are cached by content
under ``node_modules/.cache``: an unchanged file is compressed once per machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from .assets import SITE_SNAPSHOT_NAME, _node_modules
from .serve import COMPRESSIBLE

HERE = Path(__file__).parent
MIN_BYTES = 1024  # below this, headers cost more than compression saves
EARLY = ("pyodide.asm.wasm", "pyodide.asm.js", "pyodide-lock.json")  # under _static/pyodide/
# Zips on the way to first output (under _static/; assets.precompile_bytecode
# names them). Deflate compresses each member alone; Brotli, given the same
# archive with its members stored, compresses across them: the start of the
# standard library goes from 1.27 MB to 0.90 MB. The server sends that copy for
# the file (serve.brotli_copy), so what a browser decodes is another byte
# sequence holding the same members. The rest of the standard library is left
# out: the worker checks its bytes against a SHA-256 (worker_boot.StdlibRest).
ARCHIVES = ("pyodide/python_stdlib-*.zip", "wheels/labs-bytecode-*.zip", "wheels/*.whl")
# Brotli at quality 11 keeps one core busy per file: two processes, so that the WebAssembly does not
# hold the snapshot and the archives up behind it (the build's last minute, one core, on two).
PROCESSES = 2


def compressible(outdir: Path) -> list[Path]:
    """The files of ``outdir`` that get a Brotli copy, sorted: the server's compressible types,
    at least :data:`MIN_BYTES`, not source maps and not in hidden or ``_sources`` folders."""
    found = []
    for path in outdir.rglob("*"):
        parts = path.relative_to(outdir).parts
        if any(part.startswith(".") or part == "_sources" for part in parts[:-1]):
            continue
        if path.is_file() and path.name.endswith(COMPRESSIBLE) and not path.name.endswith(".map") and path.stat().st_size >= MIN_BYTES:
            found.append(path)
    return sorted(found)


def archives(outdir: Path) -> list[Path]:
    """The zips of ``outdir`` whose Brotli copy is of the same archive stored (:data:`ARCHIVES`), sorted."""
    return sorted(path for pattern in ARCHIVES for path in (outdir / "_static").glob(pattern) if path.is_file())


def stored(archive: Path, folder: Path) -> Path:
    """Write ``archive`` again into ``folder``, its members in the same order, names and dates, stored."""
    copy = folder / archive.name
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(copy, "w") as out:
        for info in source.infolist():
            member = zipfile.ZipInfo(info.filename, info.date_time)  # stored: ZipInfo's default
            member.external_attr = info.external_attr
            out.writestr(member, source.read(info))
    return copy


def shares(files: list[Path], n: int) -> list[list[Path]]:
    """``files`` dealt into at most ``n`` non-empty lists of about the same bytes: the largest first,
    each to the list with the fewest bytes so far; a list keeps the order of ``files``."""
    size = {path: path.stat().st_size for path in files}
    bins: list[list[Path]] = [[] for _ in range(max(1, n))]
    sizes = [0] * len(bins)
    for path in sorted(files, key=size.__getitem__, reverse=True):
        i = sizes.index(min(sizes))
        bins[i].append(path)
        sizes[i] += size[path]
    order = {path: k for k, path in enumerate(files)}
    return [sorted(b, key=order.__getitem__) for b in bins if b]


def is_fresh(path: Path) -> bool:
    """True when ``path`` has a Brotli copy made after it was last written."""
    copy = path.with_name(path.name + ".br")
    return copy.is_file() and copy.stat().st_mtime >= path.stat().st_mtime


class Compressing:
    """``precompress.mjs`` at work on some files; :meth:`finish` waits for it and puts the copies in place."""

    def __init__(self, app: Sphinx, files: list[Path]) -> None:
        node = shutil.which("node")
        if node is None:
            raise ExtensionError("pyodide_cells: Node.js (node) is needed to write the Brotli copies")
        cache = _node_modules(app) / ".cache" / "pyodide-cells-brotli"
        self.folder = Path(tempfile.mkdtemp(prefix="pyodide-cells-stored-"))
        zips = set(archives(Path(app.outdir)))
        # An archive's copy is made from its stored form, written here, and moved beside it when done.
        self.moves: dict[Path, Path] = {}
        inputs = []
        for path in files:
            if path in zips:
                inputs.append(stored(path, self.folder))
                self.moves[inputs[-1]] = path
            else:
                inputs.append(path)
        # Its output goes to files, not pipes: a pipe left unread while another process of the batch
        # is waited for would fill and stop this one.
        self.out = (self.folder / "out.jsonl").open("w+")
        self.err = (self.folder / "err.txt").open("w+")
        self.proc = subprocess.Popen(
            [node, str(HERE / "precompress.mjs"), str(cache), *map(str, inputs)], stdout=self.out, stderr=self.err, text=True
        )

    def finish(self) -> None:
        """Wait for the process; put the archives' copies in place. Raises ExtensionError if it failed."""
        try:
            self.proc.wait()
            self.out.seek(0)
            self.err.seek(0)
            if self.proc.returncode != 0:
                raise ExtensionError(f"pyodide_cells: precompress.mjs failed:\n{self.err.read()}")
            for line in self.out.read().splitlines():
                json.loads(line)  # one JSON record per file written, or the script misbehaved
            for copy, archive in self.moves.items():
                # Whole or not at all: a copy cut short would look fresh (is_fresh) and be served.
                part = archive.with_name(archive.name + ".br.part")
                shutil.copyfile(copy.with_name(copy.name + ".br"), part)
                os.replace(part, archive.with_name(archive.name + ".br"))
        finally:
            self._close()

    def kill(self) -> None:
        """Stop the process (a copy it was writing is left as a ``.part`` file, never as the copy)."""
        self.proc.kill()
        self.proc.wait()
        self._close()

    def _close(self) -> None:
        self.out.close()
        self.err.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(app: Sphinx, files: list[Path]) -> list[Compressing]:
    """Brotli copies of ``files`` on their way, in up to :data:`PROCESSES` processes. If one cannot
    start, those already started are stopped and the error is raised."""
    batch: list[Compressing] = []
    try:
        for share in shares(files, PROCESSES):
            batch.append(Compressing(app, share))
    except BaseException:
        kill(batch)
        raise
    return batch


def finish(batch: list[Compressing]) -> None:
    """Wait for every process of ``batch``; if one fails, stop the others and raise its error."""
    try:
        for compressing in batch:
            compressing.finish()
    except BaseException:
        kill(batch)
        raise


def kill(batch: list[Compressing]) -> None:
    """Stop every process of ``batch`` (one that has ended already is left as it is)."""
    for compressing in batch:
        compressing.kill()


def on_builder_inited(app: Sphinx) -> None:
    app.pyodide_cells_brotli = []
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    # The site's start-up snapshot and the archives are early too: they are all written by now.
    candidates = [static / "pyodide" / name for name in EARLY] + sorted((static / "pyodide_cells").glob(SITE_SNAPSHOT_NAME))
    files = [path for path in candidates + archives(Path(app.outdir)) if path.is_file() and not is_fresh(path)]
    app.pyodide_cells_brotli = start(app, files)


def on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    early = getattr(app, "pyodide_cells_brotli", [])
    if exception is not None or app.builder.format != "html":
        kill(early)
        return
    finish(early)
    rest = [path for path in compressible(Path(app.outdir)) + archives(Path(app.outdir)) if not is_fresh(path)]
    finish(start(app, rest))


def setup(app: Sphinx) -> None:
    # After assets.py has copied Pyodide's files in, and after publish.py has written sw.js.
    app.connect("builder-inited", on_builder_inited, priority=900)
    app.connect("build-finished", on_build_finished, priority=900)
