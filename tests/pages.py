"""Read the pieces of a MyST lab page that tests need: cells, the exercise, the solution."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
CELL = re.compile(r"^```\{code-cell\} python\n(.*?)^```\n", re.S | re.M)
DROPDOWN = re.compile(r"^:::\{dropdown\} Reference solution\n(.*?)^:::\n", re.S | re.M)
PYTHON = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)


def read_page(name: str) -> str:
    return (DOCS / name).read_text()


def code_cells(text: str) -> list[tuple[list[str], str]]:
    """Each code cell as (tags, code), in page order."""
    cells = []
    for body in CELL.findall(text):
        tags: list[str] = []
        lines = body.splitlines(keepends=True)
        while lines and lines[0].startswith(":"):
            option = lines.pop(0)
            if option.startswith(":tags:"):
                tags = [t.strip() for t in option.split(":", 2)[2].strip().strip("[]").split(",")]
        cells.append((tags, "".join(lines).lstrip("\n")))
    return cells


def exercise_code(text: str) -> str:
    (code,) = [code for tags, code in code_cells(text) if "exercise" in tags]
    return code


def reference_solution(text: str) -> str:
    """The code block of the page's "Reference solution" dropdown."""
    (dropdown,) = DROPDOWN.findall(text)
    (code,) = PYTHON.findall(dropdown)
    return code


def replace_methods(module_code: str, class_name: str, methods_code: str) -> str:
    """``module_code`` with the methods of ``class_name`` replaced by those in ``methods_code``."""
    tree = ast.parse(module_code)
    new = {f.name: f for f in ast.parse(textwrap.dedent(methods_code)).body if isinstance(f, ast.FunctionDef)}
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    found = set()
    for i, item in enumerate(cls.body):
        if isinstance(item, ast.FunctionDef) and item.name in new:
            cls.body[i] = new[item.name]
            found.add(item.name)
    assert found == set(new), f"methods not in {class_name}: {set(new) - found}"
    return ast.unparse(tree)


def micrograd_solution() -> str:
    """Lab 1's starter with the dropdown's three methods put in."""
    text = read_page("micrograd.md")
    return replace_methods(exercise_code(text), "Value", reference_solution(text))
