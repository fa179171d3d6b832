// @ts-check
// The worker's lifecycle, as the run queue sees it: Stop (the interrupt buffer, and its timers
// that resend SIGINT and give up on it), Restart (the same interpreter forgets its names, or a
// new worker), and replacing the worker (Stop without an interrupt buffer, Stop unanswered, a
// crash). Each is a function of the queue (runqueue.js) so that the Scheduler's methods of the
// same names stay one line and node --test drives them with a fake transport and fake timers.

import * as protocol from "../protocol.js";
import { REASON, RESET_NOTE, replacedNote } from "./reasons.js";

/** @typedef {import("./runqueue.js").RunQueue} RunQueue @typedef {import("./reasons.js").Reason} Reason */

/**
 * Stop whatever Python is doing and cancel everything that waits. With an interrupt buffer
 * Python gets KeyboardInterrupt and the namespace is kept; if it does not answer within the
 * grace period (code stuck outside the interpreter loop: time.sleep, a JavaScript loop), or
 * without a buffer, the worker is replaced.
 * @param {RunQueue} q
 */
export function stop(q) {
  for (const run of q.queue.filter((r) => r.state === "queued")) q.finish(run, "cancelled", REASON.stoppedBeforeRun);
  const running = q.running;
  if (!running) return q.changed();
  if (!q.transport.canInterrupt) {
    replaceWorker(q, REASON.stopReplaced);
    return;
  }
  if (q.stopping) return q.changed();
  q.stopping = true;
  q.transport.interrupt();
  const { stopGraceMs, stopResendMs } = protocol.LIMITS;
  // Python reads (and clears) the signal between bytecodes; now and then a restored
  // interpreter reads one and raises nothing: send it again while the run goes on.
  for (let t = stopResendMs; t < stopGraceMs; t += stopResendMs) {
    q.stopTimers.push(q.timers.setTimeout(() => {
      if (q.running === running && !q.transport.signalPending()) q.transport.interrupt();
    }, t));
  }
  q.stopTimers.push(q.timers.setTimeout(() => {
    if (q.running === running) replaceWorker(q, REASON.stopUnanswered);
  }, stopGraceMs));
  q.changed();
}

/**
 * Empty the namespace. When Python is idle the same interpreter forgets its names; when it is
 * busy, loading or failed, the worker is replaced (a failed start is retried).
 * @param {RunQueue} q
 */
export function restart(q) {
  if (q.kernel.state === "ready" && !q.busy) {
    q.forgetRuns();
    const run = q.submit("reset", {});
    run.ended.then(() => {
      q.kernel.note = RESET_NOTE;
      q.changed();
    });
    q.pump();
    return;
  }
  replaceWorker(q, q.kernel.state === "error" ? REASON.retried : REASON.restarted, { forgetAll: true });
}

/**
 * Terminate the worker and start another. The running run is interrupted, waiting runs are
 * cancelled, all with `cause`. Cells that ran must run again to define their names (they are
 * fresh again); a stopped cell stays stopped, unless the learner asked for a clean slate
 * (`forgetAll`, Restart).
 * @param {RunQueue} q
 * @param {Reason} cause  why: its words are shown in the status bar and the interrupted cell
 * @param {{detail?: string, forgetAll?: boolean}} [options]  detail: what the worker said (a crash)
 */
export function replaceWorker(q, cause, { detail = "", forgetAll = false } = {}) {
  q.clearStopTimers();
  const running = q.running;
  if (running) q.finish(running, "interrupted", cause, detail);
  for (const run of [...q.queue]) q.finish(run, "cancelled", cause, detail);
  for (const [index, state] of [...q.history]) {
    if (forgetAll || (state !== "interrupted" && state !== "cancelled")) {
      q.history.delete(index);
      q.ranCode.delete(index);
      q.ranOrder.delete(index);
    }
  }
  const note = replacedNote(cause, detail);
  q.kernel = { ...q.kernel, state: "loading", step: 0, message: protocol.BOOT_STEPS[0], note, restarts: q.kernel.restarts + 1 };
  q.transport.replace();
  q.changed();
}
