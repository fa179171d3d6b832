// The protocol's messages, and what each side refuses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as protocol from "../../src/pyodide_cells/js/protocol.js";

test("every request the page builds is accepted by the worker's check, and nothing else", () => {
  for (const request of [protocol.run(1, "x = 1"), protocol.check(2, [">>> 1\n1\n"], ["Value"]), protocol.reset(3)]) {
    assert.deepEqual(protocol.asRequest(request), request);
  }
  for (const bad of [null, "run", {}, { type: "run", id: 1 }, { type: "run", id: "1", code: "" }, { type: "check", id: 1, blocks: [1] }, { type: "eval", id: 1 }]) {
    assert.equal(protocol.asRequest(bad), null, JSON.stringify(bad));
  }
});

test("every message the worker builds is accepted by the page's check, and malformed ones are not", () => {
  const good = [
    protocol.status("loading", 1, "Downloading", 0),
    protocol.stream(1, "stdout", "hi\n"),
    protocol.display(1, "result", { "text/plain": "2" }),
    protocol.display(1, "display", { "text/html": "<b>x</b>" }),
    protocol.display(1, "display", { "text/plain": "1" }, "loss", true),
    protocol.clear(1, true),
    protocol.error(1, "ValueError", "bad", "Traceback…"),
    protocol.done(1, "interrupted", 2, null),
    protocol.done(1, "ok", 2, 3, { results: [], warnings: [] }),
    protocol.fatal(1, "Aborted()"),
  ];
  for (const msg of good) assert.deepEqual(protocol.asWorkerMessage(msg), msg);
  for (const bad of [{ type: "checks", id: 1, results: [] }, { type: "done", id: 1, status: "passed" }, { type: "stream", id: 1, name: "stdin", text: "" }, { type: "start", id: 1 }, { type: "display", id: 1, data: {}, display_id: 7 }, { type: "clear", id: 1 }]) {
    assert.equal(protocol.asWorkerMessage(bad), null, JSON.stringify(bad));
  }
});

test("the boot steps are what status messages count", () => {
  assert.equal(protocol.status("ready", 4, "Python ready", 0).steps, protocol.BOOT_STEPS.length);
});

test("the limits come from the one file the Python runner reads too", () => {
  const file = JSON.parse(readFileSync(new URL("../../src/pyodide_cells/limits.json", import.meta.url), "utf8"));
  assert.deepEqual({ ...protocol.LIMITS }, file);
  assert.ok(Object.isFrozen(protocol.LIMITS));
});
