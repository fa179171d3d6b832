// @ts-check
// Page -> worker: the requests the page sends on the port, built here, and the
// check the worker holds each one to. The page sends one request at a time and
// waits for its `done` before sending the next (page/scheduler.js): what waits
// is queued in the page, where Stop can cancel it without asking the worker.

/**
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

const REQUEST_TYPES = /* @__PURE__ */ new Set(["run", "check", "reset", "complete"]);

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
