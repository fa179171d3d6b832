"""Sessions for building, serving, testing and benchmarking the lab guide.

    nox -s serve    build the site and serve it on http://127.0.0.1:8000
    nox -s tests    lint first, then every test: node --test (tests/js), labs
                    unit tests and doctests, page doctests, the docs build
                    with -W, browser tests in headless Chromium; prints the
                    30 slowest tests
    nox -s lab -- NAME   one lab's checks, mutants, downloads and browser tests
    nox -s lint     ruff on the Python, TypeScript's checker (tsc) on the JS
    nox -s docs     build the site into build/html only
    nox -s bench    benchmarks in headless Chromium (not part of the tests)
    nox -s torch    labs against PyTorch in float64 (optional: installs torch)

Python packages come from pyproject.toml's dependency groups; JavaScript from
package-lock.json through `npm ci`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml("pyproject.toml")
SITE = ROOT / "build" / "html"
TEST_SITE = ROOT / "build" / "test-html"  # not SITE: a running `nox -s serve` keeps its files
LINT_PATHS = ["src", "tests", "benchmarks", "tools", "docs/conftest.py", "conf", "noxfile.py"]
# The page script, the worker and the service worker run in different globals: a config each.
TSCONFIGS = [f"src/pyodide_cells/types/tsconfig.{name}.json" for name in ("page", "worker", "sw")]
# Three workers on the CI machine's two cores: a browser test waits much of its time (on Python in
# the page, on timers, on the network it holds back); measured here, three ran the browser tests in
# 9.2 min where two took about 11. LAB_PYTEST_WORKERS=1 runs them one at a time.
PYTEST_WORKERS = os.environ.get("LAB_PYTEST_WORKERS", "3")

nox.options.sessions = ["tests"]
nox.options.reuse_venv = "yes"
nox.options.default_venv_backend = "venv"


def _npm_ci(session: nox.Session) -> None:
    """Install the JS packages the site serves (Pyodide, CodeMirror, Graphviz, KaTeX)."""
    lock = ROOT / "package-lock.json"
    stamp = ROOT / "node_modules" / ".package-lock.json"
    if stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime and not os.environ.get("CI"):
        session.log("node_modules is up to date with package-lock.json")
        return
    session.run("npm", "ci", "--no-audit", "--no-fund", external=True)


def _install(session: nox.Session, *groups: str) -> None:
    session.install(*nox.project.dependency_groups(PYPROJECT, *groups))
    session.install("-e", ".", "--no-deps")


def _lint(session: nox.Session) -> None:
    """ruff check and ruff format --check on the Python; tsc --noEmit on the JS (JSDoc types), one run per config in TSCONFIGS."""
    session.run("ruff", "check", *LINT_PATHS)
    session.run("ruff", "format", "--check", *LINT_PATHS)  # `ruff format` with the same paths mends it
    tsc = str(ROOT / "node_modules" / ".bin" / "tsc")
    failed = []
    for config in TSCONFIGS:  # each one, so that one run shows every error
        try:
            session.run(tsc, "--noEmit", "-p", config, external=True)
        except nox.command.CommandFailed:
            failed.append(config)
    if failed:
        session.error(f"tsc found errors with {', '.join(failed)}")


def _docs_command(outdir: Path) -> list[str]:
    # Sphinx's pickled environment (it holds the build's absolute paths) goes
    # beside the site, not into it: a host publishes the whole folder. Both
    # start empty: every build runs the pages' cells against today's labs.
    doctrees = ROOT / "build" / "doctrees" / outdir.name
    shutil.rmtree(outdir, ignore_errors=True)
    shutil.rmtree(doctrees, ignore_errors=True)
    return ["sphinx-build", "-W", "-n", "--keep-going", "-q", "-b", "html", "-d", str(doctrees), "-c", "conf", "docs", str(outdir)]


def _build_docs(session: nox.Session, outdir: Path = SITE) -> None:
    session.run(*_docs_command(outdir))


def _start_docs_build(session: nox.Session, outdir: Path) -> subprocess.Popen:
    """The docs build as `_build_docs` runs it, in the background; its output goes to a log."""
    command = _docs_command(outdir)
    log = ROOT / "build" / f"{outdir.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    session.log(f"{' '.join(command)} (in the background; output in {log.relative_to(ROOT)})")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([session.bin, os.environ.get("PATH", "")]),
        "VIRTUAL_ENV": session.virtualenv.location,
    }
    with log.open("w") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _end_docs_build(session: nox.Session, build: subprocess.Popen, outdir: Path) -> None:
    """Wait for the background build; fail the session with its output if it failed."""
    code = build.wait()
    log = ROOT / "build" / f"{outdir.name}.log"
    if code != 0:
        session.error(f"the docs build failed ({code}):\n{log.read_text()[-20000:]}")
    if text := log.read_text().strip():
        print(text)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the site into build/html (warnings are errors)."""
    _npm_ci(session)
    _install(session, "docs")
    _build_docs(session)


@nox.session
def serve(session: nox.Session) -> None:
    """Build the site and serve it on http://127.0.0.1:8000 (pass a port: nox -s serve -- 8001)."""
    port = session.posargs[0] if session.posargs else "8000"
    if not port.isdigit() or not 0 < int(port) <= 65535:
        session.error(f"{port!r} is not a port number: nox -s serve -- 8001")
    with socket.socket() as probe:  # say so now, not after a minute of building
        if probe.connect_ex(("127.0.0.1", int(port))) == 0:
            session.error(f"port {port} is in use (another server?): pass another, e.g. nox -s serve -- {int(port) + 1}")
    _npm_ci(session)
    _install(session, "docs")
    _build_docs(session)
    session.run("python", "-m", "pyodide_cells.serve", str(SITE), "--port", port)


@nox.session
def lint(session: nox.Session) -> None:
    """Lint: ruff check on the Python, tsc --noEmit on the JavaScript (page script and worker)."""
    _npm_ci(session)
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    _lint(session)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the lint, then every test: unit, doctests (modules and pages), docs build, browser tests."""
    _npm_ci(session)
    _install(session, "test", "lint")
    env = {"LAB_SITE_DIR": str(TEST_SITE), "LAB_ARTIFACTS": str(ROOT / "test-artifacts")}
    if session.posargs:  # a selection of the contributor's: as given, on one worker, after the build
        _lint(session)
        _build_docs(session, TEST_SITE)
        session.run("pytest", "--durations=30", *session.posargs, env=env)
        return
    # The docs build is mostly one process on one core: the lint, the JS tests and the tests that
    # need no built site (marked in tests/conftest.py) run on the other one meanwhile.
    for old in (ROOT / "test-artifacts").glob("contexts-*.txt"):
        old.unlink()
    began = time.monotonic()
    took = lambda: f"{time.monotonic() - began:.0f} s"  # noqa: E731
    build = _start_docs_build(session, TEST_SITE)
    try:
        _lint(session)
        # The runtime's pure JavaScript (scheduler, protocol, terminal text) where it lives: node --test.
        session.run(
            "node", "--test", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "js").glob("*.test.mjs")), external=True
        )
        session.run("pytest", "-n", "2", "-m", "not site and not solo", "--durations=10", env=env)
    except BaseException:
        build.kill()
        build.wait()
        raise
    session.log(f"the lint, the JS tests and the tests that need no site: done at {took()}")
    _end_docs_build(session, build, TEST_SITE)
    session.log(f"the docs build: done at {took()}")
    # Workers (pytest-xdist, PYTEST_WORKERS), each with its own Chromium; an idle one takes tests
    # queued for a busy one (worksteal), so one long test does not hold the end of the run. The
    # tests marked `solo` would measure or race time under that load: they run after, alone.
    # The 30 slowest tests, every run: a test that became slow shows where everyone looks.
    session.run("pytest", "-n", PYTEST_WORKERS, "--dist", "worksteal", "-m", "site and not solo", "--durations=30", env=env)
    session.log(f"the site's tests: done at {took()}")
    session.run("pytest", "-m", "solo", "--durations=10", env=env, success_codes=[0, 5])  # 5: none marked
    session.log(f"the solo tests: done at {took()} (after the set-up)")
    counts = [int(p.read_text()) for p in (ROOT / "test-artifacts").glob("contexts-*.txt")]
    session.log(f"browser contexts made (each a cold start of Python's WebAssembly): {sum(counts)}")


@nox.session
def lab(session: nox.Session) -> None:
    """The quick loop for one lab: nox -s lab -- micrograd (the page's name, without .md).

    Builds the site once, then runs the page's checks against the reference (its doctests), the
    command line on its reference and starter, its mutants, its downloads, and the browser tests
    whose names or modules name the lab. Not a replacement for `nox -s tests` before a commit.
    """
    if len(session.posargs) != 1 or not (ROOT / "docs" / f"{session.posargs[0]}.md").is_file():
        labs = sorted(p.stem for p in (ROOT / "docs").glob("*.md") if "\nlab:" in p.read_text().split("\n---\n", 1)[0])
        session.error(f"name one lab page: nox -s lab -- NAME, NAME one of {', '.join(labs)}")
    name = session.posargs[0]
    _npm_ci(session)
    _install(session, "test", "lint")
    _build_docs(session, TEST_SITE)
    session.run(
        "pytest",
        "--durations=10",
        f"docs/{name}.md",
        "tests",
        "-k",
        name,
        env={"LAB_SITE_DIR": str(TEST_SITE), "LAB_ARTIFACTS": str(ROOT / "test-artifacts")},
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: first output vs the bare-Pyodide floor in headless Chromium, engines in CPython."""
    _npm_ci(session)
    _install(session, "bench")
    _build_docs(session)
    session.run("python", "-m", "benchmarks", "--site", str(SITE), *session.posargs)


@nox.session
def torch(session: nox.Session) -> None:
    """Compare labs with PyTorch in float64: autograd, softmax/logsumexp, attention (installs torch)."""
    _install(session, "test")
    # 2.13.0 is the CPU build these machines keep on disk; elsewhere pip fetches it.
    session.install("torch==2.13.0")
    session.run("pytest", "-p", "no:cacheprovider", "tests/torch_compare", "-o", "addopts=", *session.posargs)
