// Build step (run by assets.py with Node): the site's start-up snapshot, a
// Pyodide 0.26.2 memory snapshot of the interpreter a page starts (the cell
// runner and every labs module imported, no cell run yet), made here once so
// that a first visit on a fast link can restore it instead of starting CPython.
//
// It boots the very pyodide.asm.wasm/js the site serves (Pyodide 0.26 does not
// check that a snapshot and the interpreter match), with the same standard
// library zip, through the worker's own boot code (js/worker/startup/boot_python.js). Nothing
// Node-only may be held by Python when the snapshot is taken: it holds only
// paths into globalThis, resolved again in the browser's worker.
//
//   node make_snapshot.mjs <pyodide dir> <stdlib zip> <sources URL> <rest URL> <labs wheel or ""> <labs bytecode or ""> <python dir> <out>
//
// Written without its long runs of zeros and based on the memory as
// instantiated (packed.js packSparse), and checked to unpack to the snapshot.
// Prints one JSON line: {"bytes": size of the file, "ms": time to make it}.

import { readFileSync, writeFileSync, renameSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { bootPython, importLabs, pythonFiles } from "./js/worker/startup/boot_python.js";
import { packSparse, rebase, unpackSparse } from "./js/worker/startup/packed.js";

const [pyodideDir, stdlib, sourcesURL, restURL, wheel, bytecode, pythonDir, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node make_snapshot.mjs <pyodide dir> <stdlib zip> <sources URL> <rest URL> <labs wheel or \"\"> <labs bytecode or \"\"> <python dir> <out>");
  process.exit(2);
}
// Under Node, Emscripten names the program after this script (sys.executable,
// sys.orig_argv, $_): the snapshot would carry the build machine's path to
// every learner. Without arguments it says "./this.program", as in a browser.
process.argv.splice(1);
const t0 = performance.now();
// The interpreter's memory as WebAssembly instantiated it (its data segment, nothing
// run yet), as a browser's worker will have it when it restores (worker.js compileEarly).
/** @type {Uint8Array | null} */
let instantiated = null;
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = /** @type {any} */ (async (/** @type {any} */ source, /** @type {any} */ imports) => {
  const result = await instantiate(source, imports);
  WebAssembly.instantiate = instantiate;
  instantiated = upToLastNonZero(new Uint8Array(imports.env.memory.buffer));
  return result;
});
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: pyodideDir + path.sep,
  stdLibURL: stdlib,
  _makeSnapshot: true,
  stdout: () => {},
  stderr: (/** @type {string} */ s) => console.error(s),
});
const bytes = (/** @type {string} */ file) => (file ? new Uint8Array(readFileSync(file)) : null);
bootPython(pyodide, pythonFiles((name) => readFileSync(path.join(pythonDir, name), "utf8")),
  { wheel: bytes(wheel), bytecode: bytes(bytecode), restored: false, sourcesURL, restURL });
if (wheel) importLabs(pyodide);
if (!instantiated) throw new Error("Pyodide was not instantiated through WebAssembly.instantiate: nothing to base the snapshot on");
const made = pyodide.makeMemorySnapshot();
const snapshot = packSparse(made, instantiated);
const back = unpackSparse(snapshot);
rebase(back.snapshot, back.based, instantiated);
if (Buffer.compare(back.snapshot, made) !== 0) throw new Error("the packed snapshot does not unpack to the snapshot");
writeFileSync(out + ".partial", snapshot);
renameSync(out + ".partial", out); // a failed run leaves no half file under the real name
console.log(JSON.stringify({ bytes: snapshot.length, ms: Math.round(performance.now() - t0) }));

/** A copy of `memory` up to its last non-zero byte, in whole 32-bit words. @param {Uint8Array} memory */
function upToLastNonZero(memory) {
  let end = memory.length;
  while (end > 0 && memory[end - 1] === 0) end--;
  return memory.slice(0, Math.ceil(end / 4) * 4);
}
