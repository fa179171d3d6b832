// The assertion suite in the runtime learners use: boots Pyodide 0.26.2 in
// Node (as the build's precompile step does), installs the labs wheel, and
// runs every labs module's doctests and every lab page's checks (with
// labs.checks, the page's own engine) against the reference. Prints one
// JSON object; tests/test_pyodide_suite.py reads it.
//
//   node tests/pyodide_suite.mjs <pyodide dir> <labs wheel> <job.json>
//
// job.json: {"pages": [{"name": "micrograd.md", "text": "...", "names": {"Value": "labs.autograd:Value"}}],
//            "runner": {"source": "<runner.py>", "limits": "<limits.json>", "cells": {"name": "code"}}}
//
// Each of "runner"'s cells is run by the page's cell runner (runner.py) in
// this Pyodide, in one namespace and in order; the report holds each run's
// status and events, for what is Pyodide's own (its stack depth, the standard
// library modules it leaves out).

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pyodideDir, wheel, job] = process.argv.slice(2);
if (!job) {
  console.error("usage: node tests/pyodide_suite.mjs <pyodide dir> <labs wheel> <job.json>");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: () => {}, stderr: () => {} });
pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel");
pyodide.FS.writeFile("/home/pyodide/job.json", readFileSync(job));
const report = pyodide.runPython(`
import doctest, importlib, io, json, pkgutil, sys
import labs
from labs.checks import doctest_blocks, run_blocks

job = json.load(open("/home/pyodide/job.json"))
report = {"python": sys.version.split()[0], "platform": sys.platform, "modules": {}, "pages": {}}
flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
for info in pkgutil.iter_modules(labs.__path__, "labs."):
    module = importlib.import_module(info.name)
    failures = []
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=flags)
    attempted = 0
    for test in finder.find(module):
        out = io.StringIO()
        result = runner.run(test, out=out.write)
        attempted += result.attempted
        if result.failed:
            failures.append(test.name + "\\n" + out.getvalue()[-1500:])
    report["modules"][info.name] = {"attempted": attempted, "failures": failures}
for page in job["pages"]:
    names = {}
    for name, target in page["names"].items():
        module, _, attr = target.partition(":")
        names[name] = getattr(importlib.import_module(module), attr)
    results = run_blocks(doctest_blocks(page["text"]), names)
    report["pages"][page["name"]] = [r.as_dict() for r in results if not r.check.setup or r.status != "passed"]
spec = job.get("runner")
if spec:
    import importlib.util
    open("/home/pyodide/cell_runner.py", "w").write(spec["source"])
    loader = importlib.util.spec_from_file_location("cell_runner", "/home/pyodide/cell_runner.py")
    cell_runner = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(cell_runner)
    events = []
    runner = cell_runner.CellRunner(lambda kind, payload: events.append([kind, json.loads(payload)]), spec["limits"])
    report["runner"] = {}
    for name, code in spec["cells"].items():
        events.clear()
        status = runner.run(code)
        report["runner"][name] = {"status": status["status"], "events": list(events)}
json.dumps(report)
`);
console.log(report);
