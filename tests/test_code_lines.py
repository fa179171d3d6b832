"""A cell's code laid out at build time as its editor lays it out (code_lines.py, js/page/codelines.js).

The build (Python) and the page and editor (JavaScript) each hold the hanging-indent rule; the
two must agree on every line, or a wrapped line of the code the page was built with starts at
another column than the same line in the editor, and the cell changes height when its editor is
made. Checked here on every line of every page's code cells, and on lines made to be hard.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pyodide_cells.code_lines import hanging_columns, lined

ROOT = Path(__file__).resolve().parent.parent
AWKWARD = ["", " ", "\t", "x", "    x", "\tx", "\t\tx", " \tx", "\t x = 1", "        ", "    # comment", "  \t  y"]

COLUMNS_IN_JS = """
import { hangingColumns } from "./src/pyodide_cells/js/page/codelines.js";
const lines = JSON.parse(await new Promise((resolve) => {
  let text = ""; process.stdin.on("data", (d) => (text += d)); process.stdin.on("end", () => resolve(text));
}));
process.stdout.write(JSON.stringify(lines.map((line) => hangingColumns(line, 4))));
"""


def cell_lines() -> list[str]:
    lines = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text(), re.M | re.S):
            lines += block.split("\n")
    return lines


def test_the_build_and_the_editor_give_every_line_the_same_hanging_indent():
    node = shutil.which("node")
    assert node, "Node.js is needed to run the page's rule"
    lines = cell_lines() + AWKWARD
    assert len(lines) > 500 and any(hanging_columns(line) for line in lines)
    proc = subprocess.run(
        [node, "--input-type=module", "-e", COLUMNS_IN_JS],
        input=json.dumps(lines),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    in_js = json.loads(proc.stdout)
    differ = [(line, py, js) for line, py, js in zip(lines, map(hanging_columns, lines), in_js, strict=True) if py != js]
    assert differ == []


def test_lined_keeps_the_text_and_numbers_the_gutter_for_the_largest_line_number():
    code = "\n".join(f"    x{i} = {i}" if i % 2 else f"y{i} = 1" for i in range(12))
    highlighted = f'<div class="highlight"><pre><span></span>{code}\n</pre></div>\n'
    out = lined(highlighted)
    assert re.sub(r"<[^>]*>", "", out.split("</pre>")[0]) == code + "\n"
    assert out.count('<span class="pc-line"') == 12
    assert out.count('style="--pc-indent: 4"') == 6
    assert '<pre class="pc-lines" style="--pc-digits: 2">' in out
    with pytest.raises(ValueError, match="expected Pygments' <pre> block"):
        lined("<div>no code</div>")
