// @ts-check
// The run scheduler: the one place that knows what Python is doing and what waits for it. Cells,
// Run all, the checks, Stop, Restart and the status bar all go through it, and the views (status
// bar, cells, assertion console) are drawn from its state. It has no DOM: node --test drives it
// with a fake transport (tests/js/scheduler.test.mjs). It is made of:
//
//   runqueue.js          every run's state, the queue sent to the worker one at a time, the views' state
//   scheduler.js         (this file) what each request queues: a cell after the cells above it, Run all, the checks
//   worker_lifecycle.js  Stop, Restart and replacing the worker
//   worker_messages.js   the worker's messages, routed to the running run
//   reasons.js           why a run ended without Python's answer: codes, and their words
//
// Cells share one namespace: running a cell first runs the cells above it that have not run in
// this namespace (`fresh`), as the baked page did. A cell that was stopped is `interrupted`, not
// fresh: it is never run again on its own, even after a restart emptied the namespace.

import { RunQueue } from "./runqueue.js";
import { REASON, reasonText } from "./reasons.js";
import * as lifecycle from "./worker_lifecycle.js";
import * as messages from "./worker_messages.js";

// The types the views and tests name as the scheduler's.
/**
 * @typedef {import("./runqueue.js").Run} Run
 * @typedef {import("./runqueue.js").RunState} RunState
 * @typedef {import("./runqueue.js").RunKind} RunKind
 * @typedef {import("./runqueue.js").KernelState} KernelState
 * @typedef {import("./runqueue.js").Sink} Sink
 * @typedef {import("./runqueue.js").Transport} Transport
 * @typedef {import("./runqueue.js").Timers} Timers
 * @typedef {import("./reasons.js").Reason} Reason
 * @typedef {(index: number) => {code: string, sink: Sink}} CellAt  a cell's code (read when queued) and its output
 */

export { FINAL } from "./runqueue.js";
export { REASON, reasonText };

export class Scheduler extends RunQueue {
  /**
   * @param {object} options
   * @param {Transport} options.transport
   * @param {number} options.cells  how many cells the page has
   * @param {Iterable<number>} [options.auto]  cells that run again after every other cell's run (the live pictures)
   * @param {Iterable<number>} [options.exercises]  the learner's exercise cells: a later one may build on an
   *   earlier one's names (micrograd's exercise 2 extends exercise 1's Value), so the checks run it again
   *   after an earlier cell runs again
   * @param {Iterable<number> | null} [options.checkCells]  the cells the checks need (the build's list); null: every
   *   cell up to the last exercise
   * @param {Timers} [options.timers]
   */
  constructor({ transport, cells, auto = [], exercises = [], checkCells = null, timers = globalThis }) {
    super(transport, cells, timers);
    this.auto = new Set(auto);
    this.exercises = new Set(exercises);
    /** the last cell the checks run before they do: the last exercise (every cell if none) */
    this.checkedThrough = this.exercises.size ? Math.max(...this.exercises) : cells - 1;
    /** @type {Set<number> | null} */
    this.checkCells = checkCells && [...checkCells].length ? new Set(checkCells) : null;
  }

  // ------------------------------------------------------------- requests

  /**
   * Queue a cell, after the cells above it that have not run in this namespace.
   * A cell already waiting to run is not queued twice.
   * @param {number} index
   * @param {CellAt} cellAt  the cell's code (read when queued) and its output
   * @returns {Promise<Run>}
   */
  runCell(index, cellAt) {
    const waiting = this.pending(index, "queued");
    if (waiting) return waiting.ended;
    for (let i = 0; i < index; i++) if (!this.auto.has(i) && this.isFresh(i)) this.queueCell(i, cellAt);
    const run = this.queueCell(index, cellAt);
    this.queueAutoReruns(index, cellAt);
    this.pump();
    return run.ended;
  }

  /** Queue every cell in page order (the live pictures last). @returns {Promise<Run[]>} */
  runAll(/** @type {CellAt} */ cellAt) {
    const runs = [];
    for (let i = 0; i < this.cellCount; i++) {
      if (this.auto.has(i)) continue;
      runs.push(this.pending(i, "queued") || this.queueCell(i, cellAt));
    }
    this.queueAutoReruns(null, cellAt);
    this.pump();
    return Promise.all(runs.map((r) => r.ended));
  }

  /**
   * The page's checks: first the cells they need that have not run in this namespace, then the
   * checks. The build works out which cells the checks need (check_cells.py: the exercises and
   * the cells that bind what they read); the demonstrations (micrograd's training runs for
   * seconds) are not waited for. Without that list, every cell up to the last exercise.
   * @param {string[]} blocks
   * @param {string[]} names
   * @param {CellAt} cellAt
   * @param {Sink} sink
   * @returns {Run}
   */
  check(blocks, names, cellAt, sink = {}) {
    let any = false;
    let latestEarlier = 0; // when the latest of the cells above ran (Infinity: it runs now)
    for (let i = 0; i <= this.checkedThrough; i++) {
      if (this.auto.has(i) || (this.checkCells && !this.checkCells.has(i))) continue;
      // The checks test the code shown: a cell edited (or Reset) since it ran runs again, and so
      // does an exercise that ran before a cell above it last ran (or runs now): it may build on
      // what that cell defines (micrograd's exercise 2 extends exercise 1's Value).
      const order = this.ranOrder.get(i) ?? 0;
      if (this.isFresh(i) || this.changedSinceRun(i, cellAt) || (this.exercises.has(i) && order < latestEarlier)) {
        this.queueCell(i, cellAt);
        any = true;
        latestEarlier = Infinity;
      } else {
        latestEarlier = Math.max(latestEarlier, order);
      }
    }
    if (any) this.queueAutoReruns(null, cellAt);
    const run = this.submit("checks", sink, { blocks, names });
    this.pump();
    return run;
  }

  /** Run code in the namespace without a cell (benchmarks, tests). @returns {Promise<Run>} */
  runCode(/** @type {string} */ code, /** @type {Sink} */ sink) {
    const run = this.submit("code", sink, { code });
    this.pump();
    return run.ended;
  }

  /**
   * Ctrl+Space: the names that complete the one before `cursor` in `code`, from the namespace as
   * it is once what is queued has run (a completion waits its turn, as every request does: see
   * `ahead`). Resolves with the run, whose `answer.completions` holds them when it is "done".
   * @param {string} code @param {number} cursor
   * @returns {Run}
   */
  complete(code, cursor) {
    const run = this.submit("complete", {}, { code, cursor });
    this.pump();
    return run;
  }

  /** @param {number} index @param {CellAt} cellAt */
  queueCell(index, cellAt) {
    const { code, sink } = cellAt(index);
    return this.submit("cell", sink, { cell: index, code });
  }

  /** The live pictures follow the learner's code: they run again after another cell's run. */
  queueAutoReruns(/** @type {number | null} */ except, /** @type {CellAt} */ cellAt) {
    for (const i of this.auto) {
      if (i === except || this.pending(i, "queued")) continue;
      this.queueCell(i, cellAt);
    }
  }

  // ---------------------------------------------- stop, restart, the worker (worker_lifecycle.js)

  /** Stop what runs (KeyboardInterrupt, or a new worker) and cancel what waits. */
  stop() {
    lifecycle.stop(this);
  }

  /** Empty the namespace (the same interpreter when idle, else a new worker). */
  restart() {
    lifecycle.restart(this);
  }

  /**
   * Terminate the worker and start another, ending what runs and waits with `cause`.
   * @param {Reason} cause @param {{detail?: string, forgetAll?: boolean}} [options]
   */
  replaceWorker(cause, options) {
    lifecycle.replaceWorker(this, cause, options);
  }

  // ------------------------------------------------ from the worker (worker_messages.js)

  /** A worker message (already checked by protocol.asWorkerMessage). @param {import("../protocol.js").WorkerMessage} msg */
  receive(msg) {
    messages.receive(this, msg);
  }

  /** @param {import("../protocol.js").StatusMessage} msg */
  onStatus(msg) {
    messages.onStatus(this, msg);
  }

  /** The worker script failed (it could not load, or threw outside a request). @param {string} message */
  onWorkerError(message) {
    messages.onWorkerError(this, message);
  }
}
