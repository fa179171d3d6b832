// Build step (run by assets.py with Node): Pyodide's standard library split in
// two, with bytecode for the modules a page imports, and bytecode for the labs package.
//
// Pyodide 0.26.2 ships python_stdlib.zip (2.3 MB) with .py sources only, so
// every module imported while Python starts is compiled from source inside
// WebAssembly: most of the 1.7 s start-up on a 2-core machine. This script
// boots the same Pyodide in Node through the worker's own boot code
// (js/worker/startup/boot_python.js), imports every labs module and IPython.display (which a
// lab's cells import), runs one check (doctest, through labs.checks), and writes:
//
// - the start zip (<out.zip>): only the modules imported before a page's
//   first output (about 125), as bytecode, and an index of the rest
//   (REST_INDEX). A page's first output waits for nothing else;
// - the rest (<rest.zip>): the check's own modules (doctest, pdb, unittest, ...)
//   as bytecode and every other file of the stock zip as it is. The worker
//   fetches it once the page is ready, and worker_boot.StdlibRest serves an
//   import from it (fetching it there and then if it has not arrived).
//
// The bytecode is compiled by the very interpreter that will load it (same
// magic number), as unchecked hash-based .pyc files (PEP 552), under the file
// names zipimport gives them. It replaces the source rather than joining it;
// the sources are served beside the zips (assets.py) and the worker fetches
// one only when a traceback or inspect.getsource needs it.
//
// The labs package gets the same treatment in a third, small zip: its modules'
// bytecode as labs/__pycache__/<module>.cpython-312.pyc (unchecked hash-based),
// which the worker unpacks over the wheel. The wheel keeps its sources, so
// nothing is fetched for tracebacks; without the bytecode, a lab page's first
// cell compiled its labs module from source inside WebAssembly (30-50 ms for
// labs.attention or labs.paged_attention, twice that on a busy page).
//
//   node precompile_bytecode.mjs <pyodide dir> <python dir> <labs wheel or ""> <out.zip> <rest.zip> [<labs out.zip>]
//
// Prints one JSON line: {"modules": compiled for the start, "bytes": size of
// out.zip, "rest_modules": compiled for the rest, "rest_bytes": size of
// rest.zip, "labs_modules": compiled}.

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { bootPython, pythonFiles } from "./js/worker/startup/boot_python.js";

const [pyodideDir, pythonDir, wheel, out, restOut, labsOut] = process.argv.slice(2);
if (!restOut) {
  console.error("usage: node precompile_bytecode.mjs <pyodide dir> <python dir> <labs wheel or \"\"> <out.zip> <rest.zip> [<labs out.zip>]");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: () => {}, stderr: (s) => console.error(s) });
bootPython(pyodide, pythonFiles((name) => readFileSync(path.join(pythonDir, name), "utf8")),
  { wheel: wheel ? new Uint8Array(readFileSync(wheel)) : null, bytecode: null, restored: false, sourcesURL: "", restURL: "" });

const result = pyodide.runPython(`
import importlib, importlib.util, io, json, pkgutil, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc



def unchecked_pyc(source, filename):
    """The bytecode file of source: PEP 552 hash-based, never checked against the source."""
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


def from_zip():
    """The names of the modules imported from the stdlib zip so far, by their file in it."""
    # Frozen modules (importlib's bootstrap, os, codecs, ...) are in the zip
    # too but never compiled from it: they need no bytecode.
    return {
        m.__file__[len(prefix):]
        for m in list(sys.modules.values())
        if (getattr(m, "__file__", None) or "").startswith(prefix) and m.__file__.endswith(".py")
        and getattr(getattr(m, "__spec__", None), "origin", None) != "frozen"
    }


ARCHIVE = next(p for p in sys.path if p.endswith(".zip"))
# Where the worker writes the rest (worker_boot.StdlibRest reads this from REST_INDEX).
REST_ARCHIVE = ARCHIVE[:-len(".zip")] + "-rest.zip"
REST_INDEX = "pyodide_cells_rest.json"
prefix = ARCHIVE + "/"
import IPython.display  # noqa: F401
try:
    import labs
except ImportError:
    labs_modules = []  # a site built without the labs wheel
else:
    labs_modules = [labs] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(labs.__path__, "labs.")]
start = from_zip()
# A check, as the page runs one (runner.check): its modules go in the rest, as bytecode.
if labs_modules:
    from labs.checks import run_blocks
    run_blocks([">>> 1 + 1\\n2\\n"], {})
else:
    import doctest  # noqa: F401
checks = from_zip() - start


def module_name(filename):
    """'email/mime/text.py' -> 'email.mime.text'; 'json/__init__.pyc' -> 'json'."""
    stem = filename.rpartition(".")[0]
    return stem[:-len("/__init__")].replace("/", ".") if stem.endswith("/__init__") else stem.replace("/", ".")


rest_modules = []
starting, rest = io.BytesIO(), io.BytesIO()
with zipfile.ZipFile(ARCHIVE) as zin, \\
        zipfile.ZipFile(starting, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zstart:
    with zipfile.ZipFile(rest, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zrest:
        for info in zin.infolist():
            if info.is_dir():
                continue  # zipimport needs no directory entries
            source = zin.read(info)
            if info.filename in start:
                zstart.writestr(zipfile.ZipInfo(info.filename + "c", info.date_time),
                                unchecked_pyc(source, prefix + info.filename), compress_type=zipfile.ZIP_DEFLATED)
                continue
            if info.filename in checks:
                zrest.writestr(zipfile.ZipInfo(info.filename + "c", info.date_time),
                               unchecked_pyc(source, REST_ARCHIVE + "/" + info.filename), compress_type=zipfile.ZIP_DEFLATED)
            else:
                zrest.writestr(info, source, compress_type=zipfile.ZIP_DEFLATED)
            if info.filename.endswith(".py"):
                rest_modules.append(module_name(info.filename))
    # Its digest, for the worker to check what arrives (a host's error page, a cut-short file).
    # (Imported only now: what this script imports must not count as what a page imports.)
    import hashlib
    zstart.writestr(REST_INDEX, json.dumps({"archive": REST_ARCHIVE, "sha256": hashlib.sha256(rest.getvalue()).hexdigest(),
                                            "modules": sorted(rest_modules)}))
with open("/tmp/stdlib.zip", "wb") as f:
    f.write(starting.getvalue())
with open("/tmp/stdlib-rest.zip", "wb") as f:
    f.write(rest.getvalue())

# labs: paths relative to the directory the wheel was unpacked into, which is
# where the worker unpacks this zip too.
root = labs.__path__[0].rpartition("/")[0] + "/" if labs_modules else ""
with zipfile.ZipFile("/tmp/labs.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
    for module in sorted(labs_modules, key=lambda m: m.__name__):
        with open(module.__file__, "rb") as f:
            pyc = unchecked_pyc(f.read(), module.__file__)
        zout.writestr(zipfile.ZipInfo(importlib.util.cache_from_source(module.__file__)[len(root):]), pyc,
                      compress_type=zipfile.ZIP_DEFLATED)
json.dumps({"modules": len(start), "bytes": len(starting.getvalue()), "rest_modules": len(checks),
            "rest_bytes": len(rest.getvalue()), "labs_modules": len(labs_modules)})
`);
writeFileSync(out, pyodide.FS.readFile("/tmp/stdlib.zip"));
writeFileSync(restOut, pyodide.FS.readFile("/tmp/stdlib-rest.zip"));
if (labsOut) writeFileSync(labsOut, pyodide.FS.readFile("/tmp/labs.zip"));
console.log(result);
