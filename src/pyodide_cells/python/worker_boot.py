"""What the worker runs in Python while it boots, before the first cell.

``worker.js`` runs this file's text (bundled into the worker by esbuild) and
then one call of :func:`boot`. Kept as Python, not as strings in JavaScript,
so that it is linted and read like the rest of the Python.
"""

from __future__ import annotations

import importlib
import sys


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


def reseed_after_restore() -> None:
    """A restored interpreter starts from the very memory of the visit (or build) that made it.

    The random module's state included (Pyodide imports it while starting):
    seed it again from the browser's crypto.getRandomValues, as a fresh start
    would, and let tempfile make a new generator for its names. The string
    hash seed cannot change in a running interpreter (every dict depends on
    it): hash("abc"), and so the order of a set of strings, is the same on
    every visit restored from one snapshot (from the site's, for every learner).
    """
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "tempfile" in sys.modules:
        sys.modules["tempfile"]._name_sequence = None
    local_time_zone()


def local_time_zone() -> None:
    """Give ``time`` this browser's time zone, not the one the snapshot was made in.

    CPython sets ``time.timezone``, ``altzone``, ``daylight`` and ``tzname``
    once, when ``time`` is first imported, and Pyodide's ``time`` has no
    ``tzset()``: a snapshot made at build time would tell a learner in New
    York that they are in UTC. They are set again as Emscripten's tzset sets
    them (from 1 January and 1 July of this year, names as the browser
    abbreviates them). ``localtime()`` and ``datetime.now()`` were right
    already: the browser answers each call.
    """
    import time

    from js import Date, Object
    from pyodide.ffi import to_js

    year = Date.new().getFullYear()
    options = to_js({"hour12": False, "timeZoneName": "short"}, dict_converter=Object.fromEntries)
    # Minutes west of UTC, and the browser's short name, for winter and summer.
    winter, summer = ((day.getTimezoneOffset(), day.toLocaleTimeString(None, options).split(" ")[1])
                      for day in (Date.new(year, 0, 1), Date.new(year, 6, 1)))
    standard, daylight = (winter, summer) if summer[0] < winter[0] else (summer, winter)
    time.timezone, time.altzone = int(standard[0]) * 60, int(daylight[0]) * 60
    time.daylight = int(winter[0] != summer[0])
    time.tzname = (standard[1], daylight[1])


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


def boot(restored: bool, sources_url: str, with_labs: bool) -> None:
    """Make the cell runner importable and import it (plus every labs module when ``with_labs``)."""
    sys.setrecursionlimit(RECURSION_LIMIT)
    if restored:
        reseed_after_restore()
    elif sources_url:  # a restored interpreter has it already
        serve_stdlib_sources(sources_url)
    find_new_files()
    importlib.import_module("pyodide_cells_runner")
    if with_labs:
        import_labs()
