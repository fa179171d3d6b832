// Build step (run by assets.py with Node): Pyodide's standard library with
// bytecode for the modules start-up imports, and bytecode for the labs package.
//
// Pyodide 0.26.2 ships python_stdlib.zip with .py sources only, so every
// module imported while Python starts is compiled from source inside
// WebAssembly: most of the 1.7 s start-up on a 2-core machine. This script
// boots the same Pyodide in Node, imports the cell runner, every labs module
// and doctest (the checks), and writes a copy of the zip in which every module
// they imported from it (about 145) is bytecode instead of source. The bytecode is compiled by the very
// interpreter that will load it (same magic number), as unchecked hash-based
// .pyc files (PEP 552), under the file names zipimport gives them.
//
// Bytecode replaces the source rather than joining it: the zip grows by about
// 0.8 MB instead of about 1.5 MB, which a first visit downloads. The sources of
// those modules are served beside the zip (assets.py) and the worker fetches
// one only when a traceback or inspect.getsource needs it.
//
// The labs package gets the same treatment in a second, small zip: its modules'
// bytecode as labs/__pycache__/<module>.cpython-312.pyc (unchecked hash-based),
// which the worker unpacks over the wheel. The wheel keeps its sources, so
// nothing is fetched for tracebacks; without the bytecode, a lab page's first
// cell compiled its labs module from source inside WebAssembly (30-50 ms for
// labs.attention or labs.paged_attention, twice that on a busy page).
//
//   node precompile_bytecode.mjs <pyodide dir> <runner.py> <labs wheel or ""> <out.zip> [<labs out.zip>]
//
// Prints one JSON line: {"modules": compiled, "bytes": size of out.zip, "labs_modules": compiled}.

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pyodideDir, runner, wheel, out, labsOut] = process.argv.slice(2);
if (!out) {
  console.error("usage: node precompile_bytecode.mjs <pyodide dir> <runner.py> <labs wheel or \"\"> <out.zip> [<labs out.zip>]");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: () => {}, stderr: (s) => console.error(s) });
pyodide.FS.writeFile("/home/pyodide/pyodide_cells_runner.py", new Uint8Array(readFileSync(runner)));
if (wheel) pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), "wheel");

const result = pyodide.runPython(`
import importlib, importlib.util, io, json, pkgutil, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc



def unchecked_pyc(source, filename):
    """The bytecode file of source: PEP 552 hash-based, never checked against the source."""
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


importlib.invalidate_caches()
import doctest, pyodide_cells_runner  # noqa: F401
try:
    import labs
except ImportError:
    labs_modules = []  # a site built without the labs wheel
else:
    labs_modules = [labs] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(labs.__path__, "labs.")]

ARCHIVE = next(p for p in sys.path if p.endswith(".zip"))
prefix = ARCHIVE + "/"
# Frozen modules (importlib's bootstrap, os, codecs, ...) are in the zip too but
# never compiled from it: they need no bytecode.
wanted = sorted(
    m.__file__[len(prefix):]
    for m in list(sys.modules.values())
    if (getattr(m, "__file__", None) or "").startswith(prefix) and m.__file__.endswith(".py")
    and getattr(getattr(m, "__spec__", None), "origin", None) != "frozen"
)
buffer = io.BytesIO()
with zipfile.ZipFile(ARCHIVE) as zin, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
    for info in zin.infolist():
        source = zin.read(info)
        if info.filename in wanted:
            zout.writestr(zipfile.ZipInfo(info.filename + "c", info.date_time),
                          unchecked_pyc(source, prefix + info.filename), compress_type=zipfile.ZIP_DEFLATED)
        else:
            zout.writestr(info, source, compress_type=zipfile.ZIP_DEFLATED)
with open("/tmp/stdlib.zip", "wb") as f:
    f.write(buffer.getvalue())

# labs: paths relative to the directory the wheel was unpacked into, which is
# where the worker unpacks this zip too.
root = labs.__path__[0].rpartition("/")[0] + "/" if labs_modules else ""
with zipfile.ZipFile("/tmp/labs.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
    for module in sorted(labs_modules, key=lambda m: m.__name__):
        with open(module.__file__, "rb") as f:
            pyc = unchecked_pyc(f.read(), module.__file__)
        zout.writestr(zipfile.ZipInfo(importlib.util.cache_from_source(module.__file__)[len(root):]), pyc,
                      compress_type=zipfile.ZIP_DEFLATED)
json.dumps({"modules": len(wanted), "bytes": len(buffer.getvalue()), "labs_modules": len(labs_modules)})
`);
writeFileSync(out, pyodide.FS.readFile("/tmp/stdlib.zip"));
if (labsOut) writeFileSync(labsOut, pyodide.FS.readFile("/tmp/labs.zip"));
console.log(result);
