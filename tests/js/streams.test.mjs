// When the worker sends Python's writes to the page (streams.js), on a clock the test moves by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { StreamBatcher } from "../../src/pyodide_cells/js/worker/streams.js";
import { LIMITS } from "../../src/pyodide_cells/js/protocol.js";

/** A batcher on a hand-moved clock, and the messages it sent. */
function batcher(limits = LIMITS) {
  const sent = [];
  let now = 1000;
  const b = new StreamBatcher((name, text) => sent.push({ name, text }), limits, () => now);
  return { b, sent, advance: (ms) => (now += ms), text: () => sent.map((m) => m.text).join("") };
}

/** The writes of print(i) for i in range(n), as Python's print makes them. */
function printLoop(b, n, name = "stdout") {
  for (let i = 0; i < n; i++) {
    b.write(name, String(i));
    b.write(name, "\n");
  }
}

test("four prints in a row, then nothing for a long time: all four are sent before the long computation", () => {
  const { b, text } = batcher();
  printLoop(b, 4);
  // The clock does not move and nothing else is called: this is all the page gets while Python computes.
  assert.equal(text(), "0\n1\n2\n3\n");
  assert.equal(b.holding, false);
});

test("print('a', 'b') in a loop of a few lines is sent as it is written", () => {
  const { b, text } = batcher();
  for (let i = 0; i < 5; i++) for (const w of ["step", " ", String(i), "\n"]) b.write("stdout", w);
  assert.equal(text(), "step 0\nstep 1\nstep 2\nstep 3\nstep 4\n");
});

test("a print loop of 100,000 lines sends a bounded number of messages, and every character", () => {
  const { b, sent, advance, text } = batcher();
  const n = 100_000;
  for (let i = 0; i < n; i++) {
    b.write("stdout", String(i));
    b.write("stdout", "\n");
    if (i % 100 === 99) advance(1); // Pyodide prints about 100 lines a millisecond: the loop lasts 1 s
  }
  b.flush(); // the run's end
  // At once: the bucket's first messages; then one per streamFlushMs of the loop, and one per streamFlushChars.
  const bound = LIMITS.streamEagerMessages + n / 100 / LIMITS.streamFlushMs + text().length / LIMITS.streamFlushChars + 1;
  assert.ok(sent.length <= bound, `${sent.length} messages for ${2 * n} writes, more than ${bound}`);
  assert.equal(text(), Array.from({ length: n }, (_, i) => `${i}\n`).join(""));
});

test("once the bucket is spent, writes are held until a write that earned a message, and sent in one", () => {
  const { b, sent, advance } = batcher();
  printLoop(b, LIMITS.streamEagerMessages); // 2 writes a line: the bucket is spent half way
  assert.equal(sent.length, LIMITS.streamEagerMessages);
  assert.equal(b.holding, true);
  advance(LIMITS.streamFlushMs - 1);
  b.write("stdout", "late\n");
  assert.equal(sent.length, LIMITS.streamEagerMessages, "no message earned yet: held");
  advance(1);
  b.write("stdout", "next\n");
  assert.equal(sent.length, LIMITS.streamEagerMessages + 1);
  assert.ok(sent.at(-1).text.endsWith("late\nnext\n"), sent.at(-1).text);
  assert.equal(b.holding, false);
});

test("the end of a print loop followed by a long computation is sent by a tick once a message is earned", () => {
  const { b, sent, advance, text } = batcher();
  printLoop(b, 1000);
  assert.equal(b.holding, true);
  b.tick();
  const before = sent.length;
  assert.equal(b.holding, true, "a tick before a message is earned holds");
  advance(LIMITS.streamFlushMs);
  b.tick();
  assert.equal(sent.length, before + 1);
  assert.equal(text(), Array.from({ length: 1000 }, (_, i) => `${i}\n`).join(""));
  b.tick();
  assert.equal(sent.length, before + 1, "nothing held, nothing sent");
});

test("a batch that reaches streamFlushChars is sent at once, even with the bucket spent", () => {
  const { b, sent } = batcher({ ...LIMITS, streamEagerMessages: 1, streamFlushChars: 10 });
  b.write("stdout", "a\n");
  b.write("stdout", "bbbb\n");
  assert.equal(sent.length, 1);
  b.write("stdout", "cccc\n");
  assert.deepEqual(sent.map((m) => m.text), ["a\n", "bbbb\ncccc\n"]);
});

test("stdout and stderr keep their order: a switch sends what the other stream held", () => {
  const { b, sent } = batcher({ ...LIMITS, streamEagerMessages: 1 });
  b.write("stdout", "a\n");
  b.write("stdout", "b\n");
  b.write("stderr", "oops\n");
  b.write("stdout", "c\n");
  b.flush();
  assert.deepEqual(sent, [
    { name: "stdout", text: "a\n" },
    { name: "stdout", text: "b\n" },
    { name: "stderr", text: "oops\n" },
    { name: "stdout", text: "c\n" },
  ]);
});

test("a print loop earns no more than the bucket holds: a long quiet spell leaves streamEagerMessages to spend", () => {
  const { b, sent, advance } = batcher();
  advance(3_600_000);
  printLoop(b, LIMITS.streamEagerMessages);
  assert.equal(sent.length, LIMITS.streamEagerMessages);
  assert.equal(b.holding, true);
});

test("a new run's first writes are sent at once, whatever the last run spent", () => {
  const { b, sent } = batcher();
  printLoop(b, 100);
  b.flush();
  b.reset();
  const before = sent.length;
  b.write("stdout", "first\n");
  assert.equal(sent.length, before + 1);
});

test("a flush with nothing held sends nothing and spends no message", () => {
  const { b, sent } = batcher({ ...LIMITS, streamEagerMessages: 1 });
  b.flush();
  b.write("stdout", "");
  b.write("stdout", "a\n");
  assert.deepEqual(sent, [{ name: "stdout", text: "a\n" }]);
});
