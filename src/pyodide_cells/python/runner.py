"""The cell runner: executes page cells in one shared namespace, Jupyter-style.

It runs inside Pyodide's Web Worker (``worker.js`` loads this file as the
module ``pyodide_cells_runner``) and, unchanged, in CPython for the tests.
It follows the conventions of an IPython kernel that learners already know:

- every cell of a page runs in one namespace, the module ``__main__`` while a
  cell runs (so ``doctest.testmod()``, ``unittest.main()`` and pickle find
  what the cells defined);
- the value of a final expression statement is displayed (not ``None``), and
  bound to ``_``;
- objects are displayed through ``_repr_mimebundle_``, ``_repr_html_``,
  ``_repr_svg_``, ``_repr_markdown_``, ``_repr_latex_`` and ``repr``;
- stdout and stderr stream while the cell runs;
- tracebacks name the cell (``File "<cell 3>", line 2``) and show its source
  line, and leave out the runner's own frames.

It also runs a page's checks (:meth:`CellRunner.check`) with the check
engine of the ``labs`` package (:mod:`labs.checks`), against a copy of the
namespace the learner's cells built.

Everything leaves through one callback, ``emit(kind, payload_json)``, so the
worker can forward it with ``postMessage`` without sharing Python objects.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import keyword
import linecache
import re
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from typing import Any

Emit = Callable[[str, str], Any]

# What completion completes: a dotted name ending at the cursor ("Val", "v.gr", "math.").
COMPLETABLE = re.compile(r"(?:[^\W\d]\w*\.)*(?:[^\W\d]\w*)?$")
# At most this many completions are sent (dir() of a module can be long; the list scrolls).
MAX_COMPLETIONS = 500

# Mime types the page knows how to render, most preferred first.
MIME_ORDER = (
    "text/vnd.graphviz",
    "text/html",
    "image/svg+xml",
    "text/markdown",
    "text/latex",
    "text/plain",
)
# The output limits live in one file, ../limits.json, which the page reads too
# (protocol.js). In the page the worker hands them to CellRunner; in CPython
# (the tests) they are read from the file.
LIMITS_FILE = "limits.json"


def load_limits(limits_json: str | None = None) -> dict[str, int]:
    """The output limits: from ``limits_json`` when given, else from ``../limits.json``.

    ``outputChars``: a repr longer than this is cut (a 40-million-character
    string froze the page for 14 s), as the page cuts a cell's printed output.
    ``richCharsPerOutput``: rich output (HTML, SVG, ...) cannot be cut without
    breaking its markup: over this it is not shown and its text form is (an
    8 MB ``_repr_html_`` froze the page for 14 s).

    Raises FileNotFoundError when no JSON is given and the file is not there.
    """
    if limits_json is None:
        from pathlib import Path

        limits_json = (Path(__file__).resolve().parent.parent / LIMITS_FILE).read_text()
    return json.loads(limits_json)


REPR_METHODS = {
    "text/html": "_repr_html_",
    "image/svg+xml": "_repr_svg_",
    "text/markdown": "_repr_markdown_",
    "text/latex": "_repr_latex_",
}


class StreamWriter(io.TextIOBase):
    """A text stream that forwards every write to ``emit("stream", ...)``."""

    def __init__(self, emit: Emit, name: str) -> None:
        super().__init__()
        self._emit = emit
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self._emit("stream", json.dumps({"name": self.name, "text": text}))
            self._unflushed = True
        return len(text)

    def flush(self) -> None:
        """Send what was written so far to the page now (``print(..., flush=True)``)."""
        if getattr(self, "_unflushed", False):
            self._unflushed = False
            self._emit("flush", "{}")

    def close(self) -> None:
        # Closing (when the runner drops the stream after a cell) flushes: the
        # run's end sends everything anyway, so no late "flush" goes out.
        self._unflushed = False
        super().close()


class NoInput(io.TextIOBase):
    """Standard input in the page: there is none, and it says so."""

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:  # noqa: ARG002 - io signature
        raise OSError("input() is not available in the page: set the value in the code instead")

    read = readline


def mime_bundle(obj: Any, max_plain_chars: int = 200_000, max_rich_chars: int = 1_000_000) -> dict[str, str]:
    """Return ``{mime type: data}`` for ``obj``, always with ``text/plain``.

    A broken ``_repr_*_`` method does not lose the output: it is skipped and
    ``repr`` still shows. ``text/plain`` is cut at ``max_plain_chars``; a rich
    form over ``max_rich_chars`` is left out, and the text says so. Raises nothing.
    """
    bundle: dict[str, str] = {}
    method = getattr(obj, "_repr_mimebundle_", None)
    if callable(method) and not isinstance(obj, type):
        try:
            data = method()
            if isinstance(data, tuple):  # (data, metadata), as IPython allows
                data = data[0]
            if isinstance(data, dict):
                bundle.update({k: v for k, v in data.items() if isinstance(v, str)})
        except Exception:  # noqa: BLE001 - a display must never raise
            pass
    if not isinstance(obj, type):
        for mime, name in REPR_METHODS.items():
            if mime in bundle:
                continue
            method = getattr(obj, name, None)
            if callable(method):
                try:
                    data = method()
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(data, tuple):
                    data = data[0]
                if isinstance(data, str):
                    bundle[mime] = data
    if "text/plain" not in bundle:
        try:
            bundle["text/plain"] = repr(obj)
        except Exception as exc:  # noqa: BLE001
            bundle["text/plain"] = f"<unprintable {type(obj).__name__}: {exc!r}>"
    text = bundle["text/plain"]
    if len(text) > max_plain_chars:  # the page's limit for printed output too
        text = f"{text[:max_plain_chars]}\n… output cut: {len(text) - max_plain_chars:,} more characters not shown"
    too_big = [mime for mime in bundle if mime != "text/plain" and len(bundle[mime]) > max_rich_chars]
    for mime in too_big:
        text += f"\n… {mime} output of {len(bundle.pop(mime)):,} characters not shown: over the page's limit of {max_rich_chars:,}"
    bundle["text/plain"] = text
    return {mime: bundle[mime] for mime in MIME_ORDER if mime in bundle}


def missing_stdlib_note(name: str) -> str:
    """What a learner is told when ``import name`` fails for a module of CPython's standard library.

    >>> print(missing_stdlib_note("sqlite3"))
    sqlite3 is in CPython's standard library, but not in this Python: the Python in the page (Pyodide) leaves it out. Run this code with Python on your computer.
    """
    return (
        f"{name} is in CPython's standard library, but not in this Python: the Python in the page "
        "(Pyodide) leaves it out. Run this code with Python on your computer."
    )


_active: CellRunner | None = None  # the runner cells run in: IPython.display.display shows through it


def display(*objs: Any, display_id: str | None = None, update: bool = False) -> None:
    """Show each object below the running cell: what ``IPython.display.display``
    calls in the browser (``python/ipython/display.py``). See :meth:`CellRunner.display`.

    Raises RuntimeError when no runner has been made.
    """
    if _active is None:
        raise RuntimeError("display() needs a CellRunner: none has been made")
    _active.display(*objs, display_id=display_id, update=update)


def clear_output(wait: bool = False) -> None:
    """Clear the running cell's output (``IPython.display.clear_output``); see :meth:`CellRunner.clear_output`."""
    if _active is None:
        raise RuntimeError("clear_output() needs a CellRunner: none has been made")
    _active.clear_output(wait)


class CellRunner:
    """Run cells in one namespace and report what they do through ``emit``.

    Args:
        limits_json: the output limits as JSON (:func:`load_limits`); read
            from ``limits.json`` when None.
        emit: called as ``emit(kind, payload_json)`` with kind one of
            ``"stream"`` (``{"name": "stdout"|"stderr", "text"}``), ``"flush"``
            (``{}``: show what was written now),
            ``"display"`` (``{"data": {mime: str}}``, plus ``"display_id"``
            and ``"update"`` for a display that can be replaced),
            ``"clear"`` (``{"wait": bool}``), ``"result"``
            (``{"data": ..., "execution_count": n}``) and ``"error"``
            (``{"ename", "evalue", "traceback": str}``).

    >>> out = []
    >>> runner = CellRunner(lambda kind, payload: out.append((kind, json.loads(payload))))
    >>> runner.run("x = 20\\nprint('hi')\\nx + 1")["status"]
    'ok'
    >>> [kind for kind, _ in out]  # print writes 'hi', then '\\n'
    ['stream', 'stream', 'result']
    >>> out[2][1]["data"]["text/plain"]
    '21'
    """

    def __init__(self, emit: Emit, limits_json: str | None = None) -> None:
        global _active
        _active = self
        self.emit = emit
        limits = load_limits(limits_json)
        self.max_plain_chars = limits["outputChars"]
        self.max_rich_chars = limits["richCharsPerOutput"]
        self.execution_count = 0
        # A module, not a bare dict: it stands in for __main__ while cells run (as_main).
        self.main = types.ModuleType("__main__")
        self.namespace: dict[str, Any] = self.main.__dict__
        self.reset()

    def reset(self) -> None:
        """Forget every name the cells defined (a fresh namespace)."""
        self.namespace.clear()
        self.namespace.update(
            {
                "__name__": "__main__",
                "__doc__": None,
                "__package__": None,
                "__loader__": None,
                "__spec__": None,
                "__builtins__": builtins,
                "display": self.display,
            }
        )

    @contextlib.contextmanager
    def as_main(self) -> Iterator[None]:
        """The cells' namespace is ``sys.modules["__main__"]`` meanwhile, as in a notebook's kernel:
        ``doctest.testmod()``, ``unittest.main()`` and pickle look their names up there. The
        worker's own ``__main__`` comes back after, with everything Pyodide keeps in it."""
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = self.main
        try:
            yield
        finally:
            if saved is None:
                sys.modules.pop("__main__", None)
            else:
                sys.modules["__main__"] = saved

    def display(self, *objs: Any, display_id: str | None = None, update: bool = False) -> None:
        """Show each object below the running cell, like IPython's ``display``.

        With ``display_id`` the output can be replaced later: ``update=True``
        replaces what every output shown with that id holds (in any cell of the
        page), as Jupyter's ``update_display_data`` does; an id not shown is
        ignored, as in Jupyter.
        """
        for obj in objs:
            message: dict[str, Any] = {"data": self._bundle(obj)}
            if display_id is not None:
                message.update(display_id=display_id, update=update)
            self.emit("display", json.dumps(message))

    def clear_output(self, wait: bool = False) -> None:
        """Clear the running cell's output; with ``wait``, only when the next output arrives
        (so a loop that clears and redraws does not flicker), as IPython's ``clear_output``."""
        self.emit("clear", json.dumps({"wait": bool(wait)}))

    def _bundle(self, obj: Any) -> dict[str, str]:
        return mime_bundle(obj, self.max_plain_chars, self.max_rich_chars)

    def run(self, code: str, cell_name: str | None = None) -> dict[str, Any]:
        """Execute ``code``; return ``{"status": "ok"|"error"|"interrupted", "execution_count": n}``.

        ``"interrupted"``: the code was stopped by KeyboardInterrupt (the page's Stop).

        ``cell_name`` names the cell in tracebacks; it defaults to the
        execution count (``<cell 3>``). An empty or blank cell runs and emits
        nothing.
        """
        self.execution_count += 1
        filename = f"<{cell_name or f'cell {self.execution_count}'}>"
        # Register the source so tracebacks can print the offending line.
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        stdout, stderr = StreamWriter(self.emit, "stdout"), StreamWriter(self.emit, "stderr")
        saved = sys.stdout, sys.stderr, sys.stdin
        sys.stdout, sys.stderr, sys.stdin = stdout, stderr, NoInput()
        status = "ok"
        try:
            try:
                tree = ast.parse(code, filename=filename, mode="exec")
            except SyntaxError as exc:
                self._report_syntax_error(exc)
                return {"status": "error", "execution_count": self.execution_count}
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            try:
                with self.as_main():
                    exec(compile(tree, filename, "exec"), self.namespace)
                    if last is not None:
                        value = eval(compile(last, filename, "eval"), self.namespace)
                        if value is not None:
                            self.namespace["_"] = value
                            self.emit(
                                "result",
                                json.dumps({"data": self._bundle(value), "execution_count": self.execution_count}),
                            )
            except SystemExit as exc:
                status = self._report_exit(exc)
            except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt too
                self._report_exception(exc)
                status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "error"
        finally:
            sys.stdout, sys.stderr, sys.stdin = saved
        return {"status": status, "execution_count": self.execution_count}

    def check(self, blocks_json: str, names_json: str = "[]") -> str:
        """Run the page's check blocks against this namespace.

        Args:
            blocks_json: the doctest blocks, a JSON list of str, in page order.
            names_json: the names the checks take from the learner (JSON list of str).

        Returns JSON: ``{"status": "ok"|"interrupted"|"error", "results": [...],
        "warnings": [...]}`` (``labs.checks.Result.as_dict``, :meth:`provenance`); the
        results are empty when Stop interrupted the checks, or when the
        check engine itself failed, e.g. could not import doctest ("error",
        reported as an error message first). Raises nothing for failing code: a failure is a record.
        """
        # The one check engine, from the labs wheel (CI and the command line use it too).
        from labs.checks import run_blocks

        names = json.loads(names_json)
        saved = sys.stdout, sys.stdin
        sys.stdin = NoInput()
        try:
            with self.as_main():
                results = [r.as_dict() for r in run_blocks(list(json.loads(blocks_json)), self.namespace)]
        except KeyboardInterrupt:
            return json.dumps({"status": "interrupted", "results": [], "warnings": []})
        except Exception as exc:  # noqa: BLE001 - reported, as a cell's error is
            # The check engine's own failure (doctest comes with the rest of the standard library,
            # which may not be had): whatever the learner's code raises is a record in the results.
            self._report_exception(exc)
            return json.dumps({"status": "error", "results": [], "warnings": []})
        finally:
            sys.stdout, sys.stdin = saved
        return json.dumps({"status": "ok", "results": results, "warnings": json.loads(self.provenance(names))})

    def complete(self, code: str, cursor: int) -> str:
        """Complete the dotted name that ends at ``cursor`` in ``code``, from the live namespace.

        The names the cells defined and the built-ins (``Val`` → ``Value``), the attributes of an
        object (``v.gr`` → ``grad``, the class's members too) and a module's contents
        (``math.sq`` → ``sqrt``), as the standard library's :mod:`rlcompleter` finds them (it
        looks an object up, and reads no property). Names starting with ``_`` are offered only
        once an ``_`` is typed.

        Args:
            code: the cell's code as it is in the editor.
            cursor: the cursor's offset in ``code``, in characters (0 to ``len(code)``).

        Returns JSON: ``{"from": offset, "options": [{"label": str, "type": str}, ...]}``,
        ``from`` the offset where the completed part starts (after the last dot); ``type`` one of
        ``"keyword"``, ``"class"``, ``"function"``, ``"namespace"`` (a module), ``"variable"``.
        No options after a dot that ends no name (``(a + b).``) or past :data:`MAX_COMPLETIONS`.
        Raises ValueError when ``cursor`` is outside ``code``.

        >>> runner = CellRunner(lambda kind, payload: None)
        >>> _ = runner.run("import math\\nvalues = [1]")
        >>> json.loads(runner.complete("math.sq", 7))
        {'from': 5, 'options': [{'label': 'sqrt', 'type': 'function'}]}
        """
        if not 0 <= cursor <= len(code):
            raise ValueError(f"cursor {cursor} is outside the code (0 to {len(code)} characters)")
        import rlcompleter

        before = code[:cursor]
        text = COMPLETABLE.search(before).group()  # always matches, if only ""
        start = cursor - len(text)
        dot = text.rfind(".")
        begins = start + dot + 1
        if start > 0 and (before[start - 1] in ".)]}'\"" or before[start - 1].isalnum()):
            # An expression's attribute (`(a + b).`, `"s".`) is not evaluated; nor is a number completed.
            return json.dumps({"from": begins, "options": []})
        completer = rlcompleter.Completer(self.namespace)
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()  # whatever a lookup prints is not a cell's output
        try:
            with self.as_main():
                found = completer.attr_matches(text) if dot >= 0 else completer.global_matches(text)
                obj = self.namespace_lookup(text[:dot]) if dot >= 0 else None
                options, seen = [], set()
                for match in found:
                    name = match[dot + 1 :].rstrip("(): ")  # rlcompleter's "f(", "g()", "while ", "try:"
                    if name in seen or not name.isidentifier():
                        continue
                    seen.add(name)
                    options.append({"label": name, "type": self._kind(name, match, obj, dot >= 0)})
        except Exception:  # noqa: BLE001 - a lookup that raises completes nothing
            options = []
        finally:
            sys.stdout, sys.stderr = saved
        options.sort(key=lambda o: (o["label"].startswith("_"), o["label"].lower()))
        return json.dumps({"from": begins, "options": options[:MAX_COMPLETIONS]})

    def namespace_lookup(self, dotted: str) -> Any:
        """The object a dotted name names in the namespace (``v.data``), by lookups only; None when
        it names nothing."""
        parts = dotted.split(".")
        obj = self.namespace.get(parts[0], getattr(builtins, parts[0], None))
        for part in parts[1:]:
            if isinstance(getattr(type(obj), part, None), property):
                return None  # reading it would run its code
            obj = getattr(obj, part, None)
        return obj

    def _kind(self, name: str, match: str, owner: Any, attribute: bool) -> str:
        if not attribute and (keyword.iskeyword(name) or keyword.issoftkeyword(name)) and name not in self.namespace:
            return "keyword"
        if attribute:
            value = None if isinstance(getattr(type(owner), name, None), property) else getattr(owner, name, None)
        else:
            value = self.namespace.get(name, getattr(builtins, name, None))
        if isinstance(value, type):
            return "class"
        if isinstance(value, types.ModuleType):
            return "namespace"
        return "function" if match.endswith(("(", "()")) else "variable"

    def provenance(self, names: list[str]) -> str:
        """Warnings (JSON list of str) when a checked name is missing or is the reference.

        The checks test whatever the names hold: a learner who imports the
        reference from ``labs``, or whose cell never defined the name, would
        otherwise see checks pass or fail for reasons that are not their code.
        """
        warnings = []
        for name in names:
            if name not in self.namespace:
                warnings.append(f"{name} is not defined: run the exercise cell first.")
                continue
            module = getattr(self.namespace[name], "__module__", "") or ""
            if module == "labs" or module.startswith("labs."):
                warnings.append(
                    f"{name} is the reference implementation from {module}, not your code: these checks are checking the reference."
                )
        return json.dumps(warnings)

    def _report_syntax_error(self, exc: SyntaxError) -> None:
        lines = traceback.format_exception_only(type(exc), exc)
        self.emit(
            "error",
            json.dumps({"ename": type(exc).__name__, "evalue": str(exc.msg), "traceback": "".join(lines)}),
        )

    def _report_exit(self, exc: SystemExit) -> str:
        """``sys.exit()``, ``exit()``, or ``unittest.main()`` at its end: the cell stops there, and
        Python goes on, as in a notebook. A success (code None or 0) is no error: one line on
        stderr says why the cell ended; any other code is an error, shown without the frames of
        whatever called exit. Returns the run's status."""
        success = exc.code is None or exc.code == 0  # exit() means exit(0)
        line = f"SystemExit: {0 if success else exc.code} (the cell ends here; Python and your names stay)\n"
        if success:
            self.emit("stream", json.dumps({"name": "stderr", "text": line}))
            return "ok"
        self.emit("error", json.dumps({"ename": "SystemExit", "evalue": str(exc), "traceback": line}))
        return "error"

    def _report_exception(self, exc: BaseException) -> None:
        if isinstance(exc, ModuleNotFoundError) and exc.name in sys.stdlib_module_names:
            # Pyodide leaves some of the standard library out of the browser (sqlite3, ssl, lzma,
            # tkinter, ...): a bare "No module named 'sqlite3'" reads as the learner's typo.
            exc.add_note(missing_stdlib_note(exc.name))
        # Drop the runner's own frames: the learner's traceback starts in a cell.
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        if isinstance(exc, RecursionError):
            limit = 30  # keep a runaway recursion's traceback readable
        else:
            limit = None
        # Nor the worker's own Python (worker_boot.py, run as "<exec>"): an import that needs
        # the rest of the standard library fails inside it, but the learner's line is the news.
        depth, frame = 0, tb
        while frame is not None and frame.tb_frame.f_code.co_filename != "<exec>":
            depth, frame = depth + 1, frame.tb_next
        if frame is not None and depth:
            limit = depth if limit is None else min(limit, depth)
        text = "".join(traceback.format_exception(type(exc), exc, tb, limit=limit))
        self.emit(
            "error",
            json.dumps({"ename": type(exc).__name__, "evalue": str(exc), "traceback": text}),
        )
