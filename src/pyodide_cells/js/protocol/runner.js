// @ts-check
// Runner -> worker: the kinds the Python cell runner (python/runner.py) reports
// to the worker through its one callback, their payloads, and the worker message
// each becomes.

import { clear, display, error } from "./messages.js";

/**
 * What the Python cell runner (python/runner.py) tells the worker, through its one callback
 * `emit(kind, payload)`: `payload` is JSON text of the kind's type below. The worker turns each
 * into worker messages (runnerMessage); `stream` is sent as worker/streams.js decides, and what it holds on `flush`.
 * @typedef {{name: "stdout" | "stderr", text: string}} RunnerStream  a write to sys.stdout or sys.stderr
 * @typedef {{}} RunnerFlush  sys.stdout.flush() (print(..., flush=True)): send what is batched
 * @typedef {{data: import("./messages.js").MimeBundle, display_id?: string, update?: boolean}} RunnerDisplay  IPython.display.display
 * @typedef {{data: import("./messages.js").MimeBundle, execution_count: number}} RunnerResult  the value of a cell's last expression
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
 * @returns {import("./messages.js").WorkerMessage | null}
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
