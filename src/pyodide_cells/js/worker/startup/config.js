// @ts-check
// The start-up's inputs: every URL the worker loads Python from, relative to
// the worker script's own, and the file names and snapshot key assets.py
// compiles in (esbuild --define; each "" or 0 in a site built without it).

/* global SNAPSHOT_KEY, LABS_WHEEL, STDLIB_ZIP, STDLIB_REST_ZIP, LABS_BYTECODE, SITE_SNAPSHOT, SITE_SNAPSHOT_BYTES, SITE_SNAPSHOT_INTEGRITY */
export const HERE = self.location.href; // .../_static/pyodide_cells/worker.js
export const PYODIDE_URL = new URL("../pyodide/", HERE).href;
export const WASM_URL = PYODIDE_URL + "pyodide.asm.wasm";
export const ASM_JS_URL = PYODIDE_URL + "pyodide.asm.js";
/** The standard library as Pyodide ships it (all sources): the plain start's, and anyone else's. */
export const STOCK_STDLIB_URL = PYODIDE_URL + "python_stdlib.zip";
export const LOCK_URL = PYODIDE_URL + "pyodide-lock.json";
// The runner and the wheel carry the snapshot key as their version (?v=): a
// second visit takes them from the HTTP cache without asking the server.
export const KEY = typeof SNAPSHOT_KEY === "string" ? SNAPSHOT_KEY : "";
const VERSION = KEY ? `?v=${KEY}` : "";
export const RUNNER_URL = new URL(`runner.py${VERSION}`, HERE).href;
// The standard library in two parts (precompile_bytecode.mjs): the modules a
// page imports before its first output, as bytecode (without it, CPython
// compiled some 125 modules from source while it started), and the rest,
// fetched once the page is ready. The sources of the bytecode are files beside
// them, fetched one by one when asked for.
const STDLIB = typeof STDLIB_ZIP === "string" ? STDLIB_ZIP : "";
export const STDLIB_URL = STDLIB ? new URL(`../pyodide/${STDLIB}`, HERE).href : undefined;
// Relative to the worker script, as the build's snapshot holds them (make_snapshot.mjs).
export const STDLIB_SOURCES_URL = STDLIB ? `../pyodide/${STDLIB.replace(/\.zip$/, "-src/")}` : "";
export const STDLIB_REST_URL = typeof STDLIB_REST_ZIP === "string" && STDLIB_REST_ZIP ? `../pyodide/${STDLIB_REST_ZIP}` : "";
const WHEEL = typeof LABS_WHEEL === "string" ? LABS_WHEEL : "";
export const WHEEL_URL = WHEEL ? new URL(`../wheels/${WHEEL}${VERSION}`, HERE).href : "";
// The labs modules' bytecode (labs/__pycache__/*.pyc), unpacked over the wheel:
// a lab's first cell imports its module without compiling it.
const BYTECODE = typeof LABS_BYTECODE === "string" ? LABS_BYTECODE : "";
export const LABS_BYTECODE_URL = BYTECODE ? new URL(`../wheels/${BYTECODE}${VERSION}`, HERE).href : "";
// The site's start-up snapshot, made at build time (make_snapshot.mjs), and its size in bytes.
export const SITE_SNAPSHOT_URL = typeof SITE_SNAPSHOT === "string" && SITE_SNAPSHOT ? new URL(SITE_SNAPSHOT, HERE).href : "";
export const SITE_SNAPSHOT_SIZE = typeof SITE_SNAPSHOT_BYTES === "number" ? SITE_SNAPSHOT_BYTES : 0;
// Its SHA-256 (Subresource Integrity): a damaged copy is refused before it is restored. Checked
// by the worker (snapshot.js checkIntegrity) where crypto.subtle is, else by fetch (not a secure context).
export const SITE_SNAPSHOT_SRI = typeof SITE_SNAPSHOT_INTEGRITY === "string" ? SITE_SNAPSHOT_INTEGRITY : "";

/** @param {string} url @param {string} what @returns {Promise<ArrayBuffer>} */
export async function fetchBytes(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${what} from ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}
