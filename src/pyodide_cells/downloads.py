"""A lab page's downloads: the learner's exercise cells as a ``.py`` and an ``.ipynb``.

The page's script fills in the learner's current code (``js/page/download.js``);
what does not depend on it is made here, at build time, as a list of parts:

- a title and how to run the checks (Markdown);
- the *support* cell: the names the exercise cells import from ``labs``,
  copied from ``src/labs`` (docstrings without their examples), used only
  when ``labs`` is not installed, so the file runs with Python alone;
- one placeholder per exercise cell (``{"kind": "exercise", "index": k}``);
- the page's checks as a module-level ``__test__`` dict, one doctest per
  check (``labs.checks.standalone``), which ``python -m doctest`` and
  ``pytest --doctest-modules`` run; the script runs them too when run
  directly, the notebook in its last cell (which fails if one does);
- in the script, a guard before the learner's code: a program that ends
  before the checks (``sys.exit(0)`` in the learner's code) exits 1, not 0.

Only the exercise cells travel: the page's other cells draw with the guide's
own ``labs`` modules, which a learner's machine does not have.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
import textwrap

from docutils import nodes
from sphinx.errors import ExtensionError

# The oldest Python the downloads are tested with: pyproject.toml's requires-python (a test holds them equal).
MIN_PYTHON = "3.11"

Part = dict  # {"kind": "markdown" | "code" | "exercise", "text": str, "index": int, "only": "py" | "ipynb"}


def exercise_sources(doctree: nodes.document) -> list[str]:
    """The source of each code cell tagged ``exercise``, in page order."""
    sources = []
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") != "cell_code" or "tag_exercise" not in cell.get("classes", []):
            continue
        for block in cell.findall(nodes.literal_block):
            sources.append(block.astext())
            break
    return sources


def labs_imports(source: str) -> dict[str, list[str]]:
    """What ``source`` imports from ``labs``: ``{module: [names]}``.

    Raises ExtensionError for ``import labs...`` (only ``from labs.m import
    Name`` names what to copy into the download).

    >>> labs_imports("import math\\nfrom labs.attention import OnlineSoftmaxStep as Step\\n")
    {'labs.attention': ['OnlineSoftmaxStep']}
    """
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "labs":
            names = found.setdefault(node.module or "", [])
            names.extend(alias.name for alias in node.names if alias.name not in names)
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "labs" for a in node.names):
            raise ExtensionError(
                "an exercise cell imports labs with `import labs...`; write `from labs.module import Name` "
                "so the page's download can carry Name's definition"
            )
    return found


def checks_labs_modules(blocks: list[str]) -> list[str]:
    r"""The ``labs`` modules the checks (doctest blocks' ``>>>`` and ``...`` lines) import, sorted.

    A lab whose checks run more of ``labs`` than an exercise imports (Lab 4's
    run the whole engine) cannot be carried by copies: its download needs the
    package itself.

    >>> checks_labs_modules([">>> from labs.engine import LLMEngine\n>>> import labs.tiny_lm as lm\n"])
    ['labs.engine', 'labs.tiny_lm']
    >>> checks_labs_modules([">>> v = Value(2.0)\n"])
    []
    """
    found: set[str] = set()
    for block in blocks:
        source = "\n".join(line.lstrip()[4:] for line in block.splitlines() if line.lstrip().startswith((">>> ", "... ")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # labs.checks reports a check that does not parse; here it imports nothing
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "labs":
                found.add(node.module or "labs")
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "labs")
    return sorted(found)


# What a download whose checks run the labs package says first, when it is not installed.
NEEDS_LABS = """\
try:
    import labs  # this lab's checks run the guide's own {modules}: copies would not do
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "this lab's checks need the guide's `labs` package ({modules}): in a clone of the guide, "
        "`pip install -e .` installs it, or run this file with PYTHONPATH=<the clone>/src"
    ) from None
"""


def _as_copy(tree: ast.AST, local: set[str]) -> None:
    """Make a top-level definition fit to copy: every docstring cut before its
    first ``>>>`` (the examples use the rest of ``labs``), and each annotation
    that names a definition of the copy (``local``) turned into a string, as
    ``from __future__ import annotations`` has it in ``labs``: a class may name
    itself, or one defined after it.
    """
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                node.body[0] = ast.Expr(ast.Constant(re.split(r"\n[ \t]*>>>", doc, maxsplit=1)[0].rstrip()))
        for field in ("annotation", "returns"):
            annotation = getattr(node, field, None)
            if isinstance(annotation, ast.expr) and any(isinstance(n, ast.Name) and n.id in local for n in ast.walk(annotation)):
                setattr(node, field, ast.Constant(ast.unparse(annotation)))


def _definitions(module_name: str, names: list[str]) -> tuple[list[str], list[str]]:
    """The top-level statements of ``module_name`` that define ``names`` and what
    they use from it, in source order, as (imports, definitions) source texts.

    Raises ExtensionError when a name is not a top-level definition of the module.
    """
    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    defines: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)):
            defines[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    defines[target.id] = stmt
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            for alias in stmt.names:
                defines[(alias.asname or alias.name).split(".")[0]] = stmt
    wanted: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in defines:
            raise ExtensionError(f"an exercise imports {name} from {module_name}, which does not define it at top level")
        wanted.append(name)
        stmt = defines[name]
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in defines
                and node.id != name
                and not hasattr(builtins, node.id)
            ):
                todo.append(node.id)
    imports: list[str] = []
    definitions: list[tuple[int, str]] = []
    for name in wanted:
        stmt = defines[name]
        if isinstance(stmt, ast.ImportFrom):
            alias = next(a for a in stmt.names if (a.asname or a.name) == name)
            imports.append(ast.unparse(ast.ImportFrom(stmt.module, [alias], 0)))
        elif isinstance(stmt, ast.Import):
            imports.append(ast.unparse(ast.Import([a for a in stmt.names if (a.asname or a.name).split(".")[0] == name])))
        elif not any(line == stmt.lineno for line, _ in definitions):
            _as_copy(stmt, set(wanted))
            definitions.append((stmt.lineno, ast.unparse(stmt)))
    return sorted(set(imports)), [text for _, text in sorted(definitions)]


def support_cell(sources: list[str]) -> str:
    """The cell that makes what ``sources`` import from ``labs`` importable with
    ``labs`` not installed ("" when they import nothing from it).

    The copies are registered as the modules they came from, with their
    ``__module__`` set back, so error messages read as in the page
    (``labs.paged_attention.PageFault: ...``) and doctest does not collect
    them as the file's own.

    >>> "class PageFault(IndexError)" in support_cell(["from labs.paged_attention import PageFault\\n"])
    True
    """
    wanted: dict[str, list[str]] = {}
    for source in sources:
        for module, names in labs_imports(source).items():
            wanted.setdefault(module, [])
            wanted[module].extend(n for n in names if n not in wanted[module])
    if not wanted:
        return ""
    tries = [f"from {module} import {', '.join(names)}" for module, names in wanted.items()]
    imports = {"import sys", "import types"}
    body = []
    registers = []
    for module, names in wanted.items():
        needs, definitions = _definitions(module, names)
        imports.update(needs)
        body += ["", *("\n\n".join(definitions)).splitlines(), ""]
        registers.append((module, names))
    body[:0] = sorted(imports, key=lambda line: (line.startswith("from"), line))
    body += [
        "def _not_copied(module, copied, name):",
        "    if name.startswith('__'):",
        "        raise AttributeError(name)",
        "    raise AttributeError(f\"{module}.{name} is not in this file, which copies only {', '.join(copied)} \"",
        "                         \"from the guide's labs package: define it here, or install the guide's labs package\")",
        "",
    ]
    for module, names in registers:
        body.append(f"sys.modules.setdefault({module.split('.')[0]!r}, types.ModuleType({module.split('.')[0]!r}))")
        body.append(f"_module = sys.modules[{module!r}] = types.ModuleType({module!r})")
        body.append(f"for _name in {tuple(names)!r}:")
        body.append(f"    globals()[_name].__module__ = {module!r}")
        body.append("    setattr(_module, _name, globals()[_name])")
        body.append(f"_module.__getattr__ = lambda name: _not_copied({module!r}, {tuple(names)!r}, name)")
    body.append("del _module, _name")
    text = "\n".join(
        [
            "# What the exercise imports from the guide's `labs` package. Where `labs` is",
            "# installed, that is used; elsewhere these copies of its definitions are, so",
            f"# this file needs nothing but Python {MIN_PYTHON} or newer.",
            "try:",
            *(f"    {line}" for line in tries),
            "except ModuleNotFoundError:",
            textwrap.indent("\n".join(body), "    ").replace("\n    \n", "\n\n"),
        ]
    )
    compile(text, "support cell", "exec")  # a bad copy fails the build, not the learner's download
    return text + "\n"


def _docstring(text: str, indent: str) -> str:
    """``text`` as a docstring literal whose lines start at ``indent``; a raw
    string where it has backslashes (doctest reads ``__doc__`` as it is).

    Raises ExtensionError when no quoting gives ``text`` back.
    """
    body = textwrap.indent(text, indent).lstrip()
    for quote in ('"""', "'''"):
        for prefix in ("", "r"):
            if quote in body or (prefix == "" and "\\" in body):
                continue
            literal = f"{prefix}{quote}{body}\n{indent}{quote}"
            try:
                if ast.literal_eval(literal) == f"{body}\n{indent}":
                    return literal
            except SyntaxError:
                continue
    raise ExtensionError("a check of the page cannot be written as a Python docstring")


def checks_cell(blocks: list[str], hints: dict[str, list[str]] | None = None) -> str:
    """The page's checks as the module-level ``__test__`` dict doctest reads:
    one function per check, whose docstring holds the check's hints (the page's
    ``check-hints``, in the order the console gives them out), then the check and
    the set-up lines it needs (``labs.checks.standalone``). Doctest and pytest then
    report each check by its name, with line numbers in the file, and the learner
    who opens the file at that line finds the hints just above; one failing check
    does not hide the next. ``_HINTS`` keeps them for ``run_checks``, which prints
    each failed check's first hint. The functions are removed from the module once
    listed, so the checks do not run twice.

    Raises ExtensionError when a hint has a line doctest would read as an example (``>>>``).

    Each docstring opens at the start of its line: IPython strips ``>>>``
    prompts from a notebook cell's lines unless they are in a triple-quoted
    string that opens there (IPython 9's ``PromptStripper``).
    """
    from labs.checks import standalone

    hints = hints or {}
    lines = ["# The page's checks, one doctest each, with its hints and the set-up lines it needs."]
    names = []
    for index, (name, text) in enumerate(standalone(blocks), 1):
        function = f"_check_{index}"
        names.append((name, function))
        given = hints.get(name, [])
        if any(line.lstrip().startswith(">>>") for hint in given for line in hint.splitlines()):
            raise ExtensionError(f"a hint of the check {name!r} has a line starting with >>>: doctest would run it")
        wrapped = [textwrap.fill(f"{n}. {hint}", 96, subsequent_indent="   ") for n, hint in enumerate(given, 1)]
        about = "Hints, one at a time:\n" + "\n".join(wrapped) + "\n\n" if given else ""
        doc = _docstring(name + "\n\n" + about + text, "    ")
        lines += [f"def {function}():", f"    {doc}", "", ""]
    lines.append("__test__ = {")
    lines += [f"    {name!r}: {function}," for name, function in names]
    lines.append("}")
    kept = {name: hints[name] for name, _ in names if hints.get(name)}
    lines.append(f"_HINTS = {kept!r}  # the first is printed when its check fails")
    lines.append(f"del {', '.join(function for _, function in names)}")
    lines += ["", "", RUN_CHECKS]
    return "\n".join(lines)


RUN_CHECKS = '''\
def run_checks():
    """Run the checks against this file's names; print and return the names of those that failed."""
    import doctest

    failed = []
    for name, check in __test__.items():
        runner = doctest.DocTestRunner()
        for test in doctest.DocTestFinder().find(check, name, globs=dict(globals())):
            runner.run(test)
        if runner.failures:
            failed.append(name)
    for name in failed:
        if name in _HINTS:
            print(f"Hint for {name}: {_HINTS[name][0]}" + (" (more hints: this file, in the docstring of the check)" if len(_HINTS[name]) > 1 else ""))
    print(f"{len(__test__) - len(failed)} / {len(__test__)} checks passed" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return failed
'''

# The script's first code cell. Doctest and `python FILE.py` run the checks only
# once the file has run to its end: code that ends the program before that
# (`sys.exit(0)`, `exit()`, `raise SystemExit`) would otherwise exit 0 with no
# check run. An exit handler sees whether the checks were reached, and if not,
# says so and turns the exit status into 1. (`os._exit` skips exit handlers:
# the checks guide learners, they are not an anti-cheat.)
SCRIPT_GUARD = """\
# The page's checks run at the end of this file. If the program ends before it
# gets there (`sys.exit()`, `exit()` or `raise SystemExit` in the code above),
# no check has run: Python then says so and exits with status 1, never 0.
import atexit as _atexit

_checks_reached = False


def _fail_if_the_checks_were_not_reached(file):
    if not _checks_reached:
        import os
        import sys

        print(f"{file}: the program ended before the page's checks ran (sys.exit(), exit() or "
              "raise SystemExit in the code above them, or an error?): the checks did not pass", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


# The name now: at exit, a module that failed to import has lost its globals.
_atexit.register(_fail_if_the_checks_were_not_reached, __file__)
"""

SCRIPT_CHECKS_REACHED = "_checks_reached = True  # the code above ran to its end: the checks below can run\n"

SCRIPT_MAIN = """\
if __name__ == "__main__":  # `python {filename}` runs your code, then the checks
    raise SystemExit(1 if run_checks() else 0)
"""

NOTEBOOK_RUN = """\
failed = run_checks()
assert not failed, f"{len(failed)} of {len(__test__)} checks failed: {', '.join(failed)} (their reports are above)"
"""


def download_parts(
    doctree: nodes.document, blocks: list[str], title: str, name: str, hints: dict[str, list[str]] | None = None
) -> dict:
    """The page's download, for ``js/page/download.js``: ``{"name": file stem, "parts": [...]}``.

    ``{page_url}`` in a part's text is replaced by the page's address when the
    learner downloads.
    """
    sources = exercise_sources(doctree)
    if not sources:
        return {}
    filename = f"{name}.py"
    exercises = "the exercise" if len(sources) == 1 else f"the {len(sources)} exercises"
    about = [
        f"# {title}",
        "",
        f"Your code from {exercises} of {{page_url}}, in page order, with the page's checks. Only "
        f"{'the exercise is' if len(sources) == 1 else 'the exercises are'} here:",
        "names your code takes from the page's other cells are not defined in this file.",
        "",
    ]
    needs = checks_labs_modules(blocks)
    needs_text = (
        f"the guide's `labs` package (the checks run {', '.join(needs)}): in a clone of the guide, "
        "`pip install -e .`, or PYTHONPATH=<the clone>/src"
    )
    parts: list[Part] = [
        {
            "kind": "markdown",
            "only": "py",
            "text": "\n".join(
                [
                    *about,
                    f"- `python -m doctest -v {filename}` or `pytest --doctest-modules {filename}` runs the checks;",
                    f"  `python {filename}` runs your code, then the checks.",
                    f"- Needs Python {MIN_PYTHON} or newer and {needs_text}."
                    if needs
                    else f"- Nothing to install: Python {MIN_PYTHON} or newer is enough.",
                ]
            ),
        },
        {
            "kind": "markdown",
            "only": "ipynb",
            "text": "\n".join(
                [
                    *about,
                    "Run every cell (**Run All**): the last one runs the checks, and fails if one of them does.",
                    f"Needs {needs_text}." if needs else "Nothing to install beyond Jupyter.",
                ]
            ),
        },
    ]
    parts.append({"kind": "code", "only": "py", "text": SCRIPT_GUARD})
    if needs:
        parts.append({"kind": "code", "text": NEEDS_LABS.format(modules=", ".join(needs))})
    support = support_cell(sources)
    if support:
        parts.append({"kind": "code", "text": support})
    parts += [{"kind": "exercise", "index": index} for index in range(len(sources))]
    parts.append({"kind": "markdown", "text": "## The page's checks\n\nThe same checks as the page's **Check my code**."})
    checks = checks_cell(blocks, hints)
    parts.append(
        {
            "kind": "code",
            "text": SCRIPT_CHECKS_REACHED + "\n\n" + checks + "\n\n" + SCRIPT_MAIN.format(filename=filename),
            "only": "py",
        }
    )
    parts.append({"kind": "code", "text": checks, "only": "ipynb"})
    parts.append({"kind": "code", "text": NOTEBOOK_RUN, "only": "ipynb"})
    return {"name": name, "parts": parts}
