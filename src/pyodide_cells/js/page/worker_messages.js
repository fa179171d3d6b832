// @ts-check
// The worker's messages, routed to the run they belong to: output to the running run's sink,
// `done` ends it and sends the next, `status` updates what Python is doing (a failed start fails
// every waiting run), `fatal` and a worker that fails to load replace or fail the worker. kernel.js
// has already checked each message against the protocol; a message for a run that was given
// up (Stop's restart) is dropped here.

import * as protocol from "../protocol.js";
import { REASON } from "./reasons.js";
import { replaceWorker } from "./worker_lifecycle.js";

/** @typedef {import("./runqueue.js").RunQueue} RunQueue */

/**
 * A worker message (already checked by protocol.asWorkerMessage).
 * @param {RunQueue} q @param {protocol.WorkerMessage} msg
 */
export function receive(q, msg) {
  if (msg.type === "status") return onStatus(q, msg);
  if (msg.type === "fatal") return replaceWorker(q, REASON.crashed, { detail: msg.message });
  const running = q.running;
  if (!running || msg.id !== running.id) return; // a run that was already given up (Stop's restart)
  const sink = running.sink;
  if (msg.type === "stream") sink.stream?.(msg.name, msg.text);
  else if (msg.type === "display" || msg.type === "result") sink.bundle?.(msg.data, msg.type, msg.display_id, msg.update);
  else if (msg.type === "clear") sink.clear?.(msg.wait);
  else if (msg.type === "error") sink.error?.(msg);
  else if (msg.type === "done") {
    running.answer = msg;
    const state = msg.status === "ok" ? "done" : msg.status === "interrupted" ? "interrupted" : "error";
    q.finish(running, state, state === "interrupted" ? REASON.stopped : REASON.none);
    q.pump();
  }
}

/** @param {RunQueue} q @param {protocol.StatusMessage} msg */
export function onStatus(q, msg) {
  const was = q.kernel.state;
  q.kernel = { ...q.kernel, state: msg.state, message: msg.message, step: msg.step, steps: msg.steps };
  if (msg.state === "ready") q.kernel.restored = msg.restored || "";
  if (msg.state === "error") {
    for (const run of [...q.queue]) q.finish(run, "error", REASON.unavailable, msg.message);
  }
  if (was !== msg.state || msg.state === "loading") q.changed();
  q.pump();
}

/**
 * The worker script failed (it could not load, or threw outside a request): while Python
 * loads, that is a failed start.
 * @param {RunQueue} q @param {string} message
 */
export function onWorkerError(q, message) {
  if (q.kernel.state !== "loading") return;
  onStatus(q, protocol.status("error", 0, `the Python worker failed: ${message}`, Date.now()));
}
