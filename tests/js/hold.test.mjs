// A run's first output is held for a moment and drawn in one piece (hold.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { holdFirstOutput } from "../../src/pyodide_cells/js/page/hold.js";
import { fakeTimers } from "./fake_timers.mjs";

/** A sink that records every call it is given, in order. */
function recorder() {
  const calls = [];
  const sink = {
    start: () => calls.push("start"),
    end: () => calls.push("end"),
    stream: (name, text) => calls.push(`${name}:${text}`),
    bundle: (data, kind) => calls.push(`${kind}:${data["text/plain"]}`),
    clear: (wait) => calls.push(`clear:${wait}`),
    error: (msg) => calls.push(`error:${msg.traceback}`),
  };
  return { sink, calls };
}

test("a quick run's pieces reach the output area together, in order, when it ends", () => {
  const timers = fakeTimers();
  const { sink, calls } = recorder();
  const held = holdFirstOutput(sink, 50, timers);
  held.start();
  held.stream("stdout", "one\n");
  assert.deepEqual(calls, ["start"], "the first piece waits");
  assert.deepEqual(timers.pending, [50]);
  held.stream("stdout", "two\n");
  held.bundle({ "text/plain": "3" }, "result");
  held.end();
  assert.deepEqual(calls, ["start", "stdout:one\n", "stdout:two\n", "result:3", "end"]);
  assert.deepEqual(timers.pending, [], "the end cancels the timer");
});

test("a long run's first output shows when the moment is up, and the rest passes at once", () => {
  const timers = fakeTimers();
  const { sink, calls } = recorder();
  const held = holdFirstOutput(sink, 50, timers);
  held.start();
  held.stream("stdout", "training...\n");
  held.clear(true);
  timers.fireUpTo(50);
  assert.deepEqual(calls, ["start", "stdout:training...\n", "clear:true"]);
  held.stream("stderr", "late\n");
  assert.deepEqual(calls.at(-1), "stderr:late\n", "only the first output waits");
  assert.deepEqual(timers.pending, []);
  held.end();
  assert.deepEqual(calls.at(-1), "end");
});

test("a stopped run's error, given after the run, comes before its end", () => {
  const timers = fakeTimers();
  const { sink, calls } = recorder();
  const held = holdFirstOutput(sink, 50, timers);
  held.start();
  held.error({ traceback: "Stop was pressed" });
  held.end();
  assert.deepEqual(calls, ["start", "error:Stop was pressed", "end"]);
});

test("a run that shows nothing sets no timer", () => {
  const timers = fakeTimers();
  const { sink, calls } = recorder();
  const held = holdFirstOutput(sink, 50, timers);
  held.start();
  held.end();
  assert.deepEqual(calls, ["start", "end"]);
  assert.deepEqual(timers.pending, []);
});
