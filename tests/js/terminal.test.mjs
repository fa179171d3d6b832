// Streams read as a terminal shows them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { overwriteReturns, plain, TerminalLine } from "../../src/pyodide_cells/js/page/terminal.js";

test("a carriage return overwrites its line from the start", () => {
  assert.equal(overwriteReturns("50%\r100%"), "100%");
  assert.equal(overwriteReturns("abcdef\rXY"), "XYcdef");
  assert.equal(overwriteReturns("a\rb\nc"), "b\nc");
});

test("colour codes and window titles are dropped; Windows line ends are newlines", () => {
  assert.equal(plain("\x1b[31mred\x1b[0m\r\n"), "red\n");
  assert.equal(plain("\x1b]0;title\x07text"), "text");
});

test("fed in pieces, a progress bar stays one line and finished lines are final", () => {
  const line = new TerminalLine();
  assert.deepEqual(line.feed("10%"), { finished: "", open: "10%" });
  assert.deepEqual(line.feed("\r20%"), { finished: "", open: "20%" });
  assert.deepEqual(line.feed("\r100%\nnext"), { finished: "100%\n", open: "next" });
  // Many rewrites keep only one line's worth of raw text.
  for (let i = 0; i < 1000; i++) line.feed(`\r${i}`);
  assert.ok(line.raw.length < 20, line.raw);
});
