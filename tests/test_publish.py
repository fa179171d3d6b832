"""Publishing: the GitHub Pages workflow builds as `nox -s docs` does, and the built site carries
what static hosts need (`_headers`, `sw.js`) and nothing of the build's own."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pyodide_cells.publish import offline_files
from pyodide_cells.serve import headers_file

ROOT = Path(__file__).resolve().parent.parent


def test_the_pages_workflow_builds_and_publishes_what_nox_docs_builds():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    steps = workflow["jobs"]["build"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    readme = (ROOT / "README.md").read_text()
    noxfile = (ROOT / "noxfile.py").read_text()
    # The same command as the README's, for the docs session...
    assert runs == ["python3 -m pip install nox && python3 -m nox -s docs"]
    assert "python3 -m pip install nox && python3 -m nox -s" in readme
    assert re.search(r"^def docs\(session: nox.Session\) -> None:\n(.*\n)*?    _build_docs\(session\)\n", noxfile, re.M)
    # ...and the folder it writes (the noxfile's SITE) is what is uploaded.
    (site,) = re.findall(r'^SITE = ROOT / "build" / "(\w+)"$', noxfile, re.M)
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == f"build/{site}"
    assert "deploy-pages" in workflow["jobs"]["deploy"]["steps"][0]["uses"]


def test_the_built_site_carries_headers_and_a_service_worker_and_no_build_files(site_dir):
    assert (site_dir / "_headers").read_text() == headers_file(site_dir)
    sw = (site_dir / "sw.js").read_text()
    files = offline_files(site_dir)
    assert all(f'"{name}"' in sw for name in files)
    for needed in ("index.html", "micrograd.html", "_static/pyodide/pyodide.asm.wasm", "_static/pyodide_cells/worker.js"):
        assert needed in files
    assert not [f for f in files if f.endswith(".map") or f.startswith("_sources/") or "/." in f or f.startswith(".")]
    # boot.js is inlined into the pages that use it: no page loads the file.
    assert (site_dir / "_static/pyodide_cells/boot.js").is_file() and "_static/pyodide_cells/boot.js" not in files
