// @ts-check
// The run queue: every run's one state, the queue that sends runs to the worker one at a time
// (`pump`), how a run ends (`finish`) and what the page remembers of each cell's runs in this
// namespace. It is the state the views are drawn from and the base of the Scheduler
// (scheduler.js), which adds the requests; Stop and Restart (worker_lifecycle.js) and the worker's
// messages (worker_messages.js) act on it. It has no DOM.
//
//   queued ──> running ──> done | error | interrupted
//     └──────────────────> cancelled        (Stop, Restart or a crash before it started)
//
// Runs wait here, in the page, and go to the worker one at a time, so Stop cancels what is
// queued without asking the worker, and interrupts only what is running.

import * as protocol from "../protocol.js";
import { REASON, reasonText } from "./reasons.js";

/**
 * @typedef {"queued" | "running" | "done" | "error" | "interrupted" | "cancelled"} RunState
 * @typedef {"cell" | "code" | "checks" | "reset" | "complete"} RunKind
 * @typedef {"loading" | "ready" | "error"} KernelState
 * @typedef {import("./reasons.js").Reason} Reason
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
 * @property {Reason} cause  why it was cancelled, interrupted or failed without Python (REASON.none otherwise): compare this
 * @property {string} reason  the words of `cause` (reasons.js), to show ("" for REASON.none)
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
 *
 * @typedef {{state: KernelState, message: string, step: number, steps: number, restored: protocol.SnapshotSource,
 *   note: string, restarts: number}} KernelStatus  what Python is doing, as the worker last said, and the bar's note
 */

export const FINAL = new Set(["done", "error", "interrupted", "cancelled"]);

export class RunQueue {
  /**
   * @param {Transport} transport
   * @param {number} cells  how many cells the page has
   * @param {Timers} timers  Stop's timers (fake ones in node --test)
   */
  constructor(transport, cells, timers) {
    this.transport = transport;
    this.cellCount = cells;
    this.timers = timers;
    /** @type {KernelStatus} */
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
    // Stop's state lives with the queue because it is aimed at the running run: it ends with it (`finish`).
    this.stopping = false;
    /** @type {any[]} */
    this.stopTimers = [];
    this.nextId = 1;
    this.finishedRuns = 0; // runs that ran and ended (not cancelled)
    /** @type {Set<(s: RunQueue) => void>} */
    this.listeners = new Set();
  }

  /** @param {(s: this) => void} listener  called after every change */
  subscribe(listener) {
    // changed() hands each listener `this`, so the Scheduler's listeners get the Scheduler.
    const heard = /** @type {(s: RunQueue) => void} */ (listener);
    this.listeners.add(heard);
    return () => this.listeners.delete(heard);
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

  /**
   * The state of the cell's latest run, "idle" before its first: what its toolbar shows.
   * @param {number} index @returns {RunState | "idle"}
   */
  cellState(index) {
    return this.latest.get(index)?.state ?? "idle";
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

  /** The namespace was emptied: no cell has run in it. */
  forgetRuns() {
    this.history.clear();
    this.ranCode.clear();
    this.ranOrder.clear();
  }

  /**
   * Queue a run (it fails at once if Python could not start).
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
    const run = { id: this.nextId++, kind, cell: null, state: "queued", cause: REASON.none, reason: "", answer: null, sink, ended: /** @type {Promise<Run>} */ (ended), resolve, ...fields };
    this.queue.push(run);
    if (run.cell !== null) this.latest.set(run.cell, run);
    if (this.kernel.state === "error") this.finish(run, "error", REASON.unavailable, this.kernel.message);
    return run;
  }

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

  /**
   * End a run (a run already final stays as it is).
   * @param {Run} run @param {RunState} state
   * @param {Reason} [cause]  why, when the runtime ended it rather than Python
   * @param {string} [detail]  what the worker said, for the causes whose words include it
   */
  finish(run, state, cause = REASON.none, detail = "") {
    if (FINAL.has(run.state)) return;
    const wasRunning = run.state === "running";
    run.state = state;
    run.cause = cause;
    run.reason = reasonText(cause, detail);
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
    if (run.kind === "reset" && state === "done") this.forgetRuns();
    if (wasRunning && run.kind !== "complete") { // a completion runs none of the learner's code
      this.finishedRuns += 1;
      run.sink.end?.();
    }
    run.resolve(run);
  }

  /** Stop's timers are for the run it was aimed at: called when that run ends or the worker goes. */
  clearStopTimers() {
    for (const handle of this.stopTimers) this.timers.clearTimeout(handle);
    this.stopTimers = [];
    this.stopping = false;
  }
}
