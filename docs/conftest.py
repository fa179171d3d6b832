"""Doctest set-up for the pages (``pytest --doctest-glob="*.md"``).

Every ``>>>`` block of every page runs in CI against ``src/labs``. In the
browser, the page's assertion console runs the same blocks against the
learner's namespace instead, with the standard library's ``doctest``. Two
things keep the two runs equivalent:

- A page names, in its front matter, the names its checks take from the
  learner's code and where CI finds the reference for each::

      lab:
        checks_use:
          Value: labs.autograd:Value

  Each page's doctest gets exactly those names, nothing else.
- pytest's ``NUMBER`` option (on for the modules' doctests) is off for pages:
  the browser's ``doctest`` has no such option, and ``NUMBER`` would let
  ``-1.46`` pass for an expected ``-1.5``.

This file is not a page: Sphinx ignores ``.py`` files in the source folder.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import yaml
from _pytest.doctest import DoctestItem

NUMBER = doctest.register_optionflag("NUMBER")  # the flag pytest registered


def front_matter(path: Path) -> dict:
    """The YAML front matter of a MyST page ({} if it has none)."""
    text = path.read_text()
    if not text.startswith("---\n"):
        return {}
    end = text.index("\n---\n", 4)
    return yaml.safe_load(text[4:end]) or {}


def checks_use(path: Path) -> dict[str, object]:
    """Resolve the page's ``lab.checks_use`` mapping ``name: module:attr``."""
    names = {}
    for name, target in ((front_matter(path).get("lab") or {}).get("checks_use") or {}).items():
        module, _, attr = target.partition(":")
        names[name] = getattr(importlib.import_module(module), attr)
    return names


def pytest_collection_modifyitems(items):
    for item in items:
        if isinstance(item, DoctestItem) and item.path.suffix == ".md":
            item.dtest.globs.update(checks_use(item.path))
            for example in item.dtest.examples:
                example.options.setdefault(NUMBER, False)
