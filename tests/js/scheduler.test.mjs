// The run scheduler's transitions, driven with a fake transport and fake timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { REASON, Scheduler, reasonText } from "../../src/pyodide_cells/js/page/scheduler.js";
import * as protocol from "../../src/pyodide_cells/js/protocol.js";
import { fakeTimers } from "./fake_timers.mjs";
import { describe } from "../../src/pyodide_cells/js/page/statusbar.js";

/** A transport that records what the scheduler asks of the worker. */
function fakeTransport({ canInterrupt = true } = {}) {
  return {
    sent: [],
    interrupts: 0,
    replaced: 0,
    pending: false,
    canInterrupt,
    send(request) { this.sent.push(request); },
    interrupt() { this.interrupts += 1; this.pending = true; },
    signalPending() { return this.pending; },
    replace() { this.replaced += 1; },
  };
}

const ready = (s) => s.receive(protocol.status("ready", 4, "Python ready", 0));
const done = (s, status = "ok") => s.receive(protocol.done(s.running.id, status, 1.5, 7));
const cellAt = (i) => ({ code: `cell ${i}`, sink: {} });

function setup(options = {}) {
  const transport = fakeTransport(options);
  const timers = fakeTimers();
  const s = new Scheduler({ transport, cells: 5, auto: options.auto || [], exercises: options.exercises || [], timers });
  return { s, transport, timers };
}

test("runs wait while Python loads, say so, then go one at a time in order", () => {
  const { s, transport } = setup();
  s.runCell(3, cellAt);
  assert.deepEqual(s.queue.map((r) => [r.cell, r.state]), [[0, "queued"], [1, "queued"], [2, "queued"], [3, "queued"]]);
  assert.equal(transport.sent.length, 0);
  ready(s);
  // Only one is running: the others are queued behind it, in page order.
  assert.deepEqual(s.queue.map((r) => r.state), ["running", "queued", "queued", "queued"]);
  assert.deepEqual(transport.sent, [protocol.run(1, "cell 0", "cell 1")]);
  assert.equal(s.ahead(s.queue[2]).cell, 1);
  done(s);
  assert.equal(transport.sent.at(-1).code, "cell 1");
  assert.equal(s.latest.get(0).state, "done");
  assert.equal(s.ended[0], 1);
});

test("one number per cell: the status bar and the traceback's file name are the cell's place on the page, whatever the run", () => {
  const { s, transport } = setup();
  ready(s);
  for (let again = 0; again < 3; again++) {
    s.runCell(2, cellAt); // the third cell, run three times: runs 3, 4 and 5 of this Python
    while (s.running) {
      const { cell } = s.running;
      assert.equal(describe(s.running), `cell ${cell + 1}`);
      assert.equal(transport.sent.at(-1).name, `cell ${cell + 1}`);
      done(s);
    }
  }
  assert.deepEqual(transport.sent.map((r) => r.name), ["cell 1", "cell 2", "cell 3", "cell 3", "cell 3"]);
  s.runCode("1 + 1", {}); // no cell's code: named so that no cell is taken for it
  assert.equal(transport.sent.at(-1).name, "code");
  // A request's name must be a string, or the worker ignores the request.
  assert.equal(protocol.asRequest({ type: "run", id: 9, code: "x", name: 3 }), null);
  assert.equal(protocol.asRequest({ type: "run", id: 9, code: "x", name: "cell 2" })?.name, "cell 2");
});

test("running a cell runs the earlier cells that have not run, once", () => {
  const { s, transport } = setup();
  ready(s);
  s.runCell(1, cellAt);
  done(s); done(s);
  s.runCell(2, cellAt);
  assert.deepEqual(transport.sent.map((r) => r.code), ["cell 0", "cell 1", "cell 2"]);
});

test("Stop interrupts the running cell and cancels everything queued, checks included", async () => {
  const { s, transport, timers } = setup();
  ready(s);
  const checks = s.check([">>> 1\n1\n"], ["x"], cellAt);
  assert.equal(s.running.cell, 0);
  s.stop();
  assert.equal(transport.interrupts, 1);
  assert.equal(checks.state, "cancelled");
  assert.equal(checks.reason, "Stop was pressed before it ran");
  assert.deepEqual(s.queue.map((r) => r.cell), [0]); // only the running one is left
  assert.equal(s.stopping, true);
  s.receive(protocol.done(s.running.id, "interrupted", 3, 2));
  assert.equal(s.latest.get(0).state, "interrupted");
  assert.equal(s.busy, false);
  assert.equal(s.stopping, false);
  assert.equal(timers.count, 0, "the grace timer is gone once Python answered");
  assert.equal((await checks.ended).state, "cancelled");
  // Everything is usable again: Check runs (cell 0 was stopped: it is not re-run on its own).
  const again = s.check([">>> 1\n1\n"], [], cellAt);
  assert.deepEqual(s.queue.map((r) => r.kind), ["cell", "cell", "cell", "cell", "checks"]);
  assert.deepEqual(s.queue.filter((r) => r.kind === "cell").map((r) => r.cell), [1, 2, 3, 4]);
  for (let i = 0; i < 4; i++) done(s);
  s.receive(protocol.done(again.id, "ok", 1, null, { results: [], warnings: [] }));
  assert.equal(again.state, "done");
});

test("Stop during the checks themselves interrupts them", () => {
  const { s, transport } = setup();
  ready(s);
  for (let i = 0; i < 5; i++) s.runCell(i, cellAt);
  while (s.running) done(s);
  const checks = s.check(["b"], [], cellAt);
  assert.equal(s.running, checks);
  assert.equal(transport.sent.at(-1).type, "check");
  s.stop();
  s.receive(protocol.done(checks.id, "interrupted", 1, null, { results: [], warnings: [] }));
  assert.equal(checks.state, "interrupted");
  assert.equal(s.busy, false);
});

test("Python that ignores Stop is replaced after the grace period; the signal is sent again meanwhile", () => {
  const { s, transport, timers } = setup();
  ready(s);
  s.runCell(0, cellAt);
  s.stop();
  transport.pending = false; // Python read the signal and raised nothing
  timers.fireUpTo(protocol.LIMITS.stopResendMs);
  assert.equal(transport.interrupts, 2);
  timers.fireUpTo(protocol.LIMITS.stopGraceMs);
  assert.equal(transport.replaced, 1);
  assert.equal(s.latest.get(0).state, "interrupted");
  assert.equal(s.kernel.state, "loading");
  assert.match(s.kernel.note, /did not respond to Stop/);
});

test("after a restart, a stopped cell is not run again on its own", () => {
  const { s, transport } = setup({ canInterrupt: false });
  ready(s);
  s.runCell(0, cellAt);
  done(s);
  s.runCell(1, cellAt); // an endless loop
  s.stop(); // no interrupt buffer: the worker is replaced
  assert.equal(transport.replaced, 1);
  assert.equal(s.latest.get(1).state, "interrupted");
  ready(s);
  s.runCell(2, cellAt);
  // Cell 0 ran before the restart (its names are gone): it runs again. Cell 1 was stopped: it does not.
  assert.deepEqual(s.queue.map((r) => r.cell), [0, 2]);
  done(s);
  assert.equal(s.running.cell, 2);
  s.stop();
  assert.equal(transport.replaced, 2);
  ready(s);
  s.runCell(3, cellAt);
  assert.deepEqual(s.queue.map((r) => r.cell), [0, 3], "neither stopped cell comes back");
});

test("a failed start fails every run with the reason, and Restart starts Python again", async () => {
  const { s, transport } = setup();
  const pending = s.runCell(1, cellAt);
  s.receive(protocol.status("error", 0, "could not load the labs wheel: HTTP 404", 0));
  const run = await pending;
  assert.equal(run.state, "error");
  assert.match(run.reason, /Python is not available: could not load the labs wheel/);
  const later = await s.runCell(2, cellAt);
  assert.equal(later.state, "error", "a run after the failure does not wait forever");
  s.restart();
  assert.equal(transport.replaced, 1);
  assert.equal(s.kernel.state, "loading");
  s.runCell(0, cellAt);
  ready(s);
  assert.equal(s.running.cell, 0);
});

test("Restart when idle empties the namespace in the same interpreter", async () => {
  const { s, transport } = setup();
  ready(s);
  s.runCell(0, cellAt);
  done(s);
  s.restart();
  assert.equal(transport.sent.at(-1).type, "reset");
  done(s);
  assert.equal(s.history.size, 0);
  assert.equal(transport.replaced, 0);
  s.runCell(1, cellAt);
  assert.deepEqual(s.queue.map((r) => r.cell), [0, 1]);
});

test("a crash replaces the worker, stops the cell that crashed for good and cancels what waits", () => {
  const { s, transport } = setup();
  ready(s);
  s.runCell(2, cellAt);
  s.receive(protocol.fatal(s.running.id, "Maximum call stack size exceeded"));
  assert.equal(transport.replaced, 1);
  assert.deepEqual([0, 1, 2].map((i) => s.latest.get(i).state), ["interrupted", "cancelled", "cancelled"]);
  assert.match(s.latest.get(0).reason, /crashed \(Maximum call stack size exceeded\)/);
  assert.match(s.kernel.note, /crashed/);
  ready(s);
  s.runCell(1, cellAt);
  assert.deepEqual(s.queue.map((r) => r.cell), [1], "the cell that crashed Python is not run again on its own");
});

test("messages for a run that was given up, or for no run, are ignored", () => {
  const { s } = setup();
  ready(s);
  const out = [];
  s.runCell(0, () => ({ code: "x", sink: { stream: (n, t) => out.push(t) } }));
  s.receive(protocol.stream(999, "stdout", "forged"));
  s.receive(protocol.done(999, "ok", 1, 1));
  assert.equal(s.running.cell, 0);
  s.receive(protocol.stream(s.running.id, "stdout", "real"));
  assert.deepEqual(out, ["real"]);
});

test("live pictures run again after another cell, once, without running themselves in a loop", () => {
  const { s } = setup({ auto: [4] });
  ready(s);
  s.runCell(0, cellAt);
  s.runCell(1, cellAt);
  assert.deepEqual(s.queue.map((r) => r.cell), [0, 4, 1]);
  while (s.running) done(s);
  s.runCell(4, cellAt);
  assert.deepEqual(s.queue.map((r) => r.cell), [2, 3, 4]);
});

test("a cell already waiting is not queued twice", () => {
  const { s } = setup();
  s.runCell(0, cellAt);
  s.runCell(0, cellAt);
  assert.equal(s.queue.length, 1);
});

test("the checks run a cell again when its code changed since it ran (an edit, or Reset)", () => {
  const { s, transport } = setup();
  ready(s);
  let code = "old";
  const at = (i) => ({ code: i === 0 ? code : `cell ${i}`, sink: {} });
  for (let i = 0; i < 5; i++) s.runCell(i, at);
  while (s.running) done(s);
  code = "fixed";
  const checks = s.check(["b"], [], at);
  assert.deepEqual(s.queue.map((r) => r.kind === "cell" ? r.cell : r.kind), [0, "checks"]);
  done(s);
  assert.equal(transport.sent.at(-1).type, "check");
  s.receive(protocol.done(checks.id, "ok", 1, null, { results: [], warnings: [] }));
  s.check(["b"], [], at); // nothing changed since: only the checks
  assert.deepEqual(s.queue.map((r) => r.kind), ["checks"]);
});

test("after an earlier cell runs again, the checks run the later exercises again (they may build on it)", () => {
  const { s } = setup({ exercises: [1, 3] });
  ready(s);
  let code = "class Value: ...";
  const at = (i) => ({ code: i === 1 ? code : `cell ${i}`, sink: {} });
  for (let i = 0; i < 5; i++) s.runCell(i, at);
  while (s.running) done(s);
  code = "class Value:  # edited";
  s.check(["b"], [], at);
  // Exercise 1 (cell 1) changed: exercise 2 (cell 3), which extends its Value, runs after it; cells 2 and 4 do not.
  assert.deepEqual(s.queue.map((r) => r.kind === "cell" ? r.cell : r.kind), [1, 3, "checks"]);
});

test("an exercise that ran before a cell above it ran again runs again with the checks", () => {
  const { s } = setup({ exercises: [1, 3] });
  ready(s);
  for (let i = 0; i < 5; i++) s.runCell(i, cellAt);
  while (s.running) done(s);
  s.runCell(1, cellAt); // the learner runs exercise 1 again with ▶ Run (unchanged code)
  done(s);
  s.check(["b"], [], cellAt);
  // Exercise 2 (cell 3) ran before exercise 1's latest run: it runs again; nothing else does.
  assert.deepEqual(s.queue.map((r) => r.kind === "cell" ? r.cell : r.kind), [3, "checks"]);
  while (s.running) done(s);
  s.check(["b"], [], cellAt); // all in order now: only the checks
  assert.deepEqual(s.queue.map((r) => r.kind), ["checks"]);
});

test("a stopped cell that the learner then fixes runs with the checks, even after a restart", () => {
  const { s } = setup({ canInterrupt: false });
  ready(s);
  let code = "while True: pass";
  const at = (i) => ({ code: i === 0 ? code : `cell ${i}`, sink: {} });
  s.runCell(0, at);
  s.stop();
  ready(s);
  s.check(["b"], [], at); // unchanged: the stopped cell does not run again on its own
  assert.deepEqual(s.queue.map((r) => r.kind === "cell" ? r.cell : r.kind), [1, 2, 3, 4, "checks"]);
  s.stop();
  code = "fixed = True";
  s.check(["b"], [], at);
  assert.equal(s.queue[0].cell, 0);
});

test("a cell's output hears when its run starts and when it ends, once each; a cancelled run neither", () => {
  const { s } = setup();
  const heard = [];
  const at = (i) => ({ code: `cell ${i}`, sink: { start: () => heard.push(`start ${i}`), end: () => heard.push(`end ${i}`) } });
  ready(s);
  s.runCell(2, at);
  done(s);
  done(s, "error");
  s.stop(); // cell 2 runs (it is interrupted); nothing else waits
  s.receive(protocol.done(s.running.id, "interrupted", 3, 2));
  s.runCell(3, at);
  s.runCell(4, at);
  s.restart(); // cell 3 runs and is interrupted; cell 4 never started
  assert.deepEqual(heard, ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
});

test("the checks run the cells up to the last exercise, not the demonstrations below it", () => {
  const { s, transport } = setup({ exercises: [0, 2] });
  ready(s);
  const checks = s.check(["b"], [], cellAt);
  assert.deepEqual(s.queue.map((r) => r.kind === "cell" ? r.cell : r.kind), [0, 1, 2, "checks"]);
  done(s); done(s); done(s);
  assert.equal(transport.sent.at(-1).type, "check");
  assert.equal(s.running, checks);
});

test("with the build's list, the checks run only the cells they need, in order", () => {
  const transport = fakeTransport({});
  const s = new Scheduler({ transport, cells: 5, exercises: [0, 3], checkCells: [0, 3], timers: fakeTimers() });
  ready(s);
  s.check(["b"], [], cellAt);
  assert.deepEqual(s.queue.map((r) => r.kind === "cell" ? r.cell : r.kind), [0, 3, "checks"]);
});

test("a completion waits for the running cell, then asks Python; it runs no code of the learner's", async () => {
  const { s, transport } = setup();
  ready(s);
  s.runCell(0, cellAt);
  const run = s.complete("x = Val", 7);
  assert.equal(describe(s.ahead(run)), "cell 1"); // what the toolbar says it waits for
  assert.equal(transport.sent.length, 1); // not sent while the cell runs
  done(s);
  assert.deepEqual(transport.sent.at(-1), protocol.complete(run.id, "x = Val", 7));
  assert.equal(describe(s.running), "a completion");
  const completions = { from: 4, options: [{ label: "Value", type: "class" }] };
  s.receive(protocol.done(run.id, "ok", 0.4, null, { completions }));
  assert.deepEqual((await run.ended).answer.completions, completions);
  assert.equal(s.finishedRuns, 1); // the cell's run only
  // A request the worker would not understand is not one: a cursor outside the code.
  assert.equal(protocol.asRequest({ type: "complete", id: 3, code: "ab", cursor: 5 }), null);
  assert.equal(protocol.asRequest(protocol.complete(3, "ab", 2))?.type, "complete");
});

test("a run's cause is a code and its reason the code's words, looked up in one place", async () => {
  const { s, timers } = setup();
  ready(s);
  s.runCell(1, cellAt);
  s.stop();
  const [first, second] = [s.latest.get(0), s.latest.get(1)];
  assert.equal(second.cause, REASON.stoppedBeforeRun);
  assert.equal(second.reason, reasonText(REASON.stoppedBeforeRun));
  s.receive(protocol.done(first.id, "interrupted", 3, 2));
  assert.equal(first.cause, REASON.stopped);
  assert.equal(first.reason, reasonText(REASON.stopped));
  // Stop unanswered: the grace timer replaces the worker, and says why.
  s.runCell(2, cellAt); // cell 1 first: it did not run
  s.stop();
  timers.fireUpTo(protocol.LIMITS.stopGraceMs);
  assert.deepEqual([1, 2].map((i) => s.latest.get(i).cause), [REASON.stopUnanswered, REASON.stoppedBeforeRun]);
  assert.equal(s.kernel.note, reasonText(REASON.stopUnanswered));
  // A failed start: every run fails with the failed step's message as the detail.
  s.receive(protocol.status("error", 0, "no network", 0));
  const failed = await s.runCell(3, cellAt);
  assert.equal(failed.cause, REASON.unavailable);
  assert.equal(failed.reason, "Python is not available: no network");
  // Restart after a failed start tries again: no note, the bar says it restarts.
  s.restart();
  assert.equal(s.kernel.note, "");
  ready(s);
  const ran = s.runCode("1", {});
  done(s);
  assert.equal((await ran).cause, REASON.none, "a run Python answered has no cause of the runtime's");
  assert.equal((await ran).reason, "");
});

test("a cell's state is the scheduler's, read without the page: idle, then its latest run's", () => {
  const { s } = setup();
  assert.equal(s.cellState(0), "idle");
  s.runCell(1, cellAt);
  assert.deepEqual([0, 1, 2].map((i) => s.cellState(i)), ["queued", "queued", "idle"]);
  ready(s);
  assert.equal(s.cellState(0), "running");
  s.receive(protocol.done(s.running.id, "error", 1, 1));
  assert.deepEqual([s.cellState(0), s.cellState(1), s.ended[0]], ["error", "running", 1]);
});
