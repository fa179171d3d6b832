// @ts-check
// Worker -> page: the messages the worker sends on the port (boot progress, a
// request's output, its one `done` or `fatal`), built here, and the check the
// page holds each one to.

/** The boot steps the worker reports in `status` messages, in order (step k of BOOT_STEPS.length). */
export const BOOT_STEPS = /* @__PURE__ */ Object.freeze([
  "Downloading the Python runtime (Pyodide 0.26.2)",
  "Installing the labs package",
  "Starting the cell runner",
  "Python ready",
]);

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

const WORKER_TYPES = /* @__PURE__ */ new Set(["status", "stream", "display", "result", "clear", "error", "done", "fatal"]);

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
