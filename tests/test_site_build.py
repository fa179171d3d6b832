"""The built site: self-hosted runtime, per-page wiring, no other origin."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sphinx.errors import ExtensionError

from labs.checks import doctest_blocks
from pyodide_cells.assets import snapshot_inputs, snapshot_key
from tests.conftest import build_site
from tests.pages import check_count, read_page

ROOT = Path(__file__).resolve().parents[1]


class Resources(HTMLParser):
    """Collect the URLs a page loads by itself (scripts, styles, images, frames...)."""

    LOADING = {
        ("script", "src"),
        ("link", "href"),
        ("img", "src"),
        ("iframe", "src"),
        ("source", "src"),
        ("video", "src"),
        ("audio", "src"),
        ("embed", "src"),
        ("object", "data"),
    }

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for t, a in self.LOADING:
            if tag == t and attrs.get(a) and not (tag == "link" and attrs.get("rel") in {"index", "search", "next", "prev"}):
                self.urls.append(attrs[a])
        self._in_script = tag == "script" and "src" not in attrs

    def handle_data(self, data):
        if self._in_script:
            self.inline_scripts.append(data)

    def handle_endtag(self, tag):
        self._in_script = False


def resources(path: Path) -> Resources:
    parser = Resources()
    parser.feed(path.read_text())
    return parser


def test_no_page_loads_anything_from_another_origin(site_dir):
    pages = list(site_dir.rglob("*.html"))
    assert len(pages) >= 3
    for page in pages:
        for url in resources(page).urls:
            assert not re.match(r"^(?:[a-z]+:)?//", url, re.I), f"{page.name} loads {url}"
    for css in site_dir.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(errors="replace")):
            assert not re.match(r"^(?:https?:)?//", url), f"{css.name} loads {url}"


def test_math_is_rendered_at_build_time_and_its_fonts_are_self_hosted(site_dir):
    html = (site_dir / "online_softmax.html").read_text()
    page = resources(site_dir / "online_softmax.html")
    # KaTeX's HTML (with MathML for screen readers) is in the page; no math script is.
    assert html.count('<span class="katex">') >= 60
    assert '<annotation encoding="application/x-tex">' in html and r"\alpha" in html
    assert not re.search(r"\\\(|\\\[", html)  # no \( or \[ left for a script to typeset
    assert not any(re.search(r"katex|mathjax", u) for u in page.urls if u.endswith(".js") or ".js?" in u)
    css = [u for u in page.urls if "katex.min.css" in u]
    assert css and css[0].startswith("_static/katex/katex.min.css")
    # Every woff2 font the stylesheet names is in the site (browsers take woff2 first).
    sheet = (site_dir / "_static" / "katex" / "katex.min.css").read_text()
    fonts = set(re.findall(r"url\((fonts/[^)]+\.woff2)\)", sheet))
    assert len(fonts) >= 15
    assert all((site_dir / "_static" / "katex" / f).is_file() for f in fonts)


def test_pyodide_core_is_the_pinned_version(site_dir):
    core = site_dir / "_static" / "pyodide"
    sizes = {
        name: (core / name).stat().st_size
        for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
    }
    assert sizes["pyodide.asm.wasm"] > 5_000_000
    lock = json.loads((core / "pyodide-lock.json").read_text())
    assert lock["info"]["version"] == "0.26.2" and lock["info"]["python"].startswith("3.12")


def test_pages_with_cells_get_the_runtime_and_others_do_not(site_dir):
    lab = resources(site_dir / "micrograd.html")
    assert any(u.startswith("_static/pyodide_cells/cells.js") for u in lab.urls)
    script = next(s for s in lab.inline_scripts if "PYODIDE_CELLS_CONFIG" in s)
    config = re.match(r"\s*window\.PYODIDE_CELLS_CONFIG = (\{.*?\});\n", script).group(1)
    worker_js = (site_dir / "_static" / "pyodide_cells" / "worker.js").read_bytes()
    config = json.loads(config)
    checks = config.pop("checks")
    # labs.checks read them: the page's blocks and checks, as tests/pages.py counts them
    assert len(config.pop("blocks")) == len(doctest_blocks(read_page("micrograd.md")))
    assert sum(not c["setup"] for c in checks) == check_count("micrograd.md")
    # downloads.py: the script's exit guard, no support cell (micrograd's exercises import nothing from labs)
    download = config.pop("download")
    assert download["name"] == "micrograd"
    assert [(p["kind"], p.get("only")) for p in download["parts"]] == [
        ("markdown", "py"),
        ("markdown", "ipynb"),
        ("code", "py"),
        ("exercise", None),
        ("exercise", None),
        ("markdown", None),
        ("code", "py"),
        ("code", "ipynb"),
        ("code", "ipynb"),
    ]
    assert config == {
        "page": "micrograd",
        "checksUse": ["Value"],
        "checkCells": [0, 6],  # Check my code runs the two exercises only (check_cells.py), not the training above
        # Versioned by its checksum: a second visit takes it from the HTTP cache unasked.
        "worker": f"pyodide_cells/worker.js?v={zlib.crc32(worker_js):08x}",
    }
    # The wheel's name and the start-up snapshot's key are compiled into the
    # worker (it starts loading before the page talks to it), not written into pages.
    static = site_dir / "_static"
    (wheel,) = (static / "wheels").glob("*.whl")
    assert re.fullmatch(r"ai_systems_labs-[\d.]+-py3-none-any\.whl", wheel.name)
    worker = (static / "pyodide_cells" / "worker.js").read_text()
    (stdlib,) = (static / "pyodide").glob("python_stdlib-*.zip")
    key = snapshot_key(snapshot_inputs(static, wheel.name, stdlib.name))
    assert key in worker and wheel.name in worker
    # Every page shows the learner's progress beside the links to the labs (nav.js), and only that.
    landing = resources(site_dir / "index.html")
    assert [u.split("?")[0] for u in landing.urls if "pyodide_cells" in u] == ["_static/pyodide_cells/nav.js"]


def test_the_worker_starts_with_the_modules_a_page_imports_as_bytecode_and_fetches_the_rest_later(site_dir):
    static = site_dir / "_static" / "pyodide"
    stock = zipfile.ZipFile(static / "python_stdlib.zip")
    (start_path,) = static.glob("python_stdlib-*.zip")
    (rest_path,) = static.glob("python_stdlib_rest-*.zip")
    assert start_path.name[len("python_stdlib-") :] == rest_path.name[len("python_stdlib_rest-") :]  # one key
    worker = (site_dir / "_static" / "pyodide_cells" / "worker.js").read_text()
    assert start_path.name in worker and rest_path.name in worker
    start, rest = zipfile.ZipFile(start_path), zipfile.ZipFile(rest_path)
    # The start: what Pyodide's start-up, the cell runner and the labs import, as bytecode only...
    index = json.loads(start.read("pyodide_cells_rest.json"))
    start_code = {n[:-1] for n in start.namelist() if n != "pyodide_cells_rest.json"}
    assert all(n.endswith(".pyc") for n in start.namelist() if n != "pyodide_cells_rest.json")
    assert {"json/__init__.py", "ast.py", "traceback.py", "linecache.py", "typing.py", "dataclasses.py"} <= start_code
    assert 80 < len(start_code) < 200
    assert "doctest.py" not in start_code and "statistics.py" not in start_code
    # ... the rest: a check's modules as bytecode, every other file of the stock zip unchanged.
    rest_code = {n[:-1] for n in rest.namelist() if n.endswith(".pyc")}
    assert {"doctest.py", "difflib.py", "pdb.py", "unittest/case.py"} <= rest_code
    for name in ("json/__init__.pyc", "doctest.pyc"):
        header = (start if name in start.namelist() else rest).read(name)[:16]
        assert header[:4] == (3531).to_bytes(2, "little") + b"\r\n"  # CPython 3.12's magic (Pyodide 0.26)
        assert int.from_bytes(header[4:8], "little") == 0b01  # PEP 552: hash-based, unchecked
    files = {i.filename for i in stock.infolist() if not i.is_dir()}
    assert start_code | rest_code | (set(rest.namelist()) - {n + "c" for n in rest_code}) == files
    assert not start_code & rest_code
    for name in set(rest.namelist()) - {n + "c" for n in rest_code}:
        assert rest.read(name) == stock.read(name)
    # The index names every module of the rest, where the worker writes it.
    assert index["archive"] == "/lib/python312-rest.zip"
    assert index["sha256"] == hashlib.sha256(rest_path.read_bytes()).hexdigest()  # what the worker checks it against
    assert {"statistics", "doctest", "json.tool", "email", "email.mime.text", "encodings.cp1252"} <= set(index["modules"])
    assert not {"json", "ast", "typing"} & set(index["modules"])
    # The sources held back are served beside the zips, byte for byte.
    sources = static / f"{start_path.stem}-src"
    for name in start_code | rest_code:
        assert (sources / name).read_bytes() == stock.read(name)


def test_the_worker_unpacks_bytecode_for_every_labs_module_over_the_wheel(site_dir):
    static = site_dir / "_static" / "wheels"
    (wheel_path,) = static.glob("*.whl")
    (labs_path,) = static.glob("labs-bytecode-*.zip")
    assert labs_path.name in (site_dir / "_static" / "pyodide_cells" / "worker.js").read_text()
    wheel, labs = zipfile.ZipFile(wheel_path), zipfile.ZipFile(labs_path)
    modules = sorted(n for n in wheel.namelist() if n.startswith("labs/") and n.endswith(".py"))
    assert "labs/attention.py" in modules and "labs/paged_attention.py" in modules
    # One .pyc per module, where the wheel's unpacked sources look for it (PEP 3147)...
    assert sorted(labs.namelist()) == sorted(f"labs/__pycache__/{Path(m).stem}.cpython-312.pyc" for m in modules)
    for module in modules:
        pyc = labs.read(f"labs/__pycache__/{Path(module).stem}.cpython-312.pyc")
        assert pyc[:4] == (3531).to_bytes(2, "little") + b"\r\n"  # CPython 3.12's magic (Pyodide 0.26)
        assert int.from_bytes(pyc[4:8], "little") == 0b01  # PEP 552: hash-based, unchecked
    # That each is the wheel's own source compiled (its PEP 552 hash) is checked in
    # the browser (tests/browser/test_startup_snapshot.py): the hash is 3.12's.


def test_an_unchanged_build_reuses_the_precompiled_stdlib_without_node(site_dir, monkeypatch):
    from pyodide_cells import assets

    static = site_dir / "_static"
    (existing,) = (static / "pyodide").glob("python_stdlib-*.zip")
    (wheel,) = (static / "wheels").glob("*.whl")
    (labs,) = (static / "wheels").glob("labs-bytecode-*.zip")
    (rest,) = (static / "pyodide").glob("python_stdlib_rest-*.zip")
    monkeypatch.setattr(assets.shutil, "which", lambda name: None)  # no Node: it must not be needed
    names = assets.precompile_bytecode(ROOT / "node_modules" / "pyodide", wheel, static)
    assert names == (existing.name, labs.name, rest.name)


def test_precompiling_without_node_is_a_clear_error(tmp_path, monkeypatch):
    from pyodide_cells import assets

    monkeypatch.setattr(assets.shutil, "which", lambda name: None)
    with pytest.raises(ExtensionError, match=r"Node\.js \(node\) is needed"):
        assets.precompile_bytecode(ROOT / "node_modules" / "pyodide", None, tmp_path)


def test_the_snapshot_key_changes_with_every_file_it_covers(tmp_path):
    files = [tmp_path / name for name in ("pyodide.asm.wasm", "worker.js", "runner.py", "labs.whl")]
    for f in files:
        f.write_bytes(f.name.encode())
    key = snapshot_key(files)
    assert re.fullmatch(r"[0-9a-f]{16}", key) and snapshot_key(files) == key
    seen = {key}
    for f in files:
        before = f.read_bytes()
        f.write_bytes(before + b"!")
        seen.add(snapshot_key(files))
        f.write_bytes(before)
    assert len(seen) == 5  # one new key per changed file
    assert snapshot_key(files) == key


def test_codemirror_is_a_chunk_of_its_own_that_the_page_script_imports_when_needed(site_dir):
    ours = site_dir / "_static" / "pyodide_cells"
    (chunk,) = (ours / "chunks").glob("editor-*.js")
    page_script = (ours / "cells.js").read_text()
    assert "cm-content" in chunk.read_text() and "cm-content" not in page_script
    assert f'import("./chunks/{chunk.name}")' in page_script
    # The page script's budget (minified): it grew past 45,000 with the per-section check bars and
    # in-place display updates, past 48,000 with a saved edit laid out in lines as its editor
    # lays it out (codelines.js), past 49,000 with the tests' entry point (pyodideCells.cell) and the
    # cells the checks need, past 51,000 with Ctrl+Space's completion request, the badges forgotten
    # on Reset, the bar's height kept for link targets and the graph's opening zoom, past 52,000
    # with the scheduler, the cell and the checks split by job (run reasons as codes with their
    # words, Python's state published as an event), past 53,000 with the console naming the cell it
    # waits on and display ids kept by the runtime; CodeMirror, ten times its size, stays out of it.
    assert len(page_script) < 54_000 < chunk.stat().st_size
    # Nothing stands between the page script and its running: it imports no chunk statically
    # (esbuild puts helpers that bundles share in a chunk; richtext.js is bundled on its own).
    assert not re.search(r'(^|[;}])import ?"', page_script)
    assert 'new URL("richtext.js",import.meta.url)' in page_script and (ours / "richtext.js").is_file()


def test_the_worker_is_started_from_the_head_before_any_stylesheet(site_dir):
    html = (site_dir / "micrograd.html").read_text()
    head = html[: html.index("</head>")]
    boot = head.index("PYODIDE_CELLS_BOOT")
    assert boot < head.index('rel="stylesheet"') and "new Worker(" in head[: head.index("</script>", boot)]
    assert "PYODIDE_CELLS_BOOT" not in (site_dir / "index.html").read_text()


def test_the_labs_wheel_holds_labs_only(site_dir):
    (wheel,) = (site_dir / "_static" / "wheels").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "labs/__init__.py" in names and "labs/autograd.py" in names
    assert not [n for n in names if n.startswith("pyodide_cells")]


def test_doctest_blocks_render_without_the_trailing_blank_line(site_dir):
    html = (site_dir / "micrograd.html").read_text()
    blocks = re.findall(r'<div class="doctest-block[^"]*"><div class="highlight"><pre>(.*?)</pre>', html, re.S)
    assert len(blocks) == len(doctest_blocks(read_page("micrograd.md")))
    assert all(not b.endswith("\n\n") for b in blocks)


def test_build_time_outputs_are_baked_in(site_dir):
    html = (site_dir / "micrograd.html").read_text()
    # The exercise's starter output (gradients 0 until the TODOs are done)...
    assert "o  data = +0.70710678   grad = +0.00000000" in html
    # ...and the computation graph, as a table and as DOT for the browser to draw.
    assert '<figure class="lab-graph" data-summary="10 nodes · 9 edges"' in html
    assert "data-dot-grad=" in html


@pytest.mark.parametrize("builder", ["text"])
def test_non_html_builders_get_no_javascript(tmp_path, builder):
    # The cells' outputs are not what this test reads (the html build ran them), so they are not run
    # again; unrun, a cell has no kernel to name its language (the lexer warning).
    proc = build_site(tmp_path, builder, "-D", "nb_execution_mode=off", "-D", "suppress_warnings=myst-nb.lexer")
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "_static").exists()
    text = (tmp_path / "micrograd.txt").read_text()
    assert "o = n.tanh()" in text and "pyodide_cells" not in text


def test_ci_runs_exactly_the_readmes_test_command():
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    block = readme.split("**Run every test**", 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]
    command = block.strip()
    assert command == "python3 -m pip install nox && python3 -m nox -s tests"
    ci_lines = [line.strip() for line in (root / ".ci" / "run").read_text().splitlines()]
    assert command in ci_lines


def test_every_page_is_written_again_when_the_runtime_changed():
    from types import SimpleNamespace

    from pyodide_cells.assets import pages_to_rewrite

    app = SimpleNamespace(pyodide_cells_bundle="new")
    env = SimpleNamespace(found_docs={"index", "micrograd", "runtime"}, pyodide_cells_bundle="old")
    assert pages_to_rewrite(app, env, set(), {"runtime"}, set()) == ["index", "micrograd"]  # runtime: read anyway
    assert env.pyodide_cells_bundle == "new"
    assert pages_to_rewrite(app, env, set(), set(), set()) == []  # nothing changed since
    first = SimpleNamespace(found_docs={"index"})
    assert pages_to_rewrite(app, first, {"index"}, set(), set()) == []  # a first build writes every page


def test_hints_are_not_in_the_pages_text_but_in_its_checks(site_dir):
    """The console gives hints out one at a time: the page itself must not show them all."""
    html = (site_dir / "micrograd.html").read_text()
    assert "its gradient arrives twice" not in html.split("window.PYODIDE_CELLS_CONFIG", 1)[1].split("</script>", 1)[1]
    config = json.loads(html.split("window.PYODIDE_CELLS_CONFIG = ", 1)[1].split(";\n", 1)[0])
    reused = next(c for c in config["checks"] if c["name"] == "Reused node")
    assert len(reused["hints"]) == 2 and "gradient arrives twice" in reused["hints"][0]
    assert all(c["hints"] for c in config["checks"] if not c["setup"])  # every check of the lab has hints


def test_the_brotli_copy_of_each_archive_on_the_way_to_first_output_is_the_same_archive_stored(site_dir, tmp_path):
    """Deflate compresses each member alone; Brotli, given the members stored, across them."""
    import subprocess

    from pyodide_cells.precompress import archives, is_fresh

    found = archives(site_dir)
    assert sorted(p.name.split("-")[0] for p in found) == ["ai_systems_labs", "labs", "python_stdlib"], found
    assert not any(p.name.startswith("python_stdlib_rest-") for p in found)  # its SHA-256 is checked as it is
    for archive in found:
        assert is_fresh(archive), archive
        decoded = tmp_path / archive.name
        subprocess.run(
            [
                "node",
                "-e",
                "require('fs').writeFileSync(process.argv[2], "
                "require('zlib').brotliDecompressSync(require('fs').readFileSync(process.argv[1])))",
                f"{archive}.br",
                str(decoded),
            ],
            check=True,
        )
        with zipfile.ZipFile(archive) as deflated, zipfile.ZipFile(decoded) as stored:
            assert stored.testzip() is None
            assert [i.filename for i in stored.infolist()] == [i.filename for i in deflated.infolist()]
            assert {i.compress_type for i in stored.infolist()} == {zipfile.ZIP_STORED}
            assert all(stored.read(name) == deflated.read(name) for name in deflated.namelist())
        # Lab 4's float16 weights (labs/data/*.bin) are noise to any compressor: the factor holds for the rest.
        with zipfile.ZipFile(archive) as deflated:
            noise = sum(i.file_size for i in deflated.infolist() if i.filename.startswith("labs/data/"))
        assert archive.with_name(archive.name + ".br").stat().st_size - noise < 0.8 * (archive.stat().st_size - noise)


def test_brotli_copies_beside_the_runtime_decode_to_the_files_and_are_smaller_than_gzip(site_dir):
    import gzip
    import subprocess

    from pyodide_cells.precompress import compressible, is_fresh

    files = compressible(site_dir)
    assert files and all(is_fresh(path) for path in files), [str(p) for p in files if not is_fresh(p)]
    assert not list(site_dir.rglob("*.map.br"))
    wasm = site_dir / "_static" / "pyodide" / "pyodide.asm.wasm"
    # Python's standard library has no Brotli decoder: Node's zlib, which wrote it, reads it back.
    decoded = subprocess.run(
        [
            "node",
            "-e",
            "process.stdout.write(require('zlib').brotliDecompressSync(require('fs').readFileSync(process.argv[1])))",
            f"{wasm}.br",
        ],
        capture_output=True,
        check=True,
    ).stdout
    assert decoded == wasm.read_bytes()
    gzipped = len(gzip.compress(wasm.read_bytes(), compresslevel=6))
    assert wasm.with_name(wasm.name + ".br").stat().st_size < 0.85 * gzipped
