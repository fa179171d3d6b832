"""The pages' doctest blocks are the assertion suite: prove every one runs.

pytest runs each page as one doctest (``--doctest-glob="*.md"``). These tests
make sure that nothing is silently lost on the way: every ``>>>`` line of
every fenced block is an example pytest collects, no example is skipped, and
the blocks pass with the standard library's ``doctest`` alone, which is what
the page's assertion console uses in the browser.
"""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
from conftest import checks_use  # noqa: E402  (docs/conftest.py)

from labs.checks import doctest_blocks, run_blocks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"^```(?:python|pycon)\s*\n(.*?)^```", re.S | re.M)


def fenced_prompts(text: str) -> int:
    """Count ``>>>`` lines inside fenced python blocks, read as plain text."""
    return sum(1 for block in FENCE.findall(text) for line in block.splitlines() if line.lstrip().startswith(">>>"))


def test_there_are_pages_with_assertions():
    counts = {p.name: fenced_prompts(p.read_text()) for p in PAGES}
    assert counts["micrograd.md"] >= 20  # set-up lines and assertions of both exercises


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_prompt_is_an_example_and_passes_with_stdlib_doctest(page):
    text = page.read_text()
    expected = fenced_prompts(text)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, checks_use(page), page.name, str(page), 0)
    assert len(test.examples) == expected, "a >>> line outside a fenced block, or a block doctest cannot parse"
    assert all(doctest.SKIP not in ex.options for ex in test.examples), "a skipped example"
    # Exactly the browser's flags: no pytest-only NUMBER.
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=lambda s: None)
    assert (result.attempted, result.failed) == (expected, 0)


class TanhWithoutBackward:
    """A learner-style Value whose tanh forgets its backward step."""

    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad, self._prev, self._op, self.label = data, 0.0, set(_children), _op, label
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, TanhWithoutBackward) else TanhWithoutBackward(other)
        out = TanhWithoutBackward(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, TanhWithoutBackward) else TanhWithoutBackward(other)
        out = TanhWithoutBackward(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def tanh(self):
        import math

        return TanhWithoutBackward(math.tanh(self.data), (self,), "tanh")  # no _backward: the bug

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((c, False) for c in node._prev)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def test_a_wrong_gradient_fails_exactly_the_assertions_it_should():
    blocks = doctest_blocks((DOCS / "micrograd.md").read_text())
    exercise_2 = next(i for i, block in enumerate(blocks) if "def op_check" in block)
    results = run_blocks(blocks[:exercise_2], {"Value": TanhWithoutBackward})
    failed = [r.check.source.split("#")[0].strip() for r in results if r.status != "passed"]
    # Without the tanh backward, no gradient reaches n or below; o and w2 (0.0 anyway) pass,
    # and so do the three checks that need no tanh; the three that put tanh in a larger graph fail.
    assert failed == [
        "round(n.grad, 6)",
        "round(b.grad, 6)",
        "round(x1.grad, 6)",
        "round(w1.grad, 6)",
        "round(x2.grad, 6)",
        "round(v.grad, 6)",
        "round(v.grad, 6)",
        "round(v.grad, 6)",
    ]


def test_pytest_collects_every_page_with_examples():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(DOCS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    collected = {line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line}
    pages_with_examples = {f"docs/{p.name}" for p in PAGES if fenced_prompts(p.read_text())}
    assert pages_with_examples and pages_with_examples <= collected, proc.stdout + proc.stderr
