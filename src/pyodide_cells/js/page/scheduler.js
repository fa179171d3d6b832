// @ts-check
// The run scheduler: the one place that knows what Python is doing and what
// waits for it. Cells, Run all, the checks, Stop, Restart and the status bar
// all go through it, and the views (status bar, cells, assertion console) are
// drawn from its state. It has no DOM: node --test drives it with a fake
// transport (tests/js/scheduler.test.mjs).
//
// Every request is a *run* with one explicit state:
//
//   queued ──> running ──> done | error | interrupted
//     └──────────────────> cancelled        (Stop, Restart or a crash before it started)
//
// Runs wait here, in the page, and go to the worker one at a time, so Stop
// cancels what is queued without asking the worker, and interrupts only what
// is running. Cells share one namespace: running a cell first runs the cells
// above it that have not run in this namespace (`fresh`), as the baked page
// did. A cell that was stopped is `interrupted`, not fresh: it is never run
// again on its own, even after a restart emptied the namespace.

import * as protocol from "../protocol.js";

/**
 * @typedef {"queued" | "running" | "done" | "error" | "interrupted" | "cancelled"} RunState
 * @typedef {"cell" | "code" | "checks" | "reset" | "complete"} RunKind
 * @typedef {"loading" | "ready" | "error"} KernelState
 *
 * @typedef {object} Sink  Where a run's output goes (a cell's output area, a collector, the console).
 * @property {() => void} [start]  the run was sent to Python: its output replaces the old
 * @property {() => void} [end]  the run that was sent has ended: what it showed is all there is
 * @property {(name: "stdout" | "stderr", text: string) => void} [stream]
 * @property {(data: protocol.MimeBundle, kind: "display" | "result", displayId?: string, update?: boolean) => void} [bundle]
 * @property {(wait: boolean) => void} [clear]  the run asked to clear its output (IPython's clear_output)
 * @property {(msg: protocol.ErrorMessage | {traceback: string}) => void} [error]
 *
 * @typedef {object} Run
 * @property {number} id
 * @property {RunKind} kind
 * @property {number | null} cell  the cell's index, for kind "cell"
 * @property {string} [code]
 * @property {string[]} [blocks]
 * @property {string[]} [names]
 * @property {number} [cursor]  where Ctrl+Space was pressed in `code`, for kind "complete"
 * @property {RunState} state
 * @property {string} reason  why it was cancelled, interrupted or failed without Python ("" otherwise)
 * @property {protocol.DoneMessage | null} answer  the worker's `done`
 * @property {Sink} sink
 * @property {Promise<Run>} ended  resolves with the run itself once its state is final
 * @property {(run: Run) => void} resolve
 *
 * @typedef {object} Transport  What the scheduler needs from the worker (kernel.js).
 * @property {(request: protocol.Request) => void} send
 * @property {boolean} canInterrupt  a shared interrupt buffer exists (cross-origin isolated page)
 * @property {() => void} interrupt  write SIGINT for Python to read
 * @property {() => boolean} signalPending  SIGINT is written and Python has not read it yet
 * @property {() => void} replace  terminate the worker and start a new one
 *
 * @typedef {{setTimeout: (fn: () => void, ms: number) => any, clearTimeout: (handle: any) => void}} Timers
 */

export const FINAL = new Set(["done", "error", "interrupted", "cancelled"]);
/** The reason of a run that Stop interrupted while it ran (cell.js shows it as "Stopped (KeyboardInterrupt)"). */
export const STOPPED = "Stop was pressed";

export class Scheduler {
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
    this.transport = transport;
    this.cellCount = cells;
    this.auto = new Set(auto);
    this.exercises = new Set(exercises);
    /** the last cell the checks run before they do: the last exercise (every cell if none) */
    this.checkedThrough = this.exercises.size ? Math.max(...this.exercises) : cells - 1;
    /** @type {Set<number> | null} */
    this.checkCells = checkCells && [...checkCells].length ? new Set(checkCells) : null;
    this.timers = timers;
    /** @type {{state: KernelState, message: string, step: number, steps: number, restored: protocol.SnapshotSource,
     *   note: string, restarts: number}} */
    this.kernel = { state: "loading", message: protocol.BOOT_STEPS[0], step: 0, steps: protocol.BOOT_STEPS.length, restored: "", note: "", restarts: 0 };
    /** @type {Run[]} runs not final yet, in the order they will run; the first may be running */
    this.queue = [];
    /** @type {Map<number, RunState>} each cell's last final state in the current namespace; absent = fresh */
    this.history = new Map();
    /** @type {Map<number, string>} the code each cell's last run ran, in this namespace */
    this.ranCode = new Map();
    /** @type {Map<number, number>} when each cell last ran in this namespace (runs counted in the order they ended) */
    this.ranOrder = new Map();
    /** @type {Map<number, Run>} each cell's latest run */
    this.latest = new Map();
    /** @type {number[]} how many runs of each cell have ended */
    this.ended = Array.from({ length: cells }, () => 0);
    this.stopping = false;
    /** @type {any[]} */
    this.stopTimers = [];
    this.nextId = 1;
    this.finishedRuns = 0; // runs that ran and ended (not cancelled)
    /** @type {Set<(s: Scheduler) => void>} */
    this.listeners = new Set();
  }

  /** @param {(s: Scheduler) => void} listener  called after every change */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    for (const listener of this.listeners) listener(this);
  }

  /** The run Python is running now, or null. */
  get running() {
    return this.queue[0] && this.queue[0].state === "running" ? this.queue[0] : null;
  }

  /** True while anything runs or waits. */
  get busy() {
    return this.queue.length > 0;
  }

  /** The run right before `run` in the queue (what it waits for), or null. */
  ahead(/** @type {Run} */ run) {
    const i = this.queue.indexOf(run);
    return i > 0 ? this.queue[i - 1] : null;
  }

  /**
   * The cell's run that is not final yet (only a queued one, with `state`), or undefined.
   * @param {number} index @param {RunState} [state]
   */
  pending(index, state) {
    return this.queue.find((r) => r.kind === "cell" && r.cell === index && (!state || r.state === state));
  }

  /** A cell whose code differs from the code its last run ran (and that is not waiting to run). */
  changedSinceRun(/** @type {number} */ index, /** @type {(index: number) => {code: string}} */ cellAt) {
    if (this.pending(index)) return false;
    const ran = this.ranCode.get(index);
    return ran !== undefined && ran !== cellAt(index).code;
  }

  /** A cell that has not run in this namespace (and was not stopped) and is not waiting to. */
  isFresh(/** @type {number} */ index) {
    const last = this.history.get(index);
    return !this.pending(index) && (last === undefined || last === "cancelled");
  }

  // ------------------------------------------------------------- requests

  /**
   * @param {RunKind} kind
   * @param {Sink} sink
   * @param {Partial<Run>} fields
   * @returns {Run}
   */
  submit(kind, sink, fields = {}) {
    /** @type {(run: Run) => void} */
    let resolve = () => {};
    const ended = new Promise((r) => (resolve = r));
    /** @type {Run} */
    const run = { id: this.nextId++, kind, cell: null, state: "queued", reason: "", answer: null, sink, ended: /** @type {Promise<Run>} */ (ended), resolve, ...fields };
    this.queue.push(run);
    if (run.cell !== null) this.latest.set(run.cell, run);
    if (this.kernel.state === "error") this.finish(run, "error", `Python is not available: ${this.kernel.message}`);
    return run;
  }

  /**
   * Queue a cell, after the cells above it that have not run in this namespace.
   * A cell already waiting to run is not queued twice.
   * @param {number} index
   * @param {(index: number) => {code: string, sink: Sink}} cellAt  the cell's code (read when queued) and its output
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
  runAll(/** @type {(index: number) => {code: string, sink: Sink}} */ cellAt) {
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
   * @param {(index: number) => {code: string, sink: Sink}} cellAt
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

  /** @param {number} index @param {(index: number) => {code: string, sink: Sink}} cellAt */
  queueCell(index, cellAt) {
    const { code, sink } = cellAt(index);
    return this.submit("cell", sink, { cell: index, code });
  }

  /** The live pictures follow the learner's code: they run again after another cell's run. */
  queueAutoReruns(/** @type {number | null} */ except, /** @type {(index: number) => {code: string, sink: Sink}} */ cellAt) {
    for (const i of this.auto) {
      if (i === except || this.pending(i, "queued")) continue;
      this.queueCell(i, cellAt);
    }
  }

  // ------------------------------------------------------------ stop, restart

  /**
   * Stop whatever Python is doing and cancel everything that waits. With an
   * interrupt buffer Python gets KeyboardInterrupt and the namespace is kept;
   * if it does not answer within the grace period (code stuck outside the
   * interpreter loop: time.sleep, a JavaScript loop), or without a buffer,
   * the worker is replaced.
   */
  stop() {
    for (const run of this.queue.filter((r) => r.state === "queued")) this.finish(run, "cancelled", `${STOPPED} before it ran`);
    const running = this.running;
    if (!running) return this.changed();
    if (!this.transport.canInterrupt) {
      this.replaceWorker("Python was stopped and restarted: the namespace was reset (earlier cells re-run when needed)");
      return;
    }
    if (this.stopping) return this.changed();
    this.stopping = true;
    this.transport.interrupt();
    const { stopGraceMs, stopResendMs } = protocol.LIMITS;
    // Python reads (and clears) the signal between bytecodes; now and then a
    // restored interpreter reads one and raises nothing: send it again while
    // the run goes on.
    for (let t = stopResendMs; t < stopGraceMs; t += stopResendMs) {
      this.stopTimers.push(this.timers.setTimeout(() => {
        if (this.running === running && !this.transport.signalPending()) this.transport.interrupt();
      }, t));
    }
    this.stopTimers.push(this.timers.setTimeout(() => {
      if (this.running === running) this.replaceWorker("Python did not respond to Stop, so it was restarted: the namespace was reset");
    }, stopGraceMs));
    this.changed();
  }

  /**
   * Empty the namespace. When Python is idle the same interpreter forgets its
   * names; when it is busy, loading or failed, the worker is replaced (a
   * failed start is retried).
   */
  restart() {
    if (this.kernel.state === "ready" && !this.busy) {
      this.history.clear();
      this.ranCode.clear();
      this.ranOrder.clear();
      const run = this.submit("reset", {});
      run.ended.then(() => {
        this.kernel.note = "Python restarted: the namespace is empty (imported modules and patched built-ins stay: reload the page for a fresh interpreter)";
        this.changed();
      });
      this.pump();
      return;
    }
    this.replaceWorker(this.kernel.state === "error" ? "" : "Python was restarted: the namespace is empty", true);
  }

  /**
   * Terminate the worker and start another. The running run is interrupted,
   * waiting runs are cancelled. Cells that ran must run again to define their
   * names (they are fresh again); a stopped cell stays stopped, unless the
   * learner asked for a clean slate (`forgetAll`, Restart).
   * @param {string} reason  shown in the status bar and the interrupted cell
   */
  replaceWorker(reason, forgetAll = false) {
    this.clearStopTimers();
    const running = this.running;
    if (running) this.finish(running, "interrupted", reason || "Python was restarted");
    for (const run of [...this.queue]) this.finish(run, "cancelled", reason || "Python was restarted");
    for (const [index, state] of [...this.history]) {
      if (forgetAll || (state !== "interrupted" && state !== "cancelled")) {
        this.history.delete(index);
        this.ranCode.delete(index);
        this.ranOrder.delete(index);
      }
    }
    this.kernel = { ...this.kernel, state: "loading", step: 0, message: protocol.BOOT_STEPS[0], note: reason, restarts: this.kernel.restarts + 1 };
    this.transport.replace();
    this.changed();
  }

  clearStopTimers() {
    for (const handle of this.stopTimers) this.timers.clearTimeout(handle);
    this.stopTimers = [];
    this.stopping = false;
  }

  // ---------------------------------------------------------- from the worker

  /** A worker message (already checked by protocol.asWorkerMessage). @param {protocol.WorkerMessage} msg */
  receive(msg) {
    if (msg.type === "status") return this.onStatus(msg);
    if (msg.type === "fatal") return this.replaceWorker(`Python crashed (${msg.message}) and was restarted: the namespace was reset`);
    const running = this.running;
    if (!running || msg.id !== running.id) return; // a run that was already given up (Stop's restart)
    const sink = running.sink;
    if (msg.type === "stream") sink.stream?.(msg.name, msg.text);
    else if (msg.type === "display" || msg.type === "result") sink.bundle?.(msg.data, msg.type, msg.display_id, msg.update);
    else if (msg.type === "clear") sink.clear?.(msg.wait);
    else if (msg.type === "error") sink.error?.(msg);
    else if (msg.type === "done") {
      running.answer = msg;
      const state = msg.status === "ok" ? "done" : msg.status === "interrupted" ? "interrupted" : "error";
      this.finish(running, state, state === "interrupted" ? STOPPED : "");
      this.pump();
    }
  }

  /** @param {protocol.StatusMessage} msg */
  onStatus(msg) {
    const was = this.kernel.state;
    this.kernel = { ...this.kernel, state: msg.state, message: msg.message, step: msg.step, steps: msg.steps };
    if (msg.state === "ready") this.kernel.restored = msg.restored || "";
    if (msg.state === "error") {
      for (const run of [...this.queue]) this.finish(run, "error", `Python is not available: ${msg.message}`);
    }
    if (was !== msg.state || msg.state === "loading") this.changed();
    this.pump();
  }

  /** The worker script failed (it could not load, or threw outside a request). @param {string} message */
  onWorkerError(message) {
    if (this.kernel.state !== "loading") return;
    this.onStatus(protocol.status("error", 0, `the Python worker failed: ${message}`, Date.now()));
  }

  // ----------------------------------------------------------------- internals

  /** Send the next queued run when Python is ready and idle. */
  pump() {
    if (this.kernel.state !== "ready" || this.running || !this.queue.length) return this.changed();
    const run = this.queue[0];
    run.state = "running";
    this.kernel.note = "";
    run.sink.start?.();
    if (run.kind === "checks") this.transport.send(protocol.check(run.id, run.blocks || [], run.names || []));
    else if (run.kind === "reset") this.transport.send(protocol.reset(run.id));
    else if (run.kind === "complete") this.transport.send(protocol.complete(run.id, run.code || "", run.cursor ?? 0));
    // Code that is no cell's (runCode) is named "code", never a number a cell could have.
    else this.transport.send(protocol.run(run.id, run.code || "", run.kind === "cell" && run.cell !== null ? protocol.cellName(run.cell) : "code"));
    this.changed();
  }

  /** @param {Run} run @param {RunState} state @param {string} reason */
  finish(run, state, reason) {
    if (FINAL.has(run.state)) return;
    const wasRunning = run.state === "running";
    run.state = state;
    run.reason = reason;
    this.queue.splice(this.queue.indexOf(run), 1);
    if (wasRunning) this.clearStopTimers();
    if (run.kind === "cell" && run.cell !== null) {
      this.ended[run.cell] += 1;
      // A cancelled run leaves the cell as it was: it did not run.
      if (state !== "cancelled" || !this.history.has(run.cell)) this.history.set(run.cell, state);
      if (wasRunning) {
        this.ranCode.set(run.cell, run.code || "");
        this.ranOrder.set(run.cell, this.finishedRuns + 1);
      }
      if (wasRunning && state === "interrupted" && !run.answer) run.sink.error?.({ traceback: run.reason });
    }
    if (run.kind === "reset" && state === "done") {
      this.history.clear();
      this.ranCode.clear();
      this.ranOrder.clear();
    }
    if (wasRunning && run.kind !== "complete") { // a completion runs none of the learner's code
      this.finishedRuns += 1;
      run.sink.end?.();
    }
    run.resolve(run);
  }
}
