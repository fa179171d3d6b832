// The Pyodide worker: boots Pyodide 0.26.2 from the site's own _static/pyodide/,
// installs the labs wheel and the cell runner, then runs cells one at a time.
//
// It starts loading as soon as its script runs: every URL it needs is relative
// to its own, and the wheel's name and the snapshot key are compiled in by
// assets.py (esbuild --define). Waiting for the page's first message instead
// cost 100-200 ms on a lab page, whose main thread is busy parsing and laying
// out the document and only then passes the message on.
//
// Messages in:  {type: "init", interruptBuffer}   (Stop's SharedArrayBuffer, or null: byte 0 is
//                                                 the signal Python reads, byte 1 counts Stops)
//               {type: "run", id, code, stopGeneration}  (queued until the runtime is ready;
//                                            stopGeneration: byte 1 of the interrupt buffer when sent)
//               {type: "check", id, blocks}  (run the page's doctest blocks)
//               {type: "restart"}            (fresh namespace, same interpreter)
// Messages out: {type: "status", state: "loading"|"ready"|"error", step, steps, message, at, restored}
//               {type: "start", id}          (the cell began to run)
//               {type: "stream"|"display"|"result"|"error", id, ...payload}
//               {type: "done", id, status, execution_count, ms}
//               {type: "checks", id, results: [{name, description, source, expected, got, status, setup}]}

let ready = null; // Promise<{pyodide, runner}>, started at the end of this script
let queue = Promise.resolve(); // cells run strictly in arrival order
let currentId = null;
let interrupt = null; // Uint8Array on a SharedArrayBuffer, when the page is cross-origin isolated

const post = (msg) => self.postMessage(msg);
// `at` is an absolute time (ms since the epoch) so the page can place it on its own timeline.
const status = (state, step, steps, message, extra = {}) =>
  post({ type: "status", state, step, steps, message, at: performance.timeOrigin + performance.now(), ...extra });

async function fetchBytes(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${what} from ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

// A memory snapshot of the interpreter right after start-up (runner and labs
// imported, no cell run yet), kept in the origin private file system (OPFS): a
// second visit restores it instead of starting CPython again. Pyodide 0.26 calls
// this API experimental (loadPyodide's _makeSnapshot / _loadSnapshot), so every
// failure falls back to a normal start. The key changes with the wheel, the
// runner and this file.
//
// Why OPFS and not Cache Storage: the snapshot is read with a synchronous
// access handle, one plain file read on this thread (30-70 ms for 21 MB).
// A Cache Storage body arrives in chunks through this thread's event loop,
// which pyodide.asm.js's 100-200 ms of compiling blocks: the same read took
// 300-450 ms on a 2-core machine.
/* global SNAPSHOT_KEY, LABS_WHEEL, STDLIB_ZIP, LABS_BYTECODE */
const HERE = self.location.href; // .../_static/pyodide_cells/worker.js
const PYODIDE_URL = new URL("../pyodide/", HERE).href;
// The runner and the wheel carry the snapshot key as their version (?v=): a
// second visit takes them from the HTTP cache without asking the server.
const VERSION = typeof SNAPSHOT_KEY === "string" && SNAPSHOT_KEY ? `?v=${SNAPSHOT_KEY}` : "";
const RUNNER_URL = new URL(`runner.py${VERSION}`, HERE).href;
// The standard library with bytecode for start-up's modules (precompile_bytecode.mjs):
// without it, CPython compiles some 145 modules from source while it starts.
// Their sources are files beside it, fetched one by one when asked for.
const STDLIB_URL = typeof STDLIB_ZIP === "string" && STDLIB_ZIP ? new URL(`../pyodide/${STDLIB_ZIP}`, HERE).href : undefined;
const STDLIB_SOURCES_URL = STDLIB_URL ? STDLIB_URL.replace(/\.zip$/, "-src/") : "";
const WHEEL_URL = typeof LABS_WHEEL === "string" && LABS_WHEEL ? new URL(`../wheels/${LABS_WHEEL}${VERSION}`, HERE).href : "";
// The labs modules' bytecode (labs/__pycache__/*.pyc), unpacked over the wheel:
// a lab's first cell imports its module without compiling it.
const LABS_BYTECODE_URL =
  typeof LABS_BYTECODE === "string" && LABS_BYTECODE ? new URL(`../wheels/${LABS_BYTECODE}${VERSION}`, HERE).href : "";
// One file at the top of OPFS, named after this site's folder and the key: each
// copy of the guide on an origin keeps its own, and opening it takes only three
// round trips to the browser (20-60 ms each on a busy 2-core machine).
const SITE_FOLDER = new URL(".", HERE).href.replace(/[^A-Za-z0-9.-]/g, "_").slice(-180);
const SNAPSHOT_PREFIX = `pyodide-cells-snapshot-${SITE_FOLDER}-`;
const SNAPSHOT_NAME = typeof SNAPSHOT_KEY === "string" && SNAPSHOT_KEY ? `${SNAPSHOT_PREFIX}${SNAPSHOT_KEY}.bin` : "";
const CAN_SNAPSHOT = Boolean(
  SNAPSHOT_NAME && self.navigator?.storage?.getDirectory && self.FileSystemFileHandle?.prototype.createSyncAccessHandle,
);

// Opens the kept snapshot; resolves to a function that reads it whole, or to
// null when there is none (or no OPFS). A synchronous access handle is
// exclusive: while another tab of the guide reads the file with one, this one
// reads it the slower, shared way.
async function openSnapshot() {
  if (!CAN_SNAPSHOT) return null;
  let file;
  try {
    file = await (await navigator.storage.getDirectory()).getFileHandle(SNAPSHOT_NAME);
  } catch {
    return null; // none kept yet
  }
  try {
    const handle = await file.createSyncAccessHandle();
    return () => {
      try {
        const bytes = new Uint8Array(handle.getSize());
        handle.read(bytes, { at: 0 });
        return bytes;
      } finally {
        handle.close();
      }
    };
  } catch {
    try {
      const bytes = new Uint8Array(await (await file.getFile()).arrayBuffer());
      return () => bytes;
    } catch {
      return null;
    }
  }
}

// Pyodide 0.26's snapshot layout: four uint32 (magic, build id, offset of the
// memory, length of a JSON header), the header, then the wasm memory, whole
// 64 KiB pages. A snapshot that is not that shape would make the interpreter
// hang, not fail, so it is refused here and Python starts afresh.
const SNAPSHOT_MAGIC = 1886286592;
const WASM_PAGE = 65536;
const MIN_MEMORY = 320 * WASM_PAGE; // pyodide.asm.wasm declares 320 pages; less makes instantiation hang

function checkedSnapshot(bytes) {
  const words = bytes.byteLength >= 16 ? new Uint32Array(bytes.buffer, 0, 4) : null;
  const memory = words ? bytes.byteLength - words[2] : 0;
  if (!words || words[0] !== SNAPSHOT_MAGIC || words[2] < 16 || memory < MIN_MEMORY || memory % WASM_PAGE !== 0) {
    throw new Error(`not a Pyodide memory snapshot (${bytes.byteLength} bytes)`);
  }
  return bytes;
}

// Written under a temporary name, then renamed: a visit never reads half a file.
async function storeSnapshot(bytes) {
  try {
    const folder = await navigator.storage.getDirectory();
    for await (const name of folder.keys()) {
      if (name.startsWith(SNAPSHOT_PREFIX) && name !== SNAPSHOT_NAME) await folder.removeEntry(name); // older builds'
    }
    const partial = await folder.getFileHandle(`${SNAPSHOT_NAME}.partial`, { create: true });
    const handle = await partial.createSyncAccessHandle();
    try {
      handle.truncate(0);
      handle.write(bytes, { at: 0 });
      handle.flush();
    } finally {
      handle.close();
    }
    await partial.move(SNAPSHOT_NAME);
  } catch (err) {
    console.warn("pyodide-cells: could not keep the start-up snapshot:", err);
  }
}

async function dropSnapshot() {
  try {
    await (await navigator.storage.getDirectory()).removeEntry(SNAPSHOT_NAME);
  } catch {
    /* nothing to drop */
  }
}

async function startPyodide(opening) {
  const indexURL = PYODIDE_URL;
  const read = await opening;
  if (read) {
    try {
      const snapshot = checkedSnapshot(read());
      return { pyodide: await self.loadPyodide({ indexURL, stdLibURL: STDLIB_URL, _loadSnapshot: snapshot }), restored: true };
    } catch (err) {
      console.warn("pyodide-cells: the start-up snapshot did not load; starting afresh:", err);
      await dropSnapshot();
    }
  }
  const pyodide = await self.loadPyodide({ indexURL, stdLibURL: STDLIB_URL, _makeSnapshot: CAN_SNAPSHOT });
  return { pyodide, restored: false };
}

// New files (the wheel, the runner) must be seen by the import system. Only the
// finders of their two directories are told: importlib.invalidate_caches() would
// also re-read the standard library zip's index, 60 ms cold and 230 ms restored.
const FIND_NEW_FILES = `
import importlib, sys
from pyodide._package_loader import SITE_PACKAGES
if '/home/pyodide' not in sys.path: sys.path.insert(0, '/home/pyodide')
for _path in ('/home/pyodide', str(SITE_PACKAGES)):
    _finder = sys.path_importer_cache.get(_path)
    if _finder is not None: _finder.invalidate_caches()
del _path, _finder
`;

// Modules the precompiled zip holds as bytecode only have no source in it:
// zipimport's get_source says None, and tracebacks and inspect.getsource would
// show no code. This falls back to the source file served beside the zip,
// fetched synchronously (allowed in a worker) once, when first asked for.
const STDLIB_SOURCES = (url) => `
import zipimport
def _pyodide_cells_sources(get_source, base=${JSON.stringify(url)}, fetched={}):
    def get_source_or_fetch(self, fullname):
        source = get_source(self, fullname)
        if source is not None or not self.archive.endswith(".zip"):
            return source
        path = fullname.replace(".", "/") + ("/__init__.py" if self.is_package(fullname) else ".py")
        if path not in fetched:
            try:
                from pyodide.http import open_url
                fetched[path] = open_url(base + path).read()
            except Exception:
                fetched[path] = None
        return fetched[path]
    return get_source_or_fetch
zipimport.zipimporter.get_source = _pyodide_cells_sources(zipimport.zipimporter.get_source)
del _pyodide_cells_sources
`;

// Before a snapshot is taken, every labs module is imported (with the site's
// bytecode, about 60 ms on a 2-core machine): a restored interpreter has them
// all, and a lab's first cell imports nothing. Without a snapshot to take they
// are imported when a cell asks, as usual.
const IMPORT_LABS = `
import importlib, pkgutil, labs
for _module in pkgutil.iter_modules(labs.__path__, "labs."): importlib.import_module(_module.name)
del _module
`;

// A restored interpreter starts from the very memory of the first visit, the
// random module's state included (Pyodide imports it while starting): seed it
// again from the browser's crypto.getRandomValues, as a fresh start would, and
// let tempfile make a new generator for its names. The string hash seed cannot
// change in a running interpreter (every dict depends on it): hash("abc"), and
// so the order of a set of strings, is the same on every restored visit.
const AFTER_RESTORE = `
import sys
if "random" in sys.modules: sys.modules["random"].seed()
if "tempfile" in sys.modules: sys.modules["tempfile"]._name_sequence = None
`;

// Compile the interpreter's WebAssembly while pyodide.asm.js downloads and runs
// (about 0.3 s of JavaScript), instead of after it as loadPyodide does: Pyodide
// 0.26 has no option for this, so its one call to instantiateStreaming is
// answered with the module compiled here. Its own fetch of the same file waits
// on the HTTP cache's lock for this one, and is dropped unread.
function compileEarly(wasmURL) {
  const original = WebAssembly.instantiateStreaming;
  const compiled = WebAssembly.compileStreaming(fetch(wasmURL));
  compiled.catch(() => {}); // a failure is handled below, by Pyodide's own path
  WebAssembly.instantiateStreaming = async (source, imports) => {
    WebAssembly.instantiateStreaming = original;
    let module;
    try {
      module = await compiled;
    } catch (err) {
      console.warn("pyodide-cells: early compile failed, Pyodide compiles instead:", err);
      return original(source, imports);
    }
    Promise.resolve(source).then((r) => r.body && r.body.cancel()).catch(() => {});
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
}

let receiveInit;
const init = new Promise((resolve) => (receiveInit = resolve));

async function boot() {
  const steps = 4;
  status("loading", 1, steps, "Downloading the Python runtime (Pyodide 0.26.2)");
  const opening = openSnapshot();
  // Start fetching the small files while the interpreter downloads and compiles.
  const wheel = WHEEL_URL ? fetchBytes(WHEEL_URL, "the labs wheel") : Promise.resolve(null);
  // Optional: without it, labs modules are compiled from source when imported.
  const labsBytecode = LABS_BYTECODE_URL ? fetchBytes(LABS_BYTECODE_URL, "the labs bytecode").catch(() => null) : null;
  const runnerSource = fetch(RUNNER_URL).then((r) => {
    if (!r.ok) throw new Error(`could not load the cell runner from ${RUNNER_URL}: HTTP ${r.status}`);
    return r.text();
  });
  compileEarly(PYODIDE_URL + "pyodide.asm.wasm");
  importScripts(PYODIDE_URL + "pyodide.js");
  // The interpreter's JavaScript (100-200 ms to compile and run) is loaded here,
  // while the snapshot's file opens: loadPyodide skips loading it when
  // _createPyodideModule is already defined, and it must know whether it
  // restores a snapshot before it starts.
  importScripts(PYODIDE_URL + "pyodide.asm.js");
  const { pyodide, restored } = await startPyodide(opening);
  // Stop: the page writes SIGINT (2) here; Python raises KeyboardInterrupt.
  const { interruptBuffer } = await init;
  if (interruptBuffer) {
    interrupt = new Uint8Array(interruptBuffer);
    pyodide.setInterruptBuffer(interrupt);
  }
  // The file system is not part of a snapshot: it is filled again either way.
  status("loading", 2, steps, "Installing the labs package");
  const wheelBytes = await wheel;
  if (wheelBytes) pyodide.unpackArchive(wheelBytes, "wheel");
  // A restored interpreter has every labs module imported already: it needs no bytecode.
  const bytecode = wheelBytes && !restored && (await labsBytecode);
  if (bytecode) pyodide.unpackArchive(bytecode, "zip");
  status("loading", 3, steps, "Starting the cell runner");
  pyodide.FS.writeFile("/home/pyodide/pyodide_cells_runner.py", await runnerSource);
  const sources = !restored && STDLIB_SOURCES_URL ? STDLIB_SOURCES(STDLIB_SOURCES_URL) : ""; // a snapshot has it already
  pyodide.runPython((restored ? AFTER_RESTORE : "") + sources + FIND_NEW_FILES + "import pyodide_cells_runner\n");
  let snapshot = null;
  if (!restored && CAN_SNAPSHOT) {
    try {
      if (wheelBytes) pyodide.runPython(IMPORT_LABS);
      snapshot = pyodide.makeMemorySnapshot(); // before any JavaScript object enters Python
    } catch (err) {
      console.warn("pyodide-cells: no start-up snapshot:", err);
    }
  }
  // Streams are batched: a print loop would otherwise post one message per write.
  const emit = (kind, payload) => {
    const msg = JSON.parse(payload);
    if (kind === "stream") return bufferStream(msg.name, msg.text);
    flushStreams();
    post({ type: kind, id: currentId, ...msg });
  };
  const runner = pyodide.runPython("pyodide_cells_runner.CellRunner")(emit);
  status("ready", steps, steps, "Python ready", { restored });
  if (snapshot) setTimeout(() => storeSnapshot(snapshot), 0);
  return { pyodide, runner };
}

let streamBuffer = { name: null, text: "" };
let lastFlush = 0;
const FLUSH_CHARS = 16_384;
const FLUSH_MS = 50;

function flushStreams() {
  if (streamBuffer.text) post({ type: "stream", id: currentId, name: streamBuffer.name, text: streamBuffer.text });
  streamBuffer = { name: null, text: "" };
  lastFlush = performance.now();
}

function bufferStream(name, text) {
  if (streamBuffer.name !== name) flushStreams();
  streamBuffer.name = name;
  streamBuffer.text += text;
  if (streamBuffer.text.length >= FLUSH_CHARS || performance.now() - lastFlush >= FLUSH_MS) flushStreams();
}

function isFatal(text) {
  return /fatal|already fatally failed|Maximum call stack size exceeded|memory access out of bounds|unreachable|Aborted\(/i.test(text);
}

async function run({ id, code, stopGeneration }) {
  const { runner } = await ready;
  currentId = id;
  post({ type: "start", id });
  // Stop was pressed after this run was queued, while an earlier one ran: cancel it.
  const cancelled = interrupt && stopGeneration != null && stopGeneration !== interrupt[1];
  if (interrupt) interrupt[0] = 0; // a Stop meant for an earlier run must not hit this one
  if (cancelled) {
    const traceback = "KeyboardInterrupt: Stop was pressed before this cell started, so it did not run";
    post({ type: "error", id, ename: "KeyboardInterrupt", evalue: "cancelled by Stop", traceback });
    post({ type: "done", id, ms: 0, status: "error", execution_count: null });
    currentId = null;
    return;
  }
  const t0 = performance.now();
  let result;
  try {
    const proxy = runner.run(code);
    result = proxy.toJs({ dict_converter: Object.fromEntries });
    proxy.destroy();
  } catch (err) {
    // A JavaScript-level failure (e.g. a stack overflow inside the interpreter).
    // After a fatal error Pyodide cannot be used again: the page restarts us.
    const text = String(err && err.message ? err.message : err);
    post({ type: "error", id, ename: "RuntimeError", evalue: text, traceback: text });
    result = { status: "error", execution_count: null };
    if (isFatal(text)) {
      flushStreams();
      post({ type: "done", id, ms: performance.now() - t0, ...result });
      post({ type: "fatal", message: text.split("\n")[0].slice(0, 200) });
      currentId = null;
      return;
    }
  }
  flushStreams();
  post({ type: "done", id, ms: performance.now() - t0, ...result });
  currentId = null;
}

self.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    receiveInit(msg);
  } else if (msg.type === "run") {
    queue = queue.then(() => run(msg)).catch(() => {});
  } else if (msg.type === "check") {
    queue = queue
      .then(async () => {
        const { runner } = await ready;
        const results = JSON.parse(runner.run_checks(msg.blocks));
        const warnings = JSON.parse(runner.provenance(msg.names || []));
        post({ type: "checks", id: msg.id, results, warnings });
      })
      .catch((err) => post({ type: "checks", id: msg.id, error: String(err) }));
  } else if (msg.type === "restart") {
    queue = queue.then(async () => {
      const { runner } = await ready;
      runner.reset();
      post({ type: "restarted" });
    });
  }
};

ready = boot();
ready.catch((err) => status("error", 0, 4, String(err && err.message ? err.message : err)));
