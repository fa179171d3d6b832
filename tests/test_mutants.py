"""The mistakes learners really make, applied to each lab's reference solution: every one is caught.

Each mutant is the page's reference solution with one classic bug put in (a
textual replacement, checked to apply exactly once). It is run as the page
runs it, then the page's checks run against it with the page's own engine
(labs.checks): at least one named check must fail, and the test names which.
Sources for each mistake are given beside it.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from labs.checks import doctest_blocks, run_blocks
from tests.pages import all_exercises, read_page, reference_solution

RECURSIVE_TOPO = '''\
        topo, visited = [], set()

        def build(node):  # the lecture's recursive version
            if node not in visited:
                visited.add(node)
                for child in node._prev:
                    build(child)
                topo.append(node)

        build(self)
        self.grad = 1.0'''
ITERATIVE_TOPO = '''\
        topo, visited, stack = [], set(), [(self, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                topo.append(node)  # after all of its children
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child in node._prev)
        self.grad = 1.0'''

# (page, mistake, [(reference text, mutated text)], checks that must fail (at least these), source)
MUTANTS = [
    ("micrograd.md", "a node used twice overwrites its gradient (= instead of +=)",
     [("            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad",
       "            self.grad = 1.0 * out.grad\n            other.grad = 1.0 * out.grad")],
     ["Reused node"], "micrograd issue #2; the lecture's a + a"),
    ("micrograd.md", "each factor's gradient from its own value, not the other factor's",
     [("            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
       "            self.grad += self.data * out.grad\n            other.grad += other.data * out.grad")],
     ["Input x1 gradient", "Weight w1 gradient"], "nn-zero-to-hero lecture 1, the product rule"),
    ("micrograd.md", "tanh's derivative from the input, not the output",
     [("(1.0 - t**2) * out.grad", "(1.0 - self.data**2) * out.grad")],
     ["tanh backward"], "the lecture's 1 - tanh(x)**2"),
    ("micrograd.md", "the walk in topological order, not reversed",
     [("for node in reversed(topo):", "for node in topo:")],
     ["Bias gradient", "Deep chain"], "micrograd engine.py: reversed(topo)"),
    ("micrograd.md", "no seed gradient (do/do = 1 never set)",
     [("        self.grad = 1.0\n        for node", "        for node")],
     ["Output gradient"], "micrograd engine.py: self.grad = 1"),
    ("micrograd.md", "a topological sort that recurses",
     [(ITERATIVE_TOPO, RECURSIVE_TOPO)],
     ["Deep chain"], "micrograd issue #90 (recursion depth); pyodide issues #2840, #5959"),
    # Exercise 2 (micrograd.md): the operations a network needs.
    ("micrograd.md", "power rule: the gradient x**k instead of k * x**(k - 1)",
     [("self.grad += k * self.data ** (k - 1) * out.grad", "self.grad += self.data**k * out.grad")],
     ["Power rule", "Division", "Reversed division"], "the power rule; micrograd engine.py __pow__"),
    ("micrograd.md", "relu's gradient from its output's value (out.data), not whether the input was > 0",
     [("self.grad += (self.data > 0) * out.grad", "self.grad += out.data * out.grad")],
     ["relu gradient"], "micrograd engine.py: (out.data > 0) * out.grad, misread as out.data"),
    ("micrograd.md", "relu passes the gradient everywhere, also where it is off",
     [("self.grad += (self.data > 0) * out.grad", "self.grad += out.grad")],
     ["relu off"], "the ReLU's derivative is 0 for x < 0"),
    ("micrograd.md", "exp's gradient from the input, not e**x",
     [("self.grad += e * out.grad", "self.grad += self.data * out.grad")],
     ["exp gradient"], "d e**x / dx = e**x"),
    ("micrograd.md", "__rsub__ computes self - other",
     [("return other + (-self)", "return self - other")],
     ["Reversed subtraction"], "nn-zero-to-hero issue #4 (__rsub__ sign)"),
    ("micrograd.md", "__rsub__ without a Value for the number: other - self calls __rsub__ again",
     [("return other + (-self)", "return other - self")],
     ["Reversed subtraction", "Trained network"], "RecursionError: int - Value hands back to Value.__rsub__"),
    ("micrograd.md", "__rtruediv__ inverted: self / other",
     [("return other * self**-1", "return self * other**-1")],
     ["Reversed division"], "Python data model: __rtruediv__(self, other) is other / self"),
    ("micrograd.md", "__sub__ with the operands swapped",
     [("return self + (-other)", "return other + (-self)")],
     ["Subtraction"], "a - b = a + (-b)"),
    ("micrograd.md", "a composition that builds a new leaf: no gradient flows back through /",
     [("return self * other**-1", "return Value(self.data / (other.data if isinstance(other, Value) else other))")],
     ["Division", "Trained network"], "the starter's own placeholder, left in"),
    ("micrograd.md", "__neg__ without a Value: the number's negation, a leaf",
     [("return self * -1", "return Value(-self.data)")],
     ["Negation", "Subtraction", "Reversed subtraction"], "micrograd engine.py: __neg__ is self * -1"),
    ("online_softmax.md", "the rescaling factor inverted: exp(m_new - m)",
     [("math.exp(m - m_new)", "math.exp(m_new - m)")],
     ["Rescaling factor"], "Milakov & Gimelshein 2018, d_j = d_{j-1} e^{m_{j-1} - m_j} + ..."),
    ("online_softmax.md", "alpha NaN when both maxima are -inf (no guard)",
     [("alpha = 1.0 if m_new == -math.inf else math.exp(m - m_new)", "alpha = math.exp(m - m_new)")],
     ["Fully masked row"], "flash-attention and flashinfer issues on NaN for fully masked rows"),
    ("online_softmax.md", "the running max is not a max (the latest logit)",
     [("m_new = max(m, x)", "m_new = x")],
     ["Running max"], "Milakov & Gimelshein 2018, m_j = max(m_{j-1}, x_j)"),
    ("online_softmax.md", "the denominator not rescaled when the max grows",
     [("d = d * alpha + term", "d = d + term")],
     ["Mixed row"], "FlashAttention-2 Algorithm 1, the rescaled running sum"),
    ("paged_attention.md", "t < 0 does not fault (block_table[-1] is read)",
     [("if not 0 <= t < num_tokens:", "if t >= num_tokens:")],
     ["Page fault below zero"], "vLLM issues on block tables read past their ends"),
    ("paged_attention.md", "off by one at t = num_tokens",
     [("if not 0 <= t < num_tokens:", "if not 0 <= t <= num_tokens:")],
     ["Page fault in the last block"], "vLLM: slot = block_table[t // B] * B + t % B for t < num_tokens"),
    ("paged_attention.md", "the physical block id not scaled by the block size",
     [("return block_table[logical] * block_size + offset", "return block_table[logical] + offset")],
     ["Second block", "Third block"], "Kwon et al. 2023, section 4.2 (block table translation)"),
    ("paged_attention.md", "the wrong exception type (IndexError, not PageFault)",
     [("raise PageFault(", "raise IndexError(")],
     ["Page fault past the end", "Page fault below zero"], "vLLM: a named error, not a bare IndexError"),
]


def solution(page: str) -> str:
    # micrograd's exercise 2 extends exercise 1's Value: both, in page order
    return all_exercises(read_page(page)) if page == "micrograd.md" else reference_solution(read_page(page))


def failing_checks(page: str, code: str) -> list[str]:
    """Run ``code`` as the page's cell, then the page's checks; the names of those that do not pass."""
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(compile(code, "<exercise>", "exec"), namespace)
        except Exception:  # noqa: BLE001  the page runs the checks after a cell that raised, too
            pass
    results = run_blocks(doctest_blocks(read_page(page)), namespace)
    return [r.check.name for r in results if not r.check.setup and r.status != "passed"]


@pytest.mark.parametrize("page", ["micrograd.md", "online_softmax.md", "paged_attention.md"])
def test_the_reference_solutions_pass_every_check(page):
    assert failing_checks(page, solution(page)) == []


@pytest.mark.parametrize("page, mistake, edits, caught_by, source", MUTANTS, ids=[m[1] for m in MUTANTS])
def test_every_classic_mistake_fails_a_named_check(page, mistake, edits, caught_by, source):
    code = solution(page)
    for before, after in edits:
        assert code.count(before) == 1, f"the reference solution changed: {before!r} is not in it once"
        code = code.replace(before, after)
    failed = failing_checks(page, code)
    assert failed, f"no check catches: {mistake} ({source})"
    assert set(caught_by) <= set(failed), f"{mistake}: expected {caught_by} among the failures, got {failed}"
