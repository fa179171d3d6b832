// What keyhold.js holds back while a cell's editor loads, and when it lets go (its rules, without
// a browser: the page's window, selection and document are stood in for). That the held keys
// then go into the editor, and the page's shortcuts do not see them, is held by the browser
// tests (tests/browser/test_sandbox.py, "while CodeMirror loads").
import { test } from "node:test";
import assert from "node:assert/strict";

// The page around a cell, as far as keyhold.js reaches: one window's capturing listeners,
// the selection (inside the cell's code, or not), document.execCommand and document.createRange.
const listeners = new Map();
const copied = [];
let selection = null; // {node, from, to} in a text node, or null: nothing selected
globalThis.window = {
  addEventListener: (type, fn, capture) => { assert.equal(capture, true); listeners.set(type, [...(listeners.get(type) || []), fn]); },
  removeEventListener: (type, fn) => {
    const left = (listeners.get(type) || []).filter((f) => f !== fn);
    if (left.length) listeners.set(type, left);
    else listeners.delete(type);
  },
};
/** The event, to every listener the window has for its type (a listener added twice sees it twice). */
const fire = (type, event) => { for (const fn of listeners.get(type) || []) fn(event); };
globalThis.getSelection = () => ({
  get isCollapsed() { return !selection || selection.from === selection.to; },
  get rangeCount() { return selection ? 1 : 0; },
  getRangeAt: () => ({ startContainer: selection.node, startOffset: selection.from, endContainer: selection.node, endOffset: selection.to }),
  selectAllChildren: (node) => { selection = { node: node.text, from: 0, to: node.text.data.length }; },
});
globalThis.document = {
  execCommand: (command) => copied.push(command),
  // The code is one text node here: the characters before (node, offset) are `offset` of them.
  createRange: () => { let end = 0; return { setStart() {}, setEnd(_node, offset) { end = offset; }, toString: () => "x".repeat(end) }; },
};

const { KeyHold } = await import("../../src/pyodide_cells/js/page/keyhold.js");

/** A cell whose code is `code`, and an element outside it (the page's search box). */
function page(code = "def f(x):\n    return x\n") {
  const text = { data: code };
  const pre = { text, contains: (node) => node === text };
  const outside = {};
  const root = { contains: (node) => node !== outside && node !== undefined, querySelector: () => pre };
  selection = null;
  copied.length = 0;
  listeners.clear();
  return { root, text, outside };
}

/** A key press as the browser gives it; `seen` says whether the page's own listeners would see it. */
function key(hold, name, mods = {}) {
  const event = { key: name, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, isComposing: false, ...mods, prevented: false, stopped: false,
    preventDefault() { this.prevented = true; }, stopPropagation() { this.stopped = true; } };
  fire("keydown", event);
  return { seen: !event.prevented && !event.stopped, entries: hold.entries };
}

test("characters and editing keys are held, in order, and the page's shortcuts never see them", () => {
  const { root } = page();
  const hold = new KeyHold(root, 7);
  for (const k of ["Z", "/", "ArrowLeft", "ArrowRight", "Backspace", "Enter", "Tab", "Delete", "Home", "End", "ArrowUp", "ArrowDown"]) {
    assert.equal(key(hold, k).seen, false, k);
  }
  assert.deepEqual(hold.entries, [{ text: "Z" }, { text: "/" }, { key: "ArrowLeft" }, { key: "ArrowRight" }, { key: "Backspace" },
    { key: "Enter" }, { key: "Tab" }, { key: "Delete" }, { key: "Home" }, { key: "End" }, { key: "ArrowUp" }, { key: "ArrowDown" }]);
  assert.equal(hold.offset, 7, "where the click was");
});

test("Shift makes a selection of the editing keys, but Shift+Enter runs and moves on", () => {
  const hold = new KeyHold(page().root, 0);
  key(hold, "ArrowLeft", { shiftKey: true });
  key(hold, "End", { shiftKey: true });
  key(hold, "A", { shiftKey: true });
  key(hold, "Enter", { shiftKey: true });
  assert.deepEqual(hold.entries, [{ key: "Shift+ArrowLeft" }, { key: "Shift+End" }, { text: "A" }, { run: "run-next" }]);
});

for (const mod of ["ctrlKey", "metaKey"]) {
  test(`the editor's shortcuts are held with ${mod}: run, document start and end, undo and redo`, () => {
    const hold = new KeyHold(page().root, 0);
    for (const [k, shift] of [["Enter", false], ["Home", false], ["End", false], ["End", true], ["z", false], ["Z", true], ["y", false]]) {
      assert.equal(key(hold, k, { [mod]: true, shiftKey: shift }).seen, false, k);
    }
    assert.deepEqual(hold.entries, [{ run: "run" }, { key: "DocHome" }, { key: "DocEnd" }, { key: "Shift+DocEnd" }, { key: "Undo" }, { key: "Redo" }, { key: "Redo" }]);
  });
}

test("Ctrl+C and Ctrl+V are the browser's: a copy of what is selected, a paste that arrives as text", () => {
  const hold = new KeyHold(page().root, 0);
  assert.equal(key(hold, "c", { ctrlKey: true }).seen, true);
  assert.equal(key(hold, "v", { ctrlKey: true }).seen, true);
  let prevented = false;
  fire("paste", { clipboardData: { getData: (type) => (type === "text/plain" ? "x = 1\ny = 2" : "") }, preventDefault: () => { prevented = true; } });
  assert.deepEqual(hold.entries, [{ text: "x = 1\ny = 2" }]);
  assert.ok(prevented, "the page does not paste it too");
});

test("AltGr (Ctrl+Alt) types its character; a key being composed (an IME) is left to the browser", () => {
  const hold = new KeyHold(page().root, 0);
  assert.equal(key(hold, "@", { ctrlKey: true, altKey: true }).seen, false);
  assert.equal(key(hold, "é", { isComposing: true }).seen, true);
  assert.equal(key(hold, "F5").seen, true, "a key that is no editing key goes to the page");
  assert.deepEqual(hold.entries, [{ text: "@" }]);
});

test("Ctrl+A selects the cell's code on the page (Ctrl+C then copies it), not the whole page", () => {
  const { root, text } = page("x = 1\n");
  const hold = new KeyHold(root, 3);
  assert.equal(key(hold, "a", { ctrlKey: true }).seen, false);
  assert.deepEqual(hold.entries, [{ key: "SelectAll" }]);
  assert.deepEqual(selection, { node: text, from: 0, to: 6 });
});

test("Ctrl+X cuts what is selected of the code: copied now, and the same characters deleted later", () => {
  const { root, text } = page("def f(x):\n");
  const hold = new KeyHold(root, 0);
  selection = { node: text, from: 4, to: 5 }; // a double-clicked word
  assert.equal(key(hold, "x", { ctrlKey: true }).seen, false);
  assert.deepEqual(hold.entries, [{ key: "Cut", from: 4, to: 5 }]);
  assert.deepEqual(copied, ["copy"], "the page writes the clipboard while the key press lets it");
  key(hold, "a", { ctrlKey: true });
  key(hold, "x", { ctrlKey: true });
  assert.deepEqual(hold.entries.at(-1), { key: "Cut", from: 0, to: 10 }, "after Ctrl+A, all of it");
});

test("Ctrl+X with nothing of the code selected cuts nothing", () => {
  const { root } = page();
  const hold = new KeyHold(root, 0);
  assert.equal(key(hold, "x", { ctrlKey: true }).seen, true);
  selection = { node: { data: "Contents" }, from: 0, to: 3 }; // selected elsewhere on the page
  assert.equal(key(hold, "x", { ctrlKey: true }).seen, true);
  assert.deepEqual(hold.entries, []);
  assert.deepEqual(copied, []);
});

test("Escape, a focus or a click outside the cell end the hold: the keys then go where the learner went", () => {
  for (const leave of ["Escape", "focusin", "pointerdown"]) {
    const { root, outside } = page();
    const hold = new KeyHold(root, 0);
    key(hold, "a");
    fire("focusin", { target: {} }); // inside the cell: still held
    fire("pointerdown", { target: {} });
    assert.equal(hold.left, false);
    if (leave === "Escape") assert.equal(key(hold, "Escape").seen, true);
    else fire(leave, { target: outside });
    assert.equal(hold.left, true, leave);
    assert.equal(listeners.size, 0, `${leave}: no listener left`);
    assert.deepEqual(hold.entries, [{ text: "a" }], "what was held before stays, for the editor");
  }
});

test("coming back to the code (a second click, a double click) holds again, from the new spot", () => {
  const { root, outside } = page();
  const hold = new KeyHold(root, 2);
  hold.resume(null); // a double click's second click, not left: nothing changes, nothing doubles
  key(hold, "q");
  assert.deepEqual(hold.entries, [{ text: "q" }]);
  fire("pointerdown", { target: outside });
  hold.resume(9);
  assert.equal(hold.left, false);
  assert.equal(hold.offset, 9);
  key(hold, "k");
  assert.deepEqual(hold.entries, [{ text: "q" }, { text: "k" }]);
  hold.stop(); // the editor is there
  assert.equal(listeners.size, 0);
});
