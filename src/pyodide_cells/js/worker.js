// @ts-check
// The Pyodide worker: boots Pyodide 0.26.2 from the site's own _static/pyodide/,
// installs the labs wheel and the cell runner, then answers the page's
// requests one at a time. Every message it sends or accepts is defined in
// protocol.js, and goes over the MessagePort of the page's `init` message.
//
// It starts loading as soon as its script runs: every URL it needs is relative
// to its own, and the wheel's name and the snapshot key are compiled in by
// assets.py (esbuild --define). Waiting for the page's first message instead
// cost 100-200 ms on a lab page, whose main thread is busy parsing and laying
// out the document and only then passes the message on.

import * as protocol from "./protocol.js";
import { SnapshotStore, checkIntegrity, packSparse, rebase, siteSnapshotPays, unpackSparse } from "./snapshot.js";
import { bootPython, importLabs } from "./boot_python.js";
import BOOT_PY from "../python/worker_boot.py";
// IPython.display for the cells (python/ipython/): installed as the IPython package.
import IPYTHON_INIT from "../python/ipython/__init__.py";
import IPYTHON_DISPLAY from "../python/ipython/display.py";

/* global SNAPSHOT_KEY, LABS_WHEEL, STDLIB_ZIP, STDLIB_REST_ZIP, LABS_BYTECODE, SITE_SNAPSHOT, SITE_SNAPSHOT_BYTES, SITE_SNAPSHOT_INTEGRITY */
const HERE = self.location.href; // .../_static/pyodide_cells/worker.js
const PYODIDE_URL = new URL("../pyodide/", HERE).href;
// The runner and the wheel carry the snapshot key as their version (?v=): a
// second visit takes them from the HTTP cache without asking the server.
const KEY = typeof SNAPSHOT_KEY === "string" ? SNAPSHOT_KEY : ""; // "" when not built with one
const VERSION = KEY ? `?v=${KEY}` : "";
const RUNNER_URL = new URL(`runner.py${VERSION}`, HERE).href;
// The standard library in two parts (precompile_bytecode.mjs): the modules a
// page imports before its first output, as bytecode (without it, CPython
// compiled some 125 modules from source while it started), and the rest,
// fetched once the page is ready. The sources of the bytecode are files beside
// them, fetched one by one when asked for.
const STDLIB = typeof STDLIB_ZIP === "string" ? STDLIB_ZIP : ""; // "" when not built with one
const STDLIB_URL = STDLIB ? new URL(`../pyodide/${STDLIB}`, HERE).href : undefined;
// Relative to this script, as the build's snapshot holds them (make_snapshot.mjs).
const STDLIB_SOURCES_URL = STDLIB ? `../pyodide/${STDLIB.replace(/\.zip$/, "-src/")}` : "";
const STDLIB_REST_URL = typeof STDLIB_REST_ZIP === "string" && STDLIB_REST_ZIP ? `../pyodide/${STDLIB_REST_ZIP}` : "";
const WHEEL = typeof LABS_WHEEL === "string" ? LABS_WHEEL : ""; // "" when not built with one
const WHEEL_URL = WHEEL ? new URL(`../wheels/${WHEEL}${VERSION}`, HERE).href : "";
// The labs modules' bytecode (labs/__pycache__/*.pyc), unpacked over the wheel:
// a lab's first cell imports its module without compiling it.
const BYTECODE = typeof LABS_BYTECODE === "string" ? LABS_BYTECODE : ""; // "" when not built with one
const LABS_BYTECODE_URL = BYTECODE ? new URL(`../wheels/${BYTECODE}${VERSION}`, HERE).href : "";
const snapshots = new SnapshotStore(new URL(".", HERE).href, KEY);
// The site's start-up snapshot, made at build time (make_snapshot.mjs), and its size in bytes.
const SITE_SNAPSHOT_URL = typeof SITE_SNAPSHOT === "string" && SITE_SNAPSHOT ? new URL(SITE_SNAPSHOT, HERE).href : "";
const SITE_SNAPSHOT_SIZE = typeof SITE_SNAPSHOT_BYTES === "number" ? SITE_SNAPSHOT_BYTES : 0;
// Its SHA-256 (Subresource Integrity): a damaged copy is refused before it is restored. Checked
// here (snapshot.js checkIntegrity) where crypto.subtle is, else by fetch (not a secure context).
const SITE_SNAPSHOT_SRI = typeof SITE_SNAPSHOT_INTEGRITY === "string" ? SITE_SNAPSHOT_INTEGRITY : "";
const OWN_DIGEST = Boolean(self.crypto?.subtle);
const WASM_URL = PYODIDE_URL + "pyodide.asm.wasm";
const ASM_JS_URL = PYODIDE_URL + "pyodide.asm.js";

// ------------------------------------------------------------------ transport

/** @type {((msg: protocol.WorkerMessage) => void) | null} */
let toPage = null;
/** @type {protocol.WorkerMessage[]} what was said before the page's port arrived */
const outbox = [];
/** @type {Uint8Array | null} Stop's buffer, when the page is cross-origin isolated */
let interrupt = null;
/** @type {(msg: protocol.InitMessage) => void} */
let receiveInit = () => {};
/** @type {Promise<protocol.InitMessage>} */
const init = new Promise((resolve) => (receiveInit = resolve));

/** @param {protocol.WorkerMessage} msg */
function post(msg) {
  if (toPage) toPage(msg);
  else outbox.push(msg);
}

const now = () => performance.timeOrigin + performance.now();

// The page's one message on the Worker itself. Anything later on it (code in a
// cell can post to its own worker) is ignored: requests come over the port,
// which no cell can reach, and replies are sent with the port's postMessage as
// it was at start-up.
self.onmessage = (event) => {
  const msg = event.data;
  if (toPage || !msg || msg.type !== "init" || !(msg.port instanceof MessagePort)) return;
  const port = /** @type {MessagePort} */ (msg.port);
  const send = MessagePort.prototype.postMessage;
  toPage = (reply) => send.call(port, reply);
  port.onmessage = (e) => onRequest(e.data);
  for (const early of outbox.splice(0)) toPage(early);
  receiveInit(msg);
};

// ----------------------------------------------------------------------- boot

/** @param {string} url @param {string} what */
async function fetchBytes(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${what} from ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/**
 * The resource timing entry of `url`, a file that has arrived whole (the
 * browser may record it a moment later), or undefined if none is recorded
 * within `waitMs`: a browser that keeps no such record must not keep Python
 * from starting.
 * @param {string} url
 * @param {number} waitMs
 * @returns {Promise<PerformanceResourceTiming | undefined>}
 */
function arrival(url, waitMs) {
  const find = () => /** @type {PerformanceResourceTiming | undefined} */ (performance.getEntriesByName(url, "resource")[0]);
  const seen = find();
  if (seen || typeof PerformanceObserver !== "function") return Promise.resolve(seen);
  return new Promise((resolve) => {
    const observer = new PerformanceObserver(() => {
      const entry = find();
      if (entry) done(entry);
    });
    const timer = setTimeout(() => done(undefined), waitMs);
    /** @param {PerformanceResourceTiming | undefined} entry */
    const done = (entry) => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(entry);
    };
    observer.observe({ type: "resource" });
  });
}

/**
 * Starts Pyodide: from this browser's kept snapshot if there is one, else from
 * the site's when fetching it should beat starting CPython (siteSnapshotPays),
 * else afresh. A snapshot that fails to load costs a warning and a fresh start.
 * @param {Promise<(() => Uint8Array) | null>} opening
 * @returns {Promise<{pyodide: any, restored: protocol.SnapshotSource, fetched: Uint8Array | null}>}
 *   `fetched`: the site's snapshot as it came (packed: snapshot.js packSparse), for this browser to keep
 */
async function startPyodide(opening) {
  const read = await opening;
  const { siteSnapshot } = await init;
  const budget = protocol.LIMITS.siteSnapshotBudgetMs;
  // pyodide.asm.js has arrived (importScripts): its record is due at once.
  const asmJs = !read && SITE_SNAPSHOT_URL && siteSnapshot === "auto" ? await arrival(ASM_JS_URL, 100) : undefined;
  const pays = !read && SITE_SNAPSHOT_URL && (siteSnapshot === "always" || siteSnapshotPays(asmJs, SITE_SNAPSHOT_SIZE, budget));
  /** @type {protocol.SnapshotSource} */
  const source = read ? "browser" : pays ? "site" : "";
  if (source) {
    try {
      // Kept and served the same way: without their long runs of zeros.
      const packed = read ? read() : await fetchSiteSnapshot(asmJs, budget);
      if (packed) {
        const { snapshot, based } = unpackSparse(packed);
        SnapshotStore.checked(snapshot, based);
        // Based on the memory as instantiated (the site's): put back when it is (compileEarly),
        // before Pyodide restores it; Pyodide refuses it (magic number) if that never happens.
        rebaseOnInstantiation = based ? (memory) => rebase(snapshot, based, new Uint8Array(memory.buffer)) : null;
        const pyodide = await loadPython({ _loadSnapshot: snapshot });
        return { pyodide, restored: source, fetched: source === "site" ? packed : null };
      }
    } catch (err) {
      rebaseOnInstantiation = null;
      console.warn(`pyodide-cells: the ${source === "site" ? "site's" : "kept"} start-up snapshot did not load; starting afresh:`, err);
      if (source === "browser") await snapshots.drop();
    }
  }
  return { pyodide: await startAfresh(), restored: "", fetched: null };
}

/**
 * What the next instantiation of the interpreter does to its memory first (snapshot.js rebase), once.
 * @type {((memory: WebAssembly.Memory) => void) | null}
 */
let rebaseOnInstantiation = null;

/** Runs rebaseOnInstantiation on a new instance's imported memory. @param {any} imports */
function instantiated(imports) {
  const [rebaseNow, memory] = [rebaseOnInstantiation, imports?.env?.memory];
  rebaseOnInstantiation = null;
  if (rebaseNow && memory instanceof WebAssembly.Memory) rebaseNow(memory);
}

/** Pyodide from the site's files; `how`: restore a snapshot, or be able to make one. @param {object} how */
function loadPython(how) {
  const loadPyodide = /** @type {any} */ (self).loadPyodide;
  return loadPyodide({ indexURL: PYODIDE_URL, stdLibURL: STDLIB_URL, ...how });
}

/** A fresh start of Pyodide, making a snapshot possible where this browser can keep one. */
const startAfresh = () => loadPython({ _makeSnapshot: snapshots.available });

/**
 * Fetches the site's start-up snapshot (packed, as snapshot.js packSparse writes it) and checks its digest.
 * With `asmJs` (the choice was measured), a response that is not compressed
 * where pyodide.asm.js was is judged again by its whole size, and dropped
 * unread when it would not pay (null: Python starts afresh); and one that has
 * not arrived by three times the budget is given up (it throws), since a
 * fresh start would have been quicker by then.
 * @param {PerformanceResourceTiming | undefined} asmJs
 * @param {number} budget
 * @returns {Promise<Uint8Array | null>}
 */
async function fetchSiteSnapshot(asmJs, budget) {
  const controller = new AbortController();
  const giveUp = asmJs ? setTimeout(() => controller.abort(new Error(`it took over ${3 * budget} ms`)), 3 * budget) : undefined;
  try {
    const response = await fetch(SITE_SNAPSHOT_URL, { signal: controller.signal, integrity: (!OWN_DIGEST && SITE_SNAPSHOT_SRI) || undefined });
    if (!response.ok) throw new Error(`could not load the site's start-up snapshot from ${SITE_SNAPSHOT_URL}: HTTP ${response.status}`);
    if (asmJs && !response.headers.get("Content-Encoding") && !siteSnapshotPays(asmJs, SITE_SNAPSHOT_SIZE, budget, true)) {
      controller.abort();
      return null;
    }
    const packed = new Uint8Array(await response.arrayBuffer());
    if (OWN_DIGEST) await checkIntegrity(packed, SITE_SNAPSHOT_SRI);
    return packed;
  } finally {
    clearTimeout(giveUp);
  }
}

/**
 * Gives cells the worker's real global scope as `js`. A start that can make a
 * snapshot (`_makeSnapshot`) registers `js` as a proxy that records the paths
 * Python takes into it, and the getters of the browser's objects refuse that
 * proxy as `this`: `js.navigator.userAgent` or `js.location.href` raised
 * "TypeError: Illegal invocation". Once the snapshot is taken, `js` is the
 * real thing; modules imported before keep what they took.
 * @param {any} pyodide
 */
function seeRealGlobals(pyodide) {
  pyodide.registerJsModule("js", self);
  pyodide.runPython("import sys\nsys.modules.pop('js', None)");
}

// Request the files loadPyodide fetches itself (the standard library and the
// package lock file) now, beside the WebAssembly, rather than after
// pyodide.asm.js has downloaded and run: on a slow network that is a second or
// more in which they did not travel. loadPyodide's own request for each gets
// this response, once; later requests go to the network as usual.
/** @param {string[]} urls */
function fetchEarly(urls) {
  const realFetch = self.fetch;
  /** @type {Map<string, Promise<Response>>} */
  const early = new Map(urls.map((url) => {
    const response = realFetch(url);
    response.catch(() => {}); // a failure reaches loadPyodide, which reports it
    return [new URL(url, self.location.href).href, response];
  }));
  self.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), self.location.href).href;
    const response = early.get(url);
    if (!response) return realFetch(input, init);
    early.delete(url);
    return response;
  };
}

// Compile the interpreter's WebAssembly while pyodide.asm.js downloads and runs
// (about 0.3 s of JavaScript), instead of after it as loadPyodide does: Pyodide
// 0.26 has no option for this, so its one call to instantiateStreaming is
// answered with the module compiled here. Its own fetch of the same file is
// answered with an empty body, never sent: a second request, dropped unread,
// made Chromium discard the file from its HTTP cache where the host sends no
// cache headers, and the service worker then downloaded all 10 MB again.
//
// Returns a promise that rejects when the file cannot be downloaded (it never
// resolves otherwise): Pyodide's own path then aborts inside Emscripten and
// loadPyodide never settles, so boot() races it against this.
/** @param {string} wasmURL @returns {Promise<never>} */
function compileEarly(wasmURL) {
  const original = WebAssembly.instantiateStreaming;
  const realFetch = self.fetch;
  const href = new URL(wasmURL, self.location.href).href;
  self.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (new URL(url, self.location.href).href !== href) return realFetch(input, init);
    self.fetch = realFetch;
    return Promise.resolve(new Response(null, { headers: { "Content-Type": "application/wasm" } }));
  };
  const response = realFetch(wasmURL).then((r) => {
    if (!r.ok) throw new Error(`could not load the Python runtime from ${wasmURL}: HTTP ${r.status}`);
    return r;
  });
  const compiled = WebAssembly.compileStreaming(response);
  compiled.catch(() => {}); // a failure is handled below, by Pyodide's own path
  WebAssembly.instantiateStreaming = async (source, imports) => {
    WebAssembly.instantiateStreaming = original;
    let module;
    try {
      module = await compiled;
    } catch (err) {
      // Compiled from its bytes, not streamed: streaming refuses a file served without the
      // application/wasm type, and so would Pyodide's own path (Python then never started).
      console.warn("pyodide-cells: early compile failed, compiling from the file's bytes instead:", err);
      // `source` is the empty answer above; Pyodide's own request for the file has used it up.
      const result = await WebAssembly.instantiate(await fetchBytes(wasmURL, "the Python runtime"), imports);
      instantiated(imports);
      return result;
    }
    Promise.resolve(source).then((r) => r.body && r.body.cancel()).catch(() => {});
    const instance = await WebAssembly.instantiate(module, imports);
    instantiated(imports);
    return { module, instance };
  };
  return response.then(
    () => new Promise(() => {}),
    (err) => {
      throw new Error(err instanceof TypeError ? `could not load the Python runtime from ${wasmURL}: ${err.message}` : err.message);
    },
  );
}

async function boot() {
  const [step1, step2, step3, step4] = protocol.BOOT_STEPS;
  post(protocol.status("loading", 1, step1, now()));
  const opening = snapshots.open();
  // Start fetching the small files while the interpreter downloads and compiles.
  const wheel = WHEEL_URL ? fetchBytes(WHEEL_URL, "the labs wheel") : Promise.resolve(null);
  wheel.catch(() => {}); // awaited below, after the interpreter: not an unhandled rejection meanwhile
  // Optional: without it, labs modules are compiled from source when imported.
  const labsBytecode = LABS_BYTECODE_URL ? fetchBytes(LABS_BYTECODE_URL, "the labs bytecode").catch(() => null) : null;
  const runnerSource = fetch(RUNNER_URL).then((r) => {
    if (!r.ok) throw new Error(`could not load the cell runner from ${RUNNER_URL}: HTTP ${r.status}`);
    return r.text();
  });
  runnerSource.catch(() => {}); // as the wheel
  fetchEarly([STDLIB_URL || PYODIDE_URL + "python_stdlib.zip", PYODIDE_URL + "pyodide-lock.json"]); // before compileEarly wraps fetch
  const wasmFailed = compileEarly(WASM_URL);
  wasmFailed.catch(() => {}); // raced below
  importScripts(PYODIDE_URL + "pyodide.js");
  // The interpreter's JavaScript (100-200 ms to compile and run) is loaded here,
  // while the snapshot's file opens: loadPyodide skips loading it when
  // _createPyodideModule is already defined, and it must know whether it
  // restores a snapshot before it starts.
  importScripts(ASM_JS_URL);
  let { pyodide, restored, fetched } = await Promise.race([startPyodide(opening), wasmFailed]);
  // The file system is not part of a snapshot: it is filled again either way.
  post(protocol.status("loading", 2, step2, now()));
  const wheelBytes = await wheel;
  const bytecode = wheelBytes ? await labsBytecode : null; // a restored interpreter does not use it
  post(protocol.status("loading", 3, step3, now()));
  const files = { boot: BOOT_PY, runner: await runnerSource, ipythonInit: IPYTHON_INIT, ipythonDisplay: IPYTHON_DISPLAY };
  const how = (/** @type {boolean} */ fromSnapshot) => ({ wheel: wheelBytes ? new Uint8Array(wheelBytes) : null,
    bytecode: bytecode ? new Uint8Array(bytecode) : null, restored: fromSnapshot, sourcesURL: STDLIB_SOURCES_URL,
    restURL: STDLIB_REST_URL });
  try {
    bootPython(pyodide, files, how(Boolean(restored)));
  } catch (err) {
    if (!restored) throw err;
    // Restored, but damaged in a way its shape did not show: start afresh after all.
    console.warn(`pyodide-cells: the ${restored === "site" ? "site's" : "kept"} start-up snapshot restored but did not boot; starting afresh:`, err);
    if (restored === "browser") await snapshots.drop();
    pyodide = await Promise.race([startAfresh(), wasmFailed]);
    restored = "";
    fetched = null;
    bootPython(pyodide, files, how(false));
  }
  const { interruptBuffer } = await init;
  if (interruptBuffer) {
    interrupt = new Uint8Array(interruptBuffer);
    pyodide.setInterruptBuffer(interrupt);
  }
  /** @type {Uint8Array | null} the snapshot this start made, if it made one */
  let snapshot = null;
  if (!restored && snapshots.available) {
    try {
      // Every labs module imported first: a restored interpreter has them all.
      if (wheelBytes) importLabs(pyodide);
      snapshot = pyodide.makeMemorySnapshot(); // before any JavaScript object enters Python
    } catch (err) {
      console.warn("pyodide-cells: no start-up snapshot:", err);
    }
    seeRealGlobals(pyodide);
  }
  const runner = pyodide.pyimport("pyodide_cells_runner").CellRunner(emit, JSON.stringify(protocol.LIMITS));
  post(protocol.status("ready", 4, step4, now(), restored));
  // What this browser keeps for its next visit, packed: 12 MB of its storage, not 21 (the site's as it came, 8.8 MB).
  const made = snapshot;
  if (snapshots.available && (fetched || made)) {
    setTimeout(() => snapshots.store(fetched || (() => packSparse(/** @type {Uint8Array} */ (made)))), 0);
  } else if (restored === "browser") {
    setTimeout(() => snapshots.sweep(), 0); // what a tab closed mid-write left (store sweeps too)
  }
  if (STDLIB_REST_URL) {
    fetchRest = () => fetchStdlibRest(pyodide);
    setTimeout(startRestFetch, REST_WAIT_MS);
  }
  return runner;
}

// The rest of the standard library is fetched once the page has had time to
// show Python's first answer (REST_AFTER_ANSWER_MS after it), or REST_WAIT_MS
// after Python is ready if no request comes: on a fast link, fetched at once,
// it arrived and was given to Python before the first cell had run, and its
// bytes counted on the way to first output.
const REST_WAIT_MS = 3000;
const REST_AFTER_ANSWER_MS = 500;
/** @type {(() => void) | null} */
let fetchRest = null;

function startRestFetch() {
  const start = fetchRest;
  fetchRest = null;
  start?.();
}

/**
 * Fetches the rest of the standard library, now that first output has been
 * shown, and gives it to Python (worker_boot.mount_stdlib_rest). Its arrival
 * is handled between two requests, never while Python runs. An import that
 * needs it before then fetches it itself, synchronously; one that fails here
 * is left to that import, which reports it.
 * @param {any} pyodide
 */
function fetchStdlibRest(pyodide) {
  // Low priority: the learner's next request (a chunk of CodeMirror, Graphviz) goes first.
  fetch(new URL(STDLIB_REST_URL, HERE).href, /** @type {RequestInit} */ ({ priority: "low" }))
    .then((response) => (response.ok ? response.arrayBuffer() : null))
    .then((buffer) => {
      if (!buffer) return;
      const mount = pyodide.globals.get("mount_stdlib_rest");
      mount(new Uint8Array(buffer));
      mount.destroy();
    })
    .catch(() => {});
}

// ------------------------------------------------------------------- requests

/** @type {number | null} the request whose output Python is writing */
let currentId = null;
let streamBuffer = { name: /** @type {"stdout" | "stderr" | null} */ (null), text: "" };
let lastFlush = -Infinity;
let partialLine = false; // the last text sent did not end its line

function flushStreams() {
  if (streamBuffer.text && currentId !== null && streamBuffer.name) {
    post(protocol.stream(currentId, streamBuffer.name, streamBuffer.text));
    partialLine = !streamBuffer.text.endsWith("\n");
    lastFlush = performance.now(); // only a batch sent counts: an empty flush must not hold back the next write
  }
  streamBuffer = { name: null, text: "" };
}

// Streams are batched: a print loop would otherwise post one message per write.
// Python runs synchronously on this thread, so no timer can flush while it
// runs: a write sends the batch when it is big or old enough, when it ends a
// line whose start was already sent (print writes "step", " 0" and "\n"
// apart), or when Python flushes (print(..., flush=True)).
/** @param {"stdout" | "stderr"} name @param {string} text */
function bufferStream(name, text) {
  if (streamBuffer.name !== name) flushStreams();
  streamBuffer.name = name;
  streamBuffer.text += text;
  const { streamFlushChars, streamFlushMs } = protocol.LIMITS;
  if (streamBuffer.text.length >= streamFlushChars || performance.now() - lastFlush >= streamFlushMs || (partialLine && text.includes("\n"))) {
    flushStreams();
  }
}

/** The runner's one callback (runner.py `emit`): kind and a JSON payload. @param {string} kind @param {string} payload */
function emit(kind, payload) {
  if (currentId === null) return;
  if (kind === "flush") return flushStreams();
  const msg = JSON.parse(payload);
  if (kind === "stream") return bufferStream(msg.name, msg.text);
  flushStreams();
  if (kind === "display" || kind === "result") post(protocol.display(currentId, kind, msg.data, msg.display_id, msg.update));
  else if (kind === "clear") post(protocol.clear(currentId, msg.wait));
  else if (kind === "error") post(protocol.error(currentId, msg.ename, msg.evalue, msg.traceback));
}

/** After one of these, Pyodide cannot be used again: the page replaces the worker. @param {string} text */
function isFatal(text) {
  return /fatal|already fatally failed|Maximum call stack size exceeded|memory access out of bounds|unreachable|Aborted\(/i.test(text);
}

/** @type {Promise<any> | null} the runner, once booted */
let ready = null;
let requests = Promise.resolve();

/** @param {unknown} data */
function onRequest(data) {
  const request = protocol.asRequest(data);
  if (request) requests = requests.then(() => answer(request));
}

/** Answer one request: its output, then exactly one `done` (or `fatal`). Never throws. @param {protocol.Request} request */
async function answer(request) {
  const { id } = request;
  let runner;
  try {
    runner = await ready;
  } catch (err) {
    post(protocol.error(id, "RuntimeError", "Python failed to start", `Python failed to start: ${messageOf(err)}`));
    post(protocol.done(id, "error", 0, null));
    return;
  }
  currentId = id;
  lastFlush = -Infinity; // a run's first output shows at once
  partialLine = false;
  if (interrupt) interrupt[protocol.SIGNAL] = protocol.NO_SIGNAL; // a Stop meant for an earlier request must not hit this one
  const t0 = performance.now();
  try {
    if (request.type === "run") {
      const proxy = runner.run(request.code, request.name ?? null);
      const result = proxy.toJs({ dict_converter: Object.fromEntries });
      proxy.destroy();
      flushStreams();
      post(protocol.done(id, result.status, performance.now() - t0, result.execution_count));
    } else if (request.type === "check") {
      const result = JSON.parse(runner.check(JSON.stringify(request.blocks), JSON.stringify(request.names)));
      flushStreams();
      post(protocol.done(id, result.status, performance.now() - t0, null, { results: result.results, warnings: result.warnings }));
    } else if (request.type === "complete") {
      const completions = JSON.parse(runner.complete(request.code, request.cursor));
      post(protocol.done(id, "ok", performance.now() - t0, null, { completions }));
    } else {
      runner.reset();
      post(protocol.done(id, "ok", performance.now() - t0, null));
    }
  } catch (err) {
    // A JavaScript-level failure (e.g. a stack overflow inside the interpreter).
    const text = messageOf(err);
    flushStreams();
    post(protocol.error(id, "RuntimeError", text, text));
    if (isFatal(text)) post(protocol.fatal(id, text.split("\n")[0].slice(0, 200)));
    else post(protocol.done(id, "error", performance.now() - t0, null));
  } finally {
    currentId = null;
    if (fetchRest) setTimeout(startRestFetch, REST_AFTER_ANSWER_MS);
  }
}

/** @param {unknown} err */
const messageOf = (err) => String(err && /** @type {any} */ (err).message ? /** @type {any} */ (err).message : err);

ready = boot();
ready.catch((err) => post(protocol.status("error", 0, messageOf(err), now())));
