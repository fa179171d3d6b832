"""Benchmarks for the lab guide (``nox -s bench``); not part of the tests."""
