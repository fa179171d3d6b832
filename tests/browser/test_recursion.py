"""A runaway recursion in the page is a RecursionError the learner can read, with the namespace kept,
even when it recurses through C (a __repr__ or __hash__ that calls itself), which at CPython's own
limit of 1000 overflowed the browser's stack and crashed the interpreter."""

from __future__ import annotations

import pytest

from tests.browser.helpers import READY, TIMEOUT, cell, run_and_wait, set_code

pytestmark = pytest.mark.browser

RUNAWAY = {
    "__rsub__": "class A:\n    def __rsub__(self, other):\n        return other - self\n\n1 - A()",
    "__repr__": "class A:\n    def __repr__(self):\n        return repr(self)\n\nrepr(A())",
    "__hash__": "class A:\n    def __hash__(self):\n        return hash(self)\n\nhash(A())",
    "__init__": "class A:\n    def __init__(self):\n        A()\n\nA()",
}


@pytest.mark.parametrize("name", RUNAWAY)
def test_a_runaway_recursion_raises_and_keeps_the_namespace(page, base_url, name):
    page.goto(f"{base_url}/runtime.html")
    page.wait_for_function(READY, timeout=TIMEOUT)
    set_code(page, 0, "kept = 42")
    run_and_wait(page, 0)
    set_code(page, 0, RUNAWAY[name])
    out = run_and_wait(page, 0)
    assert "RecursionError: maximum recursion depth exceeded" in out, out
    assert cell(page, 0).get_attribute("data-state") == "error"
    set_code(page, 0, "kept")
    assert run_and_wait(page, 0).strip() == "42"  # not restarted: the namespace is as it was
