"""labs.checks: the one engine the page, pytest and the command line run the checks with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from labs.checks import doctest_blocks, parse_block, run_blocks
from tests.pages import DOCS, all_exercises, read_page

ROOT = Path(__file__).resolve().parent.parent
LABS = {"micrograd.md": 33, "online_softmax.md": 18, "paged_attention.md": 25}


def cli(page: str, solution: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "labs.checks", str(DOCS / page), str(solution)],
        capture_output=True, text=True, cwd=ROOT / "src", env={"PYTHONPATH": str(ROOT / "src")},
    )


def solution_file(tmp_path, page, starter=False) -> Path:
    text = read_page(page)
    code = all_exercises(text, solved=not starter)
    path = tmp_path / "main.py"
    path.write_text(code)
    return path


@pytest.mark.parametrize("page, checks", LABS.items())
def test_the_command_line_passes_the_reference_solution(tmp_path, page, checks):
    out = cli(page, solution_file(tmp_path, page))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(lines) == checks and all(line.startswith("PASS ") for line in lines)
    assert out.stdout.rstrip().endswith(f"{checks} / {checks} checks passed")


@pytest.mark.parametrize("page", LABS)
def test_the_command_line_fails_the_starter_and_says_what_was_expected(tmp_path, page):
    out = cli(page, solution_file(tmp_path, page, starter=True))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL " in out.stdout and "expected: " in out.stdout and "got: " in out.stdout


def test_the_command_line_says_when_it_cannot_start(tmp_path):
    missing = cli("micrograd.md", tmp_path / "nowhere.py")
    assert missing.returncode == 2 and "cannot read the solution" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\nraise ValueError('half-written')\n")
    raised = cli("micrograd.md", broken)
    assert raised.returncode == 2
    assert "raised while loading" in raised.stderr and "ValueError: half-written" in raised.stderr
    no_page = subprocess.run([sys.executable, "-m", "labs.checks", str(tmp_path / "none.md"), str(broken)],
                             capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "src")})
    assert no_page.returncode == 2 and "cannot read the page" in no_page.stderr


def test_a_failing_set_up_line_stops_its_block_not_the_next():
    """Lab 2 reported "got [-inf, -inf]" for a 6-logit row after the set-up line overflowed."""
    blocks = [">>> r = [1, 2]\n", ">>> r = 1 / 0\n>>> r  # Uses r\n[3]\n", ">>> r  # Next block\n[1, 2]\n"]
    results = run_blocks(blocks, {})
    assert [(r.check.name, r.status) for r in results] == [
        ("", "passed"), ("", "error"), ("Uses r", "not run"), ("Next block", "passed")]
    assert results[2].reason == "the set-up line `r = 1 / 0` raised `ZeroDivisionError: division by zero`"


def test_the_page_lists_the_checks_the_engine_reads(site_dir):
    """The console draws the checks pages.py took from labs.checks: no second parser in the page."""
    html = (site_dir / "micrograd.html").read_text()
    config = json.loads(html.split("window.PYODIDE_CELLS_CONFIG = ", 1)[1].split(";\n", 1)[0])
    blocks = doctest_blocks(read_page("micrograd.md"))
    expected = [c for i, text in enumerate(config["blocks"]) for c in parse_block(text, i)]
    assert [c["name"] for c in config["checks"]] == [c.name for c in expected]
    assert [c["name"] for c in config["checks"] if not c["setup"]] == [
        c.name for i, text in enumerate(blocks) for c in parse_block(text, i) if not c.setup]
    assert sum(not c["setup"] for c in config["checks"]) == LABS["micrograd.md"]
