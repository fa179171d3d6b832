"""What importing the labs costs: every module is imported by a lab page's
first cells (and, in the browser, before the start-up snapshot), where each
extra standard-library module is compiled or run inside WebAssembly."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import labs

SRC = Path(labs.__file__).parent.parent
MODULES = sorted(m.name for m in pkgutil.iter_modules(labs.__path__, "labs."))
# Heavy modules the labs have no use for. xml.sax.saxutils (once used for
# escaping SVG text) pulls in urllib.request, email and http.client: 70 ms of
# a lab page's start in Pyodide.
HEAVY = ("urllib.request", "email", "http.client", "xml.sax", "asyncio", "decimal", "fractions")


def test_the_labs_are_the_modules_the_site_precompiles():
    assert MODULES == [
        "labs.attention",
        "labs.attention_grads",
        "labs.autograd",
        "labs.block_pool_svg",
        "labs.block_sharing",
        "labs.block_table_svg",
        "labs.checks",
        "labs.engine",
        "labs.flash_tiles",
        "labs.fp8",
        "labs.graph",
        "labs.graph_view",
        "labs.kv_cache_manager",
        "labs.model_runner",
        "labs.nn",
        "labs.paged_attention",
        "labs.plots",
        "labs.sampling",
        "labs.scheduler",
        "labs.serving_sim",
        "labs.softmax_trace",
        "labs.tiny_lm",
    ]


def test_importing_the_check_engine_does_not_import_doctest():
    """doctest brings pdb, difflib and inspect: the page imports every labs module while
    Python starts, and pays for doctest only on the first Check."""
    code = "import sys\nimport labs.checks\nprint('doctest' in sys.modules, 'pdb' in sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(SRC)!r})\n" + code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["False", "False"]


def test_importing_every_lab_pulls_in_no_heavy_stdlib_module():
    code = (
        "import sys, importlib\n"
        f"for name in {MODULES!r}: importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    # -S -I: no site-packages hooks, no user paths: what the labs themselves import.
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(SRC)!r})\n" + code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def _private_names_of_other_labs_modules(path: Path) -> list[str]:
    """`from labs.x import _name` and `alias._name` (alias a labs module imported here) in one module of src/labs."""
    import ast

    own = "labs." + path.stem
    found, aliases = [], {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module == "labs" or node.module.startswith("labs.")):
            for alias in node.names:
                full = node.module if node.module != "labs" else f"labs.{alias.name}"
                if node.module == "labs":  # from labs import attention as _att: a module
                    aliases[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and node.module != own:
                    found.append(f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("labs.") and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and aliases[node.value.id] != own
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{aliases[node.value.id]}.{node.attr}")
    return found


def test_no_labs_module_uses_another_modules_private_names():
    """Issue 36: a module's private names may change with it; another module takes only its public ones."""
    used = {p.name: _private_names_of_other_labs_modules(p) for p in sorted((SRC / "labs").glob("*.py"))}
    assert {name: found for name, found in used.items() if found} == {}


def test_the_private_names_finder_sees_both_forms(tmp_path):
    module = tmp_path / "flash_tiles.py"
    module.write_text(
        "from labs import attention as _att\nfrom labs.autograd import _walk\nfrom labs.flash_tiles import _own\n_att._score(1)\n_att.score(1)\n"
    )
    assert _private_names_of_other_labs_modules(module) == ["from labs.autograd import _walk", "labs.attention._score"]
