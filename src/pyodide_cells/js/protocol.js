// @ts-check
// The contract of the cell runtime: every message between the page and the
// worker, both ways, and the kinds the Python cell runner reports to the
// worker; the interrupt buffer, the boot steps, the plain-start switch and
// the limits. The page (page/boot.js, page/kernel.js) and the worker
// (worker/worker.js) import this module; nothing else builds a message.
// docs/runtime.md links here.
//
// Transport. page/boot.js makes the worker and a MessageChannel, and sends the
// worker one `init` message on the worker itself, handing over `port` and
// Stop's buffer (`interruptBuffer`). From then on both sides speak only on
// that port. Code in a cell can reach the worker's global scope
// (`js.self.postMessage(...)`), but not the port, which lives in the worker
// script's closure: whatever a cell posts arrives on the Worker object, which
// the page ignores, so a cell cannot forge a result. boot.js is inlined into
// each page, so assets.py bundles it with this module at build time; the
// /* @__PURE__ */ marks let esbuild leave out what boot.js does not use.
//
// Order. The page sends one request at a time and waits for its `done`
// before sending the next (page/scheduler.js): what waits is queued in the page,
// where Stop can cancel it without asking the worker.

import LIMITS_JSON from "../limits.json" with { type: "json" };

/**
 * Output limits, shared with the cell runner (runner.py reads the same file).
 * @type {{outputChars: number, richCharsPerOutput: number, richCharsPerRun: number, renderedTextChars: number,
 *   streamFlushChars: number, streamFlushMs: number, streamEagerMessages: number, stopGraceMs: number, stopResendMs: number,
 *   siteSnapshotBudgetMs: number}}
 */
export const LIMITS = /* @__PURE__ */ Object.freeze({ ...LIMITS_JSON });

/** The interrupt buffer: a SharedArrayBuffer of INTERRUPT_BYTES bytes, only when the page is cross-origin isolated. */
export const INTERRUPT_BYTES = 1;

/**
 * Stop's interrupt buffer (a view of INTERRUPT_BYTES shared bytes), or null where the page
 * cannot share memory with its worker (not cross-origin isolated: Stop then replaces the worker).
 * @param {boolean} isolated  `crossOriginIsolated` and SharedArrayBuffer exists
 * @returns {Uint8Array | null}
 */
export const interruptBuffer = (isolated) => (isolated ? new Uint8Array(new SharedArrayBuffer(INTERRUPT_BYTES)) : null);

/**
 * The page-address parameter that starts Python with stock `loadPyodide` and none of the
 * start-up speed work (no snapshot, the stock standard library, no early fetch or compile):
 * `?plain-start`. page/boot.js reads it once and hands it to the worker in the worker's own address
 * (`workerURL`), since the worker starts before the `init` message arrives (worker/worker.js).
 */
export const PLAIN_START = "plain-start";

/**
 * The worker's address: `script` (its versioned URL), with PLAIN_START added when asked.
 * @param {URL} script
 * @param {boolean} plainStart
 * @returns {URL}
 */
export function workerURL(script, plainStart) {
  const url = new URL(script.href);
  if (plainStart) url.searchParams.set(PLAIN_START, "");
  return url;
}

/** Whether the worker at `address` (its own `self.location`) was asked for a plain start. @param {string} address */
export const isPlainStart = (address) => new URL(address).searchParams.has(PLAIN_START);
/** Byte 0 is the signal Pyodide reads between bytecodes (pyodide.setInterruptBuffer). */
export const SIGNAL = 0;
/** Written to byte 0 by Stop: Python raises KeyboardInterrupt. The worker writes NO_SIGNAL before each request. */
export const SIGINT = 2;
export const NO_SIGNAL = 0;

/** The boot steps the worker reports in `status` messages, in order (step k of BOOT_STEPS.length). */
export const BOOT_STEPS = /* @__PURE__ */ Object.freeze([
  "Downloading the Python runtime (Pyodide 0.26.2)",
  "Installing the labs package",
  "Starting the cell runner",
  "Python ready",
]);

// ------------------------------------------------------------ page -> worker

/**
 * @typedef {{type: "init", port: MessagePort, interruptBuffer: SharedArrayBuffer | null,
 *   siteSnapshot: "auto" | "always" | "never"}} InitMessage
 *   Sent once, on the Worker itself; everything else goes over `port`. `siteSnapshot`: whether a
 *   start with no snapshot kept in this browser restores the site's ("auto": when the link is fast
 *   enough, worker/startup/snapshot.js siteSnapshotPays), from the page's `?site-snapshot=` (page/boot.js).
 * @typedef {{type: "run", id: number, code: string, name?: string}} RunRequest
 *   Run a cell's code in the page's namespace. `name` names the code in tracebacks
 *   (`File "<cell 4>", line 2`): a cell's is `cellName(index)`, the number the page shows for it.
 * @typedef {{type: "check", id: number, blocks: string[], names: string[]}} CheckRequest
 *   Run the page's doctest blocks against the namespace; `names` are the names the checks take from the learner.
 * @typedef {{type: "reset", id: number}} ResetRequest
 *   Forget every name the cells defined (same interpreter).
 * @typedef {{type: "complete", id: number, code: string, cursor: number}} CompleteRequest
 *   Ctrl+Space in a cell: complete the dotted name that ends at offset `cursor` of `code` from the
 *   namespace (runner.py CellRunner.complete). Answered by a `done` with `completions`.
 * @typedef {RunRequest | CheckRequest | ResetRequest | CompleteRequest} Request
 */

/**
 * @param {MessagePort} port  the worker's end of the page's MessageChannel
 * @param {Uint8Array | null} interrupt  Stop's buffer (`interruptBuffer`), shared with the worker
 * @param {InitMessage["siteSnapshot"]} [siteSnapshot]
 * @returns {InitMessage}
 */
export const init = (port, interrupt, siteSnapshot = "auto") => ({
  type: "init",
  port,
  interruptBuffer: interrupt ? /** @type {SharedArrayBuffer} */ (interrupt.buffer) : null,
  siteSnapshot,
});
/**
 * The message if it is a well-formed `init`, else null: the worker takes the first one only.
 * @param {unknown} data
 * @returns {InitMessage | null}
 */
export function asInit(data) {
  const msg = /** @type {any} */ (data);
  if (!msg || msg.type !== "init" || !(msg.port instanceof MessagePort)) return null;
  const shared = typeof SharedArrayBuffer === "function" && msg.interruptBuffer instanceof SharedArrayBuffer;
  if (msg.interruptBuffer !== null && !shared) return null;
  return msg;
}
/**
 * How the page names a cell, everywhere (toolbar, status bar, tracebacks, messages): by its place on
 * the page, from 1. A run's number would change with every run, and a function defined in an earlier
 * run would name a cell that no toolbar shows any more.
 * @param {number} index  the cell's index, from 0
 */
export const cellName = (index) => `cell ${index + 1}`;
/** @returns {RunRequest} */
export const run = (/** @type {number} */ id, /** @type {string} */ code, /** @type {string | undefined} */ name = undefined) =>
  name === undefined ? { type: "run", id, code } : { type: "run", id, code, name };
/** @returns {CheckRequest} */
export const check = (/** @type {number} */ id, /** @type {string[]} */ blocks, /** @type {string[]} */ names) => ({
  type: "check",
  id,
  blocks,
  names,
});
/** @returns {ResetRequest} */
export const reset = (/** @type {number} */ id) => ({ type: "reset", id });
/** @returns {CompleteRequest} */
export const complete = (/** @type {number} */ id, /** @type {string} */ code, /** @type {number} */ cursor) => ({ type: "complete", id, code, cursor });

// ------------------------------------------------------------ worker -> page

/**
 * @typedef {"loading" | "ready" | "error"} BootState
 * @typedef {"" | "browser" | "site"} SnapshotSource
 *   Where the interpreter came from: "" started afresh; "browser" restored from the start-up snapshot
 *   this browser kept; "site" restored from the one the site was built with.
 * @typedef {{type: "status", state: BootState, step: number, steps: number, message: string,
 *   at: number, restored: SnapshotSource}} StatusMessage
 *   Boot progress. `at` is an absolute time (ms since the epoch) so the page can place it on its own timeline.
 * @typedef {{type: "stream", id: number, name: "stdout" | "stderr", text: string}} StreamMessage
 * @typedef {{[mime: string]: string}} MimeBundle
 * @typedef {{type: "display" | "result", id: number, data: MimeBundle, display_id?: string, update?: boolean}} DisplayMessage
 *   With `display_id` the output can be replaced: `update` replaces every output shown with that id (in any cell),
 *   as Jupyter's update_display_data; an id not shown is ignored.
 * @typedef {{type: "clear", id: number, wait: boolean}} ClearMessage
 *   Clear the running cell's output (IPython's clear_output); `wait`: when its next output arrives.
 * @typedef {{type: "error", id: number, ename: string, evalue: string, traceback: string}} ErrorMessage
 * @typedef {{name: string, description: string, source: string, expected: string, setup: boolean,
 *   block: number, line: number, status: "passed" | "failed" | "error" | "not run", got: string,
 *   reason: string}} CheckRecord  a labs.checks.Result (Result.as_dict)
 * @typedef {"ok" | "error" | "interrupted"} DoneStatus
 * @typedef {{from: number, options: {label: string, type: string}[]}} Completions
 *   The names that complete the one before the cursor, replacing `code` from offset `from` (after its last dot).
 * @typedef {{type: "done", id: number, status: DoneStatus, ms: number, execution_count: number | null,
 *   results?: CheckRecord[], warnings?: string[], completions?: Completions}} DoneMessage
 *   The end of a request: every request gets exactly one `done`, or a `fatal`. `results` and `warnings` answer a `check`;
 *   `completions` a `complete`.
 * @typedef {{type: "fatal", id: number, message: string}} FatalMessage
 *   Request `id` broke the interpreter, which cannot be used again (a stack overflow inside it, an abort):
 *   it ends that request in place of `done`, and the page starts a new worker.
 * @typedef {StatusMessage | StreamMessage | DisplayMessage | ClearMessage | ErrorMessage | DoneMessage | FatalMessage} WorkerMessage
 */

/** @returns {StatusMessage} */
export const status = (
  /** @type {BootState} */ state,
  /** @type {number} */ step,
  /** @type {string} */ message,
  /** @type {number} */ at,
  /** @type {SnapshotSource} */ restored = "",
) => ({ type: "status", state, step, steps: BOOT_STEPS.length, message, at, restored });
/** @returns {StreamMessage} */
export const stream = (/** @type {number} */ id, /** @type {"stdout" | "stderr"} */ name, /** @type {string} */ text) => ({
  type: "stream",
  id,
  name,
  text,
});
/**
 * @param {number} id
 * @param {"display" | "result"} kind
 * @param {MimeBundle} data
 * @param {string} [displayId]  an output that can be replaced later
 * @param {boolean} [update]  replace the outputs shown with `displayId`
 * @returns {DisplayMessage}
 */
export const display = (id, kind, data, displayId, update = false) =>
  displayId === undefined ? { type: kind, id, data } : { type: kind, id, data, display_id: displayId, update };
/** @returns {ClearMessage} */
export const clear = (/** @type {number} */ id, /** @type {boolean} */ wait) => ({ type: "clear", id, wait });
/** @returns {ErrorMessage} */
export const error = (/** @type {number} */ id, /** @type {string} */ ename, /** @type {string} */ evalue, /** @type {string} */ traceback) => ({
  type: "error",
  id,
  ename,
  evalue,
  traceback,
});
/**
 * @param {number} id
 * @param {DoneStatus} doneStatus
 * @param {number} ms
 * @param {number | null} executionCount
 * @param {{results?: CheckRecord[], warnings?: string[], completions?: Completions}} [answer]
 * @returns {DoneMessage}
 */
export const done = (id, doneStatus, ms, executionCount, answer = {}) => ({
  type: "done",
  id,
  status: doneStatus,
  ms,
  execution_count: executionCount,
  ...answer,
});
/** @returns {FatalMessage} */
export const fatal = (/** @type {number} */ id, /** @type {string} */ message) => ({ type: "fatal", id, message });

// ------------------------------------------------------------ runner -> worker

/**
 * What the Python cell runner (python/runner.py) tells the worker, through its one callback
 * `emit(kind, payload)`: `payload` is JSON text of the kind's type below. The worker turns each
 * into worker messages (runnerMessage); `stream` is sent as worker/streams.js decides, and what it holds on `flush`.
 * @typedef {{name: "stdout" | "stderr", text: string}} RunnerStream  a write to sys.stdout or sys.stderr
 * @typedef {{}} RunnerFlush  sys.stdout.flush() (print(..., flush=True)): send what is batched
 * @typedef {{data: MimeBundle, display_id?: string, update?: boolean}} RunnerDisplay  IPython.display.display
 * @typedef {{data: MimeBundle, execution_count: number}} RunnerResult  the value of a cell's last expression
 * @typedef {{wait: boolean}} RunnerClear  IPython.display.clear_output
 * @typedef {{ename: string, evalue: string, traceback: string}} RunnerError  an exception the cell raised
 * @typedef {{stream: RunnerStream, flush: RunnerFlush, display: RunnerDisplay, result: RunnerResult,
 *   clear: RunnerClear, error: RunnerError}} RunnerPayloads
 * @typedef {keyof RunnerPayloads} RunnerKind
 */

/** Every kind the runner emits (a test reads runner.py's `emit("...")` calls against it). */
export const RUNNER_KINDS = /** @type {readonly RunnerKind[]} */ (/* @__PURE__ */ Object.freeze(["stream", "flush", "display", "result", "clear", "error"]));

/**
 * The worker message a runner event becomes, for request `id`; null for `stream` and `flush`
 * (the worker batches those) and for a kind the protocol does not know.
 * @param {number} id
 * @param {string} kind
 * @param {any} payload  the event's payload, parsed
 * @returns {WorkerMessage | null}
 */
export function runnerMessage(id, kind, payload) {
  switch (kind) {
    case "display":
    case "result":
      return display(id, kind, payload.data, payload.display_id, payload.update);
    case "clear":
      return clear(id, payload.wait);
    case "error":
      return error(id, payload.ename, payload.evalue, payload.traceback);
    default:
      return null;
  }
}

const REQUEST_TYPES = new Set(["run", "check", "reset", "complete"]);
const WORKER_TYPES = new Set(["status", "stream", "display", "result", "clear", "error", "done", "fatal"]);

/**
 * The message if it is a well-formed request, else null (the worker ignores anything else).
 * @param {unknown} data
 * @returns {Request | null}
 */
export function asRequest(data) {
  const msg = /** @type {any} */ (data);
  if (!msg || typeof msg !== "object" || !REQUEST_TYPES.has(msg.type) || !Number.isInteger(msg.id)) return null;
  if (msg.type === "run" && (typeof msg.code !== "string" || (msg.name !== undefined && typeof msg.name !== "string"))) return null;
  if (msg.type === "check" && !(Array.isArray(msg.blocks) && msg.blocks.every((/** @type {unknown} */ b) => typeof b === "string"))) return null;
  if (msg.type === "complete" && !(typeof msg.code === "string" && Number.isInteger(msg.cursor) && msg.cursor >= 0 && msg.cursor <= msg.code.length)) return null;
  return msg;
}

/**
 * The message if it is a well-formed worker message, else null (the page ignores anything else).
 * @param {unknown} data
 * @returns {WorkerMessage | null}
 */
export function asWorkerMessage(data) {
  const msg = /** @type {any} */ (data);
  if (!msg || typeof msg !== "object" || !WORKER_TYPES.has(msg.type)) return null;
  if (msg.type === "status") return typeof msg.message === "string" ? msg : null;
  if (!Number.isInteger(msg.id)) return null;
  if (msg.type === "fatal") return typeof msg.message === "string" ? msg : null;
  if (msg.type === "stream") return typeof msg.text === "string" && (msg.name === "stdout" || msg.name === "stderr") ? msg : null;
  if (msg.type === "display" || msg.type === "result") {
    if (!msg.data || typeof msg.data !== "object") return null;
    return msg.display_id === undefined || typeof msg.display_id === "string" ? msg : null;
  }
  if (msg.type === "clear") return typeof msg.wait === "boolean" ? msg : null;
  if (msg.type === "done") return ["ok", "error", "interrupted"].includes(msg.status) ? msg : null;
  return msg;
}
