"""What the worker runs in Python while it boots, before the first cell.

``worker.js`` runs this file's text (bundled into the worker by esbuild) and
then one call of :func:`boot`; an interpreter restored from a snapshot holds
this file's functions already and only calls :func:`boot` (boot_python.js).
Kept as Python, not as strings in JavaScript, so that it is linted and read
like the rest of the Python.
"""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn


def find_new_files() -> None:
    """Let the import system see files written since start-up (the wheel, the runner).

    Only the finders of those two directories are told:
    ``importlib.invalidate_caches()`` would also re-read the standard library
    zip's index (60 ms cold and 230 ms restored, measured in the page).
    """
    from pyodide._package_loader import SITE_PACKAGES

    if "/home/pyodide" not in sys.path:
        sys.path.insert(0, "/home/pyodide")
    for path in ("/home/pyodide", str(SITE_PACKAGES)):
        finder = sys.path_importer_cache.get(path)
        if finder is not None:
            finder.invalidate_caches()


def serve_stdlib_sources(base_url: str) -> None:
    """Let modules held only as bytecode show their source.

    The precompiled standard library zip has no source for its bytecode
    modules, so ``zipimport``'s ``get_source`` says None and tracebacks and
    ``inspect.getsource`` would show no code. This falls back to the source
    file the site serves beside the zip under ``base_url``, fetched
    synchronously (allowed in a worker) once, when first asked for.
    """
    import zipimport

    get_source = zipimport.zipimporter.get_source
    fetched: dict[str, str | None] = {}

    def get_source_or_fetch(self, fullname):
        source = get_source(self, fullname)
        if source is not None or not self.archive.endswith(".zip"):
            return source
        path = fullname.replace(".", "/") + ("/__init__.py" if self.is_package(fullname) else ".py")
        if path not in fetched:
            try:
                from pyodide.http import open_url

                fetched[path] = open_url(base_url + path).read()
            except Exception:  # noqa: BLE001 - no source is better than a failed traceback
                fetched[path] = None
        return fetched[path]

    zipimport.zipimporter.get_source = get_source_or_fetch


# The index the build writes into the start zip (precompile_bytecode.mjs):
# where the rest goes and which modules it holds.
REST_INDEX = "pyodide_cells_rest.json"


class StdlibRestUnavailable(ImportError):
    """The rest of the standard library could not be fetched (offline, or the host lacks it)."""


# How long an import waits for the rest (1.8 MB) when it fetches it itself: on a
# link of 0.5 Mbit/s it arrives within it. Stop cannot interrupt the wait (the
# worker's thread waits for the network), so it ends in an error the learner can
# read, with the namespace kept, rather than in a restart.
REST_TIMEOUT_MS = 30_000


class StdlibRest:
    """Serves imports from the rest of the standard library, which arrives after start-up.

    The worker starts Python with a zip of only the modules a page imports
    before its first output (precompile_bytecode.mjs); the rest (doctest,
    email, statistics, most codecs, ...) is a second zip, which the worker
    fetches once the page is ready and hands to :meth:`mount`. This finder,
    on ``sys.meta_path`` after the path finder, answers for the modules the
    build's index lists: from the second zip, fetching it synchronously (a
    worker may) if it has not arrived yet. It also finds the rest's
    submodules of packages the start zip holds (``json.tool``,
    ``encodings.cp1252``), whose ``__path__`` names the start zip only, and
    not those of a package of the same name from elsewhere. A name in
    neither zip is not fetched for: ``import numpy`` fails at once, as usual.
    What arrives is checked against the SHA-256 the index carries: an error
    page or a cut-short file is never mounted.

    Raises :class:`StdlibRestUnavailable` (an ImportError) from an import
    that needs the rest when it cannot be fetched; the next such import
    tries again.
    """

    def __init__(self, url: str, start: str, index: dict) -> None:
        self.url = url  #: relative to the worker's URL
        self.start = start  #: the start zip's path, on sys.path
        self.archive = index["archive"]  #: where the rest is written in the file system
        self.sha256 = index["sha256"]
        self.modules = frozenset(index["modules"])
        self.importers: dict[str, object] = {}
        self.failure = ""  #: why the last fetch failed ("": it did not)
        self.failed_at = 0.0  #: when (time.monotonic)

    @classmethod
    def install(cls, url: str) -> None:
        """Put a finder for the rest on ``sys.meta_path``, reading the start zip's index."""
        import codecs
        import json
        import zipimport

        start = stdlib_start()
        index = json.loads(zipimport.zipimporter(start).get_data(f"{start}/{REST_INDEX}"))
        rest = cls(url, start, index)
        sys.meta_path.append(rest)
        codecs.register(rest.codec_unavailable)

    @staticmethod
    def installed() -> StdlibRest | None:
        """The finder on ``sys.meta_path``, or None."""
        return next((f for f in sys.meta_path if isinstance(f, StdlibRest)), None)

    def iter_modules(self, prefix: str = ""):
        """The rest's top-level modules, as (name, is a package), for ``pkgutil.iter_modules()``
        and ``help("modules")``: listed from the index, whether the rest has arrived or not."""
        packages = {name.partition(".")[0] for name in self.modules if "." in name}
        for name in sorted(name for name in self.modules if "." not in name):
            yield prefix + name, name in packages

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname not in self.modules:
            return None
        if path is not None and not any(str(entry).startswith(self.start + "/") for entry in path):
            return None  # a submodule of a package that is not the standard library's
        self.ensure(fullname)
        package = fullname.rpartition(".")[0]
        if package not in self.importers:
            import zipimport

            where = "/".join([self.archive, *package.split(".")]) if package else self.archive
            self.importers[package] = zipimport.zipimporter(where)
        return self.importers[package].find_spec(fullname)

    def ensure(self, fullname: str) -> None:
        """Fetch the rest now (synchronously) unless it has arrived; ``fullname`` is the module that needs it."""
        if self.mounted():
            return
        from js import XMLHttpRequest

        request = XMLHttpRequest.new()
        try:
            request.open("GET", self.url, False)
            request.responseType = "arraybuffer"
            request.timeout = REST_TIMEOUT_MS
            request.send(None)
        except Exception as err:  # noqa: BLE001 - a network failure or the timeout is a JavaScript error
            why = f"it did not arrive within {REST_TIMEOUT_MS // 1000} s" if "timeout" in str(err).lower() else str(err)
            self.unavailable(fullname, why)
        if request.status != 200:
            self.unavailable(fullname, f"the server answered HTTP {request.status}")
        try:
            self.mount(request.response.to_bytes())
        except ValueError as err:
            self.unavailable(fullname, str(err))

    def unavailable(self, fullname: str, why: str) -> NoReturn:
        """Raise the import's error, and remember why for the codecs (:meth:`codec_unavailable`)."""
        import time

        from js import URL, location

        self.failure, self.failed_at = why, time.monotonic()
        where = URL.new(self.url, location.href).href
        raise StdlibRestUnavailable(
            f"{fullname} is in the part of Python's standard library that is loaded after the page "
            f"starts, and it could not be fetched from {where}: {why}. Check the connection, then run "
            f"the cell again.",
            name=fullname,
        ) from None

    def codec_unavailable(self, encoding: str):
        """A codec search function, asked after Python's own (``encodings``) found nothing.

        Most codecs are in the rest, and ``encodings`` remembers a codec whose
        import failed as unknown: before the rest has arrived, fetch it and
        look again; if it cannot be had, say so instead of "unknown encoding".
        """
        import codecs
        import time

        if self.mounted():
            return None  # unknown indeed
        if not (self.failure and time.monotonic() - self.failed_at < 1):  # not the failure just now
            try:
                self.ensure(f"the codec {encoding}")
            except StdlibRestUnavailable:
                pass
            else:
                return codecs.lookup(encoding)  # mount() made encodings forget its failures
        raise LookupError(
            f"unknown encoding: {encoding} (most codecs are in the part of Python's standard library "
            f"that is loaded after the page starts, which could not be fetched: {self.failure})"
        )

    def mounted(self) -> bool:
        """Whether the rest is in the file system (a snapshot's is new: :meth:`forget`)."""
        import os

        return os.path.exists(self.archive)

    def mount(self, data: bytes) -> None:
        """Write the rest into the file system (once) and put it on ``sys.path``, after the start.

        Raises ValueError, and mounts nothing, when ``data`` is not the rest
        this site was built with (its SHA-256 differs).
        """
        import os

        import _sha2  # hashlib comes with the rest

        if not self.mounted():
            if _sha2.sha256(data).hexdigest() != self.sha256:
                raise ValueError(f"what arrived ({len(data):,} bytes) is not the file this site was built with")
            with open(self.archive + ".partial", "wb") as f:
                f.write(data)
            os.replace(self.archive + ".partial", self.archive)
        self.failure = ""
        # A codec looked up while the rest was missing is remembered as unknown.
        encodings = sys.modules.get("encodings")
        for name, codec in list(getattr(encodings, "_cache", {}).items()):
            if codec is None:
                del encodings._cache[name]
        if self.archive not in sys.path:
            sys.path.insert(sys.path.index(self.start) + 1 if self.start in sys.path else len(sys.path), self.archive)

    def forget(self) -> None:
        """After a restore: the file system is new, so the rest has not arrived."""
        import zipimport

        self.importers.clear()
        self.failure = ""
        if self.archive in sys.path:
            sys.path.remove(self.archive)
        sys.path_importer_cache.pop(self.archive, None)
        zipimport._zip_directory_cache.pop(self.archive, None)


def mount_stdlib_rest(data) -> None:
    """The worker's call once the rest of the standard library has arrived (a JS Uint8Array)."""
    rest = StdlibRest.installed()
    if rest is not None:
        rest.mount(data.to_bytes())


def refresh_after_restore() -> None:
    """A restored interpreter starts from the very memory of the visit (or build) that made it.

    What that process set once is set again from this browser: the random
    module's state (Pyodide imports it while starting), seeded again from the
    browser's crypto.getRandomValues as a fresh start would; tempfile's
    generator for its names; the time zone (:func:`local_time_zone`) and the
    locale (:func:`browser_locale`) and the runtime's name
    (:func:`browser_runtime`); the home folder, which loadPyodide
    puts first on the path on every start, restores too, is there once; the
    start of the standard library is read as it arrived here
    (:func:`reread_zip_directory`); and the rest of the standard library has
    not arrived (:class:`StdlibRest`). The string
    hash seed cannot change in a running interpreter (every dict depends on
    it): hash("abc"), and so the order of a set of strings, is the same on
    every visit restored from one snapshot (from the site's, for every learner).
    """
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "tempfile" in sys.modules:
        sys.modules["tempfile"]._name_sequence = None
    local_time_zone()
    browser_locale()
    browser_runtime()
    sys.path[:] = list(dict.fromkeys(sys.path))
    reread_zip_directory(stdlib_start())
    rest = StdlibRest.installed()
    if rest is not None:
        rest.forget()


def stdlib_start() -> str:
    """The path of the standard library's start, the zip Python started with: the first on ``sys.path``."""
    return next(p for p in sys.path if p.endswith(".zip"))


def reread_zip_directory(archive: str) -> None:
    """Read the directory of ``archive`` (a zip on ``sys.path``) again, for every importer of it.

    zipimport keeps an archive's directory (each member's offset and
    compression) in one dict, which the importers of the archive and of its
    packages share, and a snapshot holds the one its maker read. This browser
    may have the archive laid out otherwise: the guide's server sends the
    start of the standard library stored (precompress.ARCHIVES), where the
    build read it deflated, and every module not imported yet then failed
    with "bad local file header". The dict is refilled in place, so that
    every importer sees the new one.
    """
    import zipimport

    fresh = zipimport._read_directory(archive)
    kept = zipimport._zip_directory_cache.setdefault(archive, fresh)
    if kept is not fresh:
        kept.clear()
        kept.update(fresh)


def local_time_zone() -> None:
    """Give ``time`` this browser's time zone, not the one the snapshot was made in.

    CPython sets ``time.timezone``, ``altzone``, ``daylight`` and ``tzname``
    once, when ``time`` is first imported, and Pyodide's ``time`` has no
    ``tzset()``: a snapshot made at build time would tell a learner in New
    York that they are in UTC. boot_python.js has given the C library the
    browser's zone again; this sets them from it as CPython computes them
    (from 1 January and 1 July, the southern hemisphere's summer included).
    """
    import time

    year = time.localtime().tm_year
    january, july = (time.localtime(time.mktime((year, month, 1, 0, 0, 0, 0, 0, -1))) for month in (1, 7))
    # Daylight saving time is the one further east: July north of the equator, January south of it.
    standard, summer = (july, january) if january.tm_gmtoff > july.tm_gmtoff else (january, july)
    time.timezone, time.altzone = -standard.tm_gmtoff, -summer.tm_gmtoff
    time.daylight = int(january.tm_gmtoff != july.tm_gmtoff)
    time.tzname = (standard.tm_zone, summer.tm_zone)


def browser_locale() -> None:
    """The language a fresh start in this browser would have, not the snapshot's.

    Emscripten sets ``LANG`` from the browser's first language when the
    process starts, and CPython sets its ``LC_CTYPE`` locale from it: a
    snapshot made in Node holds ``C.UTF-8``.
    """
    import _locale
    import os

    from js import navigator

    languages = getattr(navigator, "languages", None)
    first = languages[0] if languages is not None and languages.length else "C"
    os.environ["LANG"] = first.replace("-", "_", 1) + ".UTF-8"
    _locale.setlocale(_locale.LC_CTYPE, "")


def browser_runtime() -> None:
    """``sys._emscripten_info.runtime`` names this browser, as a fresh start here does.

    CPython reads it once, at start-up, from JavaScript (``navigator.userAgent``,
    or Node's version): the site's snapshot, made in Node, said "Node.js v20...".
    """
    from js import navigator

    info = sys._emscripten_info
    sys._emscripten_info = type(info)((info.emscripten_version, navigator.userAgent, info.pthreads, info.shared_memory))


def import_labs() -> None:
    """Import every labs module, so that a snapshot taken now holds them all
    and a lab's first cell imports nothing."""
    import pkgutil

    import labs

    for module in pkgutil.iter_modules(labs.__path__, "labs."):
        importlib.import_module(module.name)


# Python frames the page's Python may nest. The browser's stack for WebAssembly is far
# smaller than CPython's, and a recursion that goes through C (a __repr__, __hash__ or
# __init__ that calls itself, a sort whose __lt__ sorts) uses several times more of it per
# frame than a plain call: in headless Chromium those overflowed it, which crashes the
# interpreter and loses the namespace, at a limit of 350 but raised RecursionError at 280.
# A learner's runaway recursion must be an error they can read, with their names kept.
RECURSION_LIMIT = 250


def boot(restored: bool, sources_url: str, rest_url: str, with_labs: bool) -> None:
    """Make the cell runner importable and import it (plus every labs module when ``with_labs``).

    ``sources_url`` and ``rest_url`` (relative to the worker; "": none): see
    :func:`serve_stdlib_sources` and :class:`StdlibRest`. A restored
    interpreter has both already.
    """
    sys.setrecursionlimit(RECURSION_LIMIT)
    if restored:
        refresh_after_restore()
    if sources_url:
        serve_stdlib_sources(sources_url)
    if rest_url:
        StdlibRest.install(rest_url)
    find_new_files()
    importlib.import_module("pyodide_cells_runner")
    if with_labs:
        import_labs()
