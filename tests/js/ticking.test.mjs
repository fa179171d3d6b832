// The interrupt buffer Python is given (startup/ticking.js), held against Pyodide 0.26.2 in Node:
// its signal is read (and `tick` called) while Python code runs, and Stop's signal still stops it.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { tickingSignal } from "../../src/pyodide_cells/js/worker/startup/ticking.js";
import * as protocol from "../../src/pyodide_cells/js/protocol.js";

const PYODIDE = fileURLToPath(new URL("../../node_modules/pyodide/", import.meta.url));
let pyodide;
before(async () => {
  const { loadPyodide } = await import(new URL("pyodide.mjs", `file://${PYODIDE}`).href);
  pyodide = await loadPyodide({ indexURL: PYODIDE });
});

test("a long pure-Python loop calls tick while it runs, on a host without isolation", () => {
  let ticks = 0;
  pyodide.setInterruptBuffer(tickingSignal(null, () => ticks++));
  pyodide.runPython("x = 0\nfor i in range(100_000):\n    x += i");
  // Measured: one read every 50 iterations or so; a tenth of that is plenty to send held output.
  assert.ok(ticks >= 200, `${ticks} ticks in 100,000 iterations`);
});

test("Stop's signal in the page's shared byte still raises KeyboardInterrupt, and is cleared", () => {
  const interrupt = protocol.interruptBuffer(true);
  assert.ok(interrupt);
  let ticks = 0;
  pyodide.setInterruptBuffer(tickingSignal(interrupt, () => {
    if (++ticks === 10) interrupt[protocol.SIGNAL] = protocol.SIGINT; // Stop, pressed mid-loop
  }));
  assert.throws(() => pyodide.runPython("while True:\n    pass"), /KeyboardInterrupt/);
  assert.equal(interrupt[protocol.SIGNAL], protocol.NO_SIGNAL);
  assert.equal(pyodide.runPython("1 + 1"), 2, "Python answers after the interrupt");
});
