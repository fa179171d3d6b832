"""Read the pieces of a MyST lab page that tests need: cells, the exercise, the solution."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

from labs.checks import doctest_blocks, parse_block

DOCS = Path(__file__).resolve().parent.parent / "docs"
CELL = re.compile(r"^```\{code-cell\} python\n(.*?)^```\n", re.S | re.M)
# "Reference solution" for a page's first exercise, "Reference solution: exercise 2" and so on.
DROPDOWN = re.compile(r"^:::\{dropdown\} Reference solution[^\n]*\n(.*?)^:::\n", re.S | re.M)
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


def exercise_code(text: str, n: int = 0) -> str:
    """The starter code of the page's ``n``-th exercise cell (from 0), as the page gives it."""
    return [code for tags, code in code_cells(text) if "exercise" in tags][n]


def reference_solution(text: str, n: int = 0) -> str:
    """The code block of the page's ``n``-th "Reference solution" dropdown (from 0)."""
    (code,) = PYTHON.findall(DROPDOWN.findall(text)[n])
    return code


def micrograd_solution() -> str:
    """Lab 1's reference solution: the whole main.py cell, completed."""
    return reference_solution(read_page("micrograd.md"))


def exercise_count(text: str) -> int:
    """How many exercise cells the page has."""
    return sum("exercise" in tags for tags, _ in code_cells(text))


def all_exercises(text: str, solved: bool = True) -> str:
    """Every exercise of the page, in page order, as one file: the reference solutions, or the starters.

    A later exercise may build on an earlier one's names (micrograd's exercise 2 extends exercise 1's
    ``Value``), so they run together, in order, as the page runs them.
    """
    pick = reference_solution if solved else exercise_code
    return "\n\n".join(pick(text, n) for n in range(exercise_count(text)))


def exercise_codes(text: str) -> list[str]:
    """The starter code of every exercise cell of the page, in page order."""
    return [code for tags, code in code_cells(text) if "exercise" in tags]


def reference_solutions(text: str) -> list[str]:
    """The code of every "Reference solution" dropdown of the page, in page order."""
    return [reference_solution(text, n) for n in range(len(DROPDOWN.findall(text)))]


# ---------------------------------------------------------------- the one list of labs
# Every test that loops over the labs takes them from here, read off the pages: a page is a lab when
# its front matter has a `lab:` mapping (CONTRIBUTING.md, "Add a lab"). Adding a lab edits no test.


def front_matter(name: str) -> dict:
    """The YAML front matter of the page ``name`` (e.g. "micrograd.md"), {} if it has none."""
    text = read_page(name)
    if not text.startswith("---\n"):
        return {}
    return yaml.safe_load(text[4 : text.index("\n---\n", 4)]) or {}


def lab_pages() -> list[str]:
    """The lab pages' file names ("micrograd.md", ...), in the order of their titles' "# Lab N"."""
    labs = [p.name for p in sorted(DOCS.glob("*.md")) if front_matter(p.name).get("lab")]
    number = re.compile(r"^# Lab (\d+)", re.M)
    return sorted(labs, key=lambda name: int(m[1]) if (m := number.search(read_page(name))) else 0)


LABS = lab_pages()
LAB_NAMES = [name.removesuffix(".md") for name in LABS]  # as in the site's URLs: micrograd.html
PAGES = [p.stem for p in sorted(DOCS.glob("*.md"))]  # every page of the site


@functools.cache
def named_checks(name: str) -> tuple[str, ...]:
    """The names of the page's checks (not its set-up lines), in page order, as labs.checks reads them."""
    return tuple(c.name for i, block in enumerate(doctest_blocks(read_page(name))) for c in parse_block(block, i) if not c.setup)


def check_count(name: str) -> int:
    """How many named checks the page has (what its console counts)."""
    return len(named_checks(name))


H2 = re.compile(r"^## ", re.M)


def first_exercise_checks(name: str) -> list[str]:
    """The names of the page's first exercise's checks: what its assertion console's head counts."""
    return checks_by_exercise(read_page(name))[0]


def checks_by_exercise(text: str) -> list[list[str]]:
    """The names of each exercise's checks, in page order: ``[exercise 1's, exercise 2's, ...]``.

    As the page groups them (checkbars.js): the checks of one h2 section share a Check bar, the first
    such section is the first exercise's and each later one the next exercise's. Raises ValueError
    when the page's sections with checks and its exercises do not pair up.
    """
    sections = []
    for section in H2.split(text):
        names = [c.name for block in doctest_blocks(section) for c in parse_block(block) if not c.setup]
        if names:
            sections.append(names)
    if len(sections) != exercise_count(text):
        raise ValueError(f"{len(sections)} sections with checks for {exercise_count(text)} exercises")
    return sections
