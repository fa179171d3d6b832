// @ts-check
// The worker's start, from its first moment to a cell runner that answers:
// one entry point, startPython, in a handful of named stages. This folder
// holds everything start-up does, and imports only the protocol (../../protocol.js)
// and the Python the worker boots with; the worker (../worker.js) imports this
// file only.
//
//   1. fetchInputs        the labs wheel, its bytecode and the cell runner, at once
//   2. startInterpreter   Pyodide: a snapshot restored, or a fresh start (interpreter.js),
//                         with its downloads started early and its WebAssembly compiled
//                         while its JavaScript loads (early.js)
//   3. fillFileSystem     the wheel (and bytecode), the runner, the IPython stand-in
//   4. bootWorker         worker_boot.py: the cell runner imported (boot_python.js)
//   5. keepSnapshot       on a fresh start, a memory snapshot for this browser's next visit
//   6. ready              the runner made; the snapshot stored and the rest of the
//                         standard library fetched once the page has had its answer
//
// (The shape of jupyterlite/pyodide-kernel's worker.ts, whose `initialize` awaits
// initRuntime, initFilesystem, initPackageManager, initKernel and initGlobals in turn.)
//
// A plain start (`?plain-start` on the page, protocol.js PLAIN_START) runs the same
// stages with stock loadPyodide and none of the speed work: no snapshot made or
// restored, Pyodide's own python_stdlib.zip, no early fetch or compile, no labs
// bytecode. Turn it on first when Pyodide is upgraded or a start-up bug is chased
// (docs/runtime.md): if the plain start works, the bug is in the speed work.

import * as protocol from "../../protocol.js";
import BOOT_PY from "../../../python/worker_boot.py";
// IPython.display for the cells (python/ipython/): installed as the IPython package.
import IPYTHON_INIT from "../../../python/ipython/__init__.py";
import IPYTHON_DISPLAY from "../../../python/ipython/display.py";
import { bootWorker, fillFileSystem, importLabs } from "./boot_python.js";
import * as config from "./config.js";
import { installEarly } from "./early.js";
import { seeRealGlobals, startAfresh, startInterpreter } from "./interpreter.js";
import { packSparse } from "./packed.js";
import { SnapshotStore } from "./snapshot.js";
import { fetchRestLater } from "./stdlib_rest.js";
import { tickingSignal } from "./ticking.js";

/**
 * What a started worker answers requests with.
 * @typedef {{runner: any, interrupt: Uint8Array | null, answered: () => void}} Started
 *   `interrupt`: Stop's buffer, which Python reads; `answered`: call after each answer
 */

const now = () => performance.timeOrigin + performance.now();

/**
 * Starts Python in this worker and makes its cell runner.
 * @param {Promise<protocol.InitMessage>} init  the page's init message, when it comes
 * @param {(msg: protocol.WorkerMessage) => void} post  sends a message to the page
 * @param {(kind: protocol.RunnerKind, payload: string) => void} emit  the runner's one callback
 * @param {() => void} [tick]  called now and then while Python runs code (ticking.js)
 * @returns {Promise<Started>}  rejects with what went wrong when Python cannot start
 */
export async function startPython(init, post, emit, tick = () => {}) {
  const plain = protocol.isPlainStart(self.location.href);
  const step = (/** @type {number} */ k, /** @type {protocol.SnapshotSource} */ restored = "") =>
    post(protocol.status(k === protocol.BOOT_STEPS.length ? "ready" : "loading", k, protocol.BOOT_STEPS[k - 1], now(), restored));
  const snapshots = new SnapshotStore(new URL(".", config.HERE).href, plain ? "" : config.KEY); // no key: none kept

  step(1);
  const opening = snapshots.open(); // first: its three round trips to the browser overlap the downloads
  const inputs = fetchInputs(plain);
  let { pyodide, restored, fetched, wasmFailed } = plain ? await startPlain() : await startFast(snapshots, opening, init);

  step(2); // the file system is not part of a snapshot: it is filled again either way
  const [wheel, bytecode] = await Promise.all([inputs.wheel, inputs.bytecode]);
  const files = { boot: BOOT_PY, runner: await inputs.runner, ipythonInit: IPYTHON_INIT, ipythonDisplay: IPYTHON_DISPLAY };
  const how = (/** @type {boolean} */ fromSnapshot) => ({ wheel, bytecode: wheel ? bytecode : null, restored: fromSnapshot,
    sourcesURL: plain ? "" : config.STDLIB_SOURCES_URL, restURL: plain ? "" : config.STDLIB_REST_URL });
  step(3);
  try {
    fillFileSystem(pyodide, files, how(Boolean(restored)));
    bootWorker(pyodide, files, how(Boolean(restored)));
  } catch (err) {
    if (!restored) throw err;
    // Restored, but damaged in a way its shape did not show: start afresh after all.
    console.warn(`pyodide-cells: the ${restored === "site" ? "site's" : "kept"} start-up snapshot restored but did not boot; starting afresh:`, err);
    if (restored === "browser") await snapshots.drop();
    pyodide = await Promise.race([startAfresh(snapshots), wasmFailed]);
    [restored, fetched] = ["", null];
    fillFileSystem(pyodide, files, how(false));
    bootWorker(pyodide, files, how(false));
  }
  const interrupt = await connectInterrupt(pyodide, init, tick);
  const made = restored ? null : keepSnapshot(pyodide, snapshots, Boolean(wheel));

  const runner = pyodide.pyimport("pyodide_cells_runner").CellRunner(emit, JSON.stringify(protocol.LIMITS));
  step(protocol.BOOT_STEPS.length, restored);
  storeLater(snapshots, fetched, made, restored);
  return { runner, interrupt, answered: fetchRestLater(pyodide, plain ? "" : config.STDLIB_REST_URL, config.HERE) };
}

/**
 * Stage 1: the files start-up needs beside the interpreter, asked for at once (awaited in stage 3).
 * @param {boolean} plain  without the labs bytecode (it is part of the speed work)
 */
function fetchInputs(plain) {
  const wheel = config.WHEEL_URL ? config.fetchBytes(config.WHEEL_URL, "the labs wheel").then((b) => new Uint8Array(b)) : Promise.resolve(null);
  wheel.catch(() => {}); // awaited after the interpreter: not an unhandled rejection meanwhile
  // Optional: without it, labs modules are compiled from source when imported.
  const bytecode = !plain && config.LABS_BYTECODE_URL
    ? config.fetchBytes(config.LABS_BYTECODE_URL, "the labs bytecode").then((b) => new Uint8Array(b), () => null)
    : Promise.resolve(null);
  const runner = fetch(config.RUNNER_URL).then((r) => {
    if (!r.ok) throw new Error(`could not load the cell runner from ${config.RUNNER_URL}: HTTP ${r.status}`);
    return r.text();
  });
  runner.catch(() => {}); // as the wheel
  return { wheel, bytecode, runner };
}

/**
 * Stage 2, plain: stock loadPyodide from the site's copy of Pyodide, its own standard library.
 * @returns {Promise<{pyodide: any, restored: protocol.SnapshotSource, fetched: null, wasmFailed: Promise<never>}>}
 */
async function startPlain() {
  importScripts(config.PYODIDE_URL + "pyodide.js");
  const pyodide = await /** @type {any} */ (self).loadPyodide({ indexURL: config.PYODIDE_URL });
  return { pyodide, restored: "", fetched: null, wasmFailed: new Promise(() => {}) };
}

/**
 * Stage 2, the fast way: the replacements installed (early.js: their order matters), then
 * Pyodide's JavaScript loaded while the snapshot's file opens, then a snapshot or a fresh start.
 * @param {SnapshotStore} snapshots
 * @param {Promise<(() => Uint8Array) | null>} opening
 * @param {Promise<protocol.InitMessage>} init
 */
async function startFast(snapshots, opening, init) {
  const wasmFailed = installEarly([config.STDLIB_URL || config.STOCK_STDLIB_URL, config.LOCK_URL], config.WASM_URL);
  importScripts(config.PYODIDE_URL + "pyodide.js");
  // The interpreter's JavaScript (100-200 ms to compile and run) is loaded here,
  // while the snapshot's file opens: loadPyodide skips loading it when
  // _createPyodideModule is already defined, and it must know whether it
  // restores a snapshot before it starts.
  importScripts(config.ASM_JS_URL);
  const started = await Promise.race([startInterpreter(snapshots, opening, init), wasmFailed]);
  return { ...started, wasmFailed };
}

/**
 * Stop's buffer from the page's init message (null where the page is not isolated); Python is
 * given it with `tick` (ticking.js), on every host.
 * @param {any} pyodide
 * @param {Promise<protocol.InitMessage>} init
 * @param {() => void} tick
 */
async function connectInterrupt(pyodide, init, tick) {
  const { interruptBuffer } = await init;
  const interrupt = interruptBuffer ? new Uint8Array(interruptBuffer) : null;
  pyodide.setInterruptBuffer(tickingSignal(interrupt, tick));
  return interrupt;
}

/**
 * Stage 5: a memory snapshot of a fresh start, where this browser can keep one (null otherwise),
 * then the real `js` module for the cells (interpreter.js seeRealGlobals).
 * @param {any} pyodide
 * @param {SnapshotStore} snapshots
 * @param {boolean} withLabs  import every labs module first: a restored interpreter has them all
 * @returns {Uint8Array | null}
 */
function keepSnapshot(pyodide, snapshots, withLabs) {
  if (!snapshots.available) return null;
  let snapshot = null;
  try {
    if (withLabs) importLabs(pyodide);
    snapshot = pyodide.makeMemorySnapshot(); // before any JavaScript object enters Python
  } catch (err) {
    console.warn("pyodide-cells: no start-up snapshot:", err);
  }
  seeRealGlobals(pyodide);
  return snapshot;
}

/**
 * Stage 6's storage, once the ready message is out: what this browser keeps for its next
 * visit, packed (12 MB of its storage, not 21; the site's as it came, 8.8 MB).
 * @param {SnapshotStore} snapshots
 * @param {Uint8Array | null} fetched  the site's snapshot as it came
 * @param {Uint8Array | null} made  the one this start made
 * @param {protocol.SnapshotSource} restored
 */
function storeLater(snapshots, fetched, made, restored) {
  if (snapshots.available && (fetched || made)) {
    setTimeout(() => snapshots.store(fetched || (() => packSparse(/** @type {Uint8Array} */ (made)))), 0);
  } else if (restored === "browser") {
    setTimeout(() => snapshots.sweep(), 0); // what a tab closed mid-write left (store sweeps too)
  }
}
