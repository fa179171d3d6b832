"""Doctest set-up for the pages (``pytest --doctest-glob="*.md"``).

Every ``>>>`` block of every page runs in CI against ``src/labs``. In the
browser, the page's assertion console runs the same blocks against the
learner's namespace instead, with the standard library's ``doctest``, where
``Value`` is whatever class the learner's cells defined. Two things keep the
two runs equivalent:

- the names the blocks use are bound here to the reference implementations;
- pytest's ``NUMBER`` option (on for the modules' doctests) is switched off
  for pages: the browser's ``doctest`` has no such option, and ``NUMBER`` would
  let ``-1.46`` pass for an expected ``-1.5``.

This file is not a page: Sphinx ignores ``.py`` files in the source folder.
"""

import doctest

import pytest
from _pytest.doctest import DoctestItem

from labs.autograd import Value

NUMBER = doctest.register_optionflag("NUMBER")  # the flag pytest registered


@pytest.fixture(autouse=True, scope="session")
def _reference_names(doctest_namespace):
    doctest_namespace["Value"] = Value


def pytest_collection_modifyitems(items):
    for item in items:
        if isinstance(item, DoctestItem) and item.path.suffix == ".md":
            for example in item.dtest.examples:
                example.options.setdefault(NUMBER, False)
