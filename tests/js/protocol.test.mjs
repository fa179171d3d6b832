// The protocol's messages, and what each side refuses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
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

test("the init message and Stop's buffer are built here, and the worker's check takes them", () => {
  const { port1, port2 } = new MessageChannel();
  const interrupt = protocol.interruptBuffer(true);
  assert.ok(interrupt.buffer instanceof SharedArrayBuffer);
  assert.equal(interrupt.byteLength, protocol.INTERRUPT_BYTES);
  assert.equal(interrupt[protocol.SIGNAL], protocol.NO_SIGNAL);
  const message = protocol.init(port2, interrupt, "never");
  assert.deepEqual(message, { type: "init", port: port2, interruptBuffer: interrupt.buffer, siteSnapshot: "never" });
  assert.equal(protocol.asInit(message), message);
  // Not isolated: no buffer, and Stop replaces the worker.
  assert.equal(protocol.interruptBuffer(false), null);
  assert.equal(protocol.asInit(protocol.init(port2, null)).interruptBuffer, null);
  assert.equal(protocol.init(port2, null).siteSnapshot, "auto");
  for (const bad of [null, { type: "init" }, { type: "init", port: {} }, { type: "run", port: port2 },
    { type: "init", port: port2, interruptBuffer: new ArrayBuffer(1) }]) {
    assert.equal(protocol.asInit(bad), null, String(bad && bad.type));
  }
  port1.close();
  port2.close();
});

test("?plain-start travels in the worker's address, which the worker reads", () => {
  const script = new URL("https://example.org/_static/pyodide_cells/worker.js?v=1a2b3c4d");
  const plain = protocol.workerURL(script, true);
  assert.equal(plain.searchParams.get("v"), "1a2b3c4d");
  assert.ok(protocol.isPlainStart(plain.href));
  assert.equal(protocol.workerURL(script, false).href, script.href);
  assert.ok(!protocol.isPlainStart(script.href));
  assert.equal(script.search, "?v=1a2b3c4d", "the script's URL is not changed");
});

test("the kinds the Python runner emits are the ones the protocol declares, and each becomes its message", () => {
  const runner = readFileSync(new URL("../../src/pyodide_cells/python/runner.py", import.meta.url), "utf8");
  const emitted = new Set([...runner.matchAll(/emit\(\s*"([a-z_]+)"/g)].map((m) => m[1]));
  assert.deepEqual([...emitted].sort(), [...protocol.RUNNER_KINDS].sort());
  const data = { "text/plain": "2" };
  assert.deepEqual(protocol.runnerMessage(3, "result", { data, execution_count: 1 }), protocol.display(3, "result", data));
  assert.deepEqual(protocol.runnerMessage(3, "display", { data, display_id: "d", update: true }), protocol.display(3, "display", data, "d", true));
  assert.deepEqual(protocol.runnerMessage(3, "clear", { wait: true }), protocol.clear(3, true));
  assert.deepEqual(protocol.runnerMessage(3, "error", { ename: "E", evalue: "v", traceback: "t" }), protocol.error(3, "E", "v", "t"));
  for (const kind of ["stream", "flush", "print"]) assert.equal(protocol.runnerMessage(3, kind, {}), null, kind);
  for (const kind of protocol.RUNNER_KINDS) {
    const msg = protocol.runnerMessage(3, kind, { data, wait: false, ename: "E", evalue: "", traceback: "" });
    if (msg) assert.deepEqual(protocol.asWorkerMessage(msg), msg, kind);
  }
});

test("the page's Python state is published as an event the reader's code checks, not read back from the page", () => {
  const target = new EventTarget();
  const seen = [];
  target.addEventListener(protocol.PYODIDE_STATE_EVENT, (event) => seen.push(protocol.asPyodideState(event)));
  for (const state of ["loading", "ready", "running", "error"]) target.dispatchEvent(protocol.pyodideStateEvent(state));
  assert.deepEqual(seen, ["loading", "ready", "running", "error"]);
  for (const bad of [new Event(protocol.PYODIDE_STATE_EVENT), new CustomEvent(protocol.PYODIDE_STATE_EVENT, { detail: { state: "done" } }),
    new CustomEvent("other", { detail: { state: "ready" } })]) {
    assert.equal(protocol.asPyodideState(bad), null, bad.type);
  }
  assert.equal(protocol.PYODIDE_STATE_ATTRIBUTE, "data-pyodide-state"); // cells.css and the browser tests name it
});

test("the entry point re-exports every part of the contract, and each part is one file of protocol/", () => {
  const dir = new URL("../../src/pyodide_cells/js/protocol/", import.meta.url);
  const entry = readFileSync(new URL("../protocol.js", dir), "utf8");
  const parts = readdirSync(dir).filter((name) => name.endsWith(".js"));
  assert.deepEqual(parts.sort(), [...entry.matchAll(/export \* from "\.\/protocol\/([a-z]+\.js)"/g)].map((m) => m[1]).sort());
});
