// Typing Python into a cell's editor the way a learner does (issue 13), on
// CodeMirror's EditorState with the editor's own rules (editor_rules.js).
//
// The learner types line by line and trusts the editor: Enter indents after a
// colon, one Backspace (or Shift+Tab) takes one level of indentation away, one
// Tab adds one. Python's level is 4 spaces: an editor whose unit is 2 leaves
// the learner's code at levels that do not match (IndentationError) or not as
// written. The browser (tests/browser/test_typing.py) keeps what only a browser
// shows: a few lines typed into each lab's exercise and run, focus, layout.
//
// Keys go through the editor's keymap in its precedence order (CodeMirror's
// runScopeHandlers, what its keydown handler calls), typed characters through
// its input handlers the way CodeMirror applies typed text: each handler of
// EditorView.inputHandler gets (view, from, to, text, insert); if none takes
// it, the insert is dispatched as "input.type" (so indentOnInput runs). The
// "view" is {state, dispatch}: every rule here is a function of the state.
import { mock, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { EditorState, Transaction } from "@codemirror/state";
import { EditorView, runScopeHandlers } from "@codemirror/view";
import { python } from "@codemirror/lang-python";
import { syntaxTree } from "@codemirror/language";
import { editingRules, openingBracketInText } from "../../src/pyodide_cells/js/page/editor_rules.js";

// CodeMirror parses to budgets of wall-clock time (20 ms after a change, the
// editor's own INDENT_PARSE_BUDGET_MS): on a loaded machine how far a parse got
// would change from run to run. With the clock stopped every parse runs to where
// it was asked to (a state parses its first 3,000 characters when it is made,
// the rest only when asked): the same tree on every machine.
mock.timers.enable({ apis: ["Date"] });

const UNIT = 4; // Python's indentation level (PEP 8)
const CLOSERS = new Set(")]}\"'"); // what the editor may have closed for the learner

/** An editor's state and the keys that change it, as a learner presses them. */
class Keyboard {
  /** @param {string} doc @param {number} [cursor] (the end of `doc` unless given) */
  constructor(doc = "", cursor = doc.length) {
    this.state = EditorState.create({ doc, selection: { anchor: cursor }, extensions: [editingRules, python()] });
  }

  /** What EditorView.dispatch does with a transaction or specs: the state they make (commands take it unbound). */
  dispatch = (...specs) => {
    this.state = (specs.length === 1 && specs[0] instanceof Transaction ? specs[0] : this.state.update(...specs)).state;
  };

  /** Press `key` ("Enter", "Shift+Tab"): the editor's keymap runs it. Returns whether a binding took it. */
  press(key, times = 1) {
    const parts = key.split("+");
    const name = parts.pop();
    const event = {
      key: name, keyCode: 0, shiftKey: parts.includes("Shift"), ctrlKey: parts.includes("Control"),
      altKey: parts.includes("Alt"), metaKey: parts.includes("Meta"), stopPropagation() {},
    };
    let handled = false;
    for (let i = 0; i < times; i++) handled = runScopeHandlers(/** @type {any} */ (this), event, "editor");
    return handled;
  }

  /**
   * Type `text` as a keyboard does: each character is one input. A run of word
   * characters goes in as one input, which is the same to every rule here (the
   * bracket handlers take one character, and indentOnInput's patterns end at a
   * colon, a space or a bracket, never inside a word) and parses a few times
   * less often: typing whole solutions costs the suite seconds, not minutes.
   */
  type(text) {
    for (const [piece] of text.matchAll(/\w+|[^]/gu)) {
      const { from, to } = this.state.selection.main;
      const insert = () => this.state.update(this.state.replaceSelection(piece), { userEvent: "input.type", scrollIntoView: true });
      const handlers = this.state.facet(EditorView.inputHandler);
      if (!handlers.some((handler) => handler(/** @type {any} */ (this), from, to, piece, insert))) this.dispatch(insert());
    }
  }

  /** Each line of the document. */
  lines() {
    return this.state.doc.toString().split("\n");
  }

  /** The line the cursor is on. */
  line() {
    return this.state.doc.lineAt(this.state.selection.main.head).text;
  }

  /** The line the cursor is on, and the cursor's offset in it. */
  caret() {
    const { head } = this.state.selection.main;
    const line = this.state.doc.lineAt(head);
    return [line.text, head - line.from];
  }

  /** Put the cursor at `line` (from 1), `column`; to the end of `headLine` selected, if given. */
  select(line, column, headLine, headColumn) {
    const at = (n, c) => Math.min(this.state.doc.line(n).from + c, this.state.doc.line(n).to);
    const anchor = at(line, column);
    this.dispatch({ selection: { anchor, head: headLine ? at(headLine, headColumn ?? Infinity) : anchor } });
  }
}

const indentOf = (text) => text.length - text.trimStart().length;

/**
 * Type `code` into the (empty) editor line by line, relying on auto-indent.
 *
 * After Enter the learner looks at where the cursor is and, thinking in levels
 * of 4 spaces, presses Backspace once per level too deep or Tab once per level
 * too shallow, then types the line's code. An indentation that is not a whole
 * number of levels away from the line's fails the test: no level key mends it.
 * Brackets the editor closed and the learner typed again are deleted as a
 * learner deletes them (Delete when they sit after the cursor, Backspace when
 * before). A blank line gets no key but Enter. Returns those deletions as
 * [line number, deleted text].
 */
function typeAsLearner(kb, code) {
  const fixes = [];
  code.replace(/\n+$/, "").split("\n").forEach((want, i) => {
    const number = i + 1;
    if (number > 1) kb.press("Enter");
    if (!want.trim()) return; // the next Enter clears the indentation the editor put here
    const got = kb.line();
    assert.equal(got.trim(), "", `line ${number}: Enter left ${JSON.stringify(got)} on the new line`);
    const need = indentOf(want);
    const levels = (got.length - need) / UNIT;
    assert.ok(Number.isInteger(levels),
      `line ${number}: Enter indented by ${got.length}, not a whole number of ${UNIT}-space levels away from the ${need} that ${JSON.stringify(want)} needs`);
    kb.press(levels > 0 ? "Backspace" : "Tab", Math.abs(levels));
    assert.equal(kb.line(), " ".repeat(need),
      `line ${number}: Enter indented by ${got.length}; ${Math.abs(levels)} x ${levels > 0 ? "Backspace" : "Tab"} did not leave ${need} spaces for ${JSON.stringify(want)}`);
    kb.type(want.trimStart());
    const [typed, at] = kb.caret();
    if (typed === want) return;
    const extra = typed.slice(want.length);
    assert.ok(typed.startsWith(want) && [...extra].every((c) => CLOSERS.has(c)),
      `line ${number}: typed ${JSON.stringify(want)}, the editor shows ${JSON.stringify(typed)}`);
    if (at === want.length) kb.press("Delete", extra.length);
    else {
      assert.equal(at, typed.length, `line ${number}: the cursor is at ${at} in ${JSON.stringify(typed)}`);
      kb.press("Backspace", extra.length);
    }
    fixes.push([number, extra]);
    assert.deepEqual(kb.caret(), [want, want.length], `line ${number}`);
  });
  return fixes;
}

/** What the editor holds is `code`, as written (blank lines may keep spaces; lines after it are blank). */
function assertHolds(kb, code) {
  const want = code.replace(/\n+$/, "").split("\n");
  const shown = kb.lines();
  assert.deepEqual(shown.slice(0, want.length).map((l) => l.trimEnd()), want);
  assert.ok(shown.slice(want.length).every((l) => !l.trim()), "only blank lines after the code");
}

/** Type `code` as the learner does into an empty editor and check the editor holds it. */
function typed(code) {
  const kb = new Keyboard();
  const fixes = typeAsLearner(kb, code);
  assertHolds(kb, code);
  return { kb, fixes };
}

// ------------------------------------------------- 1. the labs' reference solutions, typed

// The pages, and their "Reference solution" dropdowns, read as tests/pages.py reads them.
const DOCS = new URL("../../docs/", import.meta.url);
const DROPDOWN = /^:::\{dropdown\} Reference solution[^\n]*\n([\s\S]*?)^:::\n/gm;
const PYTHON_BLOCK = /^```python\n([\s\S]*?)^```\n/gm;
const CELL = /^```\{code-cell\} python\n([\s\S]*?)^```\n/gm;

/** Every "Reference solution" of the page `name` (docs/NAME.md), in page order. */
function referenceSolutions(text) {
  return [...text.matchAll(DROPDOWN)].map(([, body]) => {
    const blocks = [...body.matchAll(PYTHON_BLOCK)];
    assert.equal(blocks.length, 1, "one code block per dropdown");
    return blocks[0][1];
  });
}

/** The code of every cell tagged `exercise` of the page, in page order. */
function exerciseCells(text) {
  return [...text.matchAll(CELL)].map(([, body]) => body.split("\n"))
    .filter((lines) => lines.some((l) => /^:tags:.*\bexercise\b/.test(l)))
    .map((lines) => lines.filter((l) => !l.startsWith(":")).join("\n").replace(/^\n+/, ""));
}

const LABS = readdirSync(DOCS).filter((f) => f.endsWith(".md"))
  .map((file) => ({ file, text: readFileSync(new URL(file, DOCS), "utf8") }))
  .filter(({ text }) => referenceSolutions(text).length > 0);

test("every lab page with an exercise has its reference solutions (the typed tests below are not empty)", () => {
  assert.ok(LABS.length >= 3, LABS.map((l) => l.file).join(", "));
  for (const { file, text } of LABS) assert.equal(referenceSolutions(text).length, exerciseCells(text).length, file);
});

for (const { file, text } of LABS) {
  referenceSolutions(text).forEach((solution, n) => {
    test(`${file}: reference solution ${n + 1}, typed line by line with auto-indent, is the solution as written`, () => {
      typed(solution);
    });
  });
}

// ------------------------------------------------- 2. Enter, Backspace, Tab and Shift+Tab

test("Enter after a colon indents by four; Backspace in the indentation takes a whole level away", () => {
  const kb = new Keyboard();
  kb.type("def f(x):");
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(4));
  kb.type("if x:");
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(8));
  kb.press("Backspace");
  assert.equal(kb.line(), " ".repeat(4));
  kb.type("y = 1");
  kb.press("Backspace");
  assert.equal(kb.line(), "    y = ", "after code, Backspace takes one character");
});

for (const statement of ["pass", "return x", "return max(x,\n1)", "raise ValueError(\n'x')", "break", "continue",
  "return [\n1,\n2]", "return {'a': (1,\n2)}"]) {
  test(`Enter after ${JSON.stringify(statement)}, which ends its block, goes back a level`, () => {
    // Also after a statement that spans lines (the learner closes its bracket: the editor steps over the one it closed).
    const kb = new Keyboard();
    for (const line of ["def f(x):", "if x:", "if x:"]) {
      kb.type(line);
      kb.press("Enter");
    }
    assert.equal(kb.line(), " ".repeat(12));
    statement.split("\n").forEach((line, n) => {
      if (n) kb.press("Enter");
      kb.type(line);
    });
    const [text, at] = kb.caret();
    assert.equal(at, text.length, "the cursor is at the end of the statement");
    kb.press("Enter");
    assert.equal(kb.line(), " ".repeat(8), "the block ended: the next line belongs to the enclosing one");
  });
}

test("Enter after a return inside a nested block, with code after it, goes back a level; not while its bracket is open", () => {
  const kb = new Keyboard("class A:\n    def f(self):\n        for x in y:\n            if x:\n                return x");
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(12));
  kb.press("Backspace");
  kb.type("y = 2");
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(8), "an ordinary statement keeps the level");
  kb.type("return (x,");
  kb.press("Delete"); // the bracket the editor closed
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(8 + "return (".length), "an open bracket: its contents, not a level back");
});

test("return as part of a name (returned = 1) is no block exit", () => {
  const kb = new Keyboard("def f():\n    returned = 1");
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(4));
});

test("Enter before the bracket the editor closed lines up with the contents, and the bracket stays after the cursor", () => {
  // Typing `max(1,` leaves the closed bracket after the cursor; Enter took it down and lined the new line up with
  // the `(`, a column short of the first argument. Found by a learner review.
  const kb = new Keyboard();
  kb.type("total = max(1,");
  assert.deepEqual(kb.caret(), ["total = max(1,)", "total = max(1,".length], "the editor closed the bracket");
  kb.press("Enter");
  const column = "total = max(".length;
  assert.deepEqual(kb.caret(), [" ".repeat(column) + ")", column], "under the 1, with the bracket still after the cursor");
  kb.type("2)"); // the learner closes the call: the editor steps over its own bracket
  kb.press("Enter");
  kb.type("print(total * 10)");
  assert.deepEqual(kb.lines(), ["total = max(1,", " ".repeat(column) + "2)", "print(total * 10)"]);
});

test("Enter before a closing bracket in a list goes one level in; right after the opening one, the bracket goes below", () => {
  const kb = new Keyboard();
  kb.type("xs = [");
  kb.press("Enter"); // right after the opening bracket: the `]` goes below
  assert.deepEqual(kb.lines(), ["xs = [", "    ", "]"]);
  kb.type("1,");
  kb.select(3, 0); // the start of the `]`'s line (moving the cursor is the view's: not tested here)
  kb.press("Backspace"); // the learner joins the `]` to the line above
  assert.deepEqual(kb.caret(), [" ".repeat(UNIT) + "1,]", UNIT + 2]);
  kb.press("Enter");
  assert.deepEqual(kb.caret(), [" ".repeat(UNIT) + "]", UNIT]);
});

test("Enter before nested closed brackets lines up with the innermost one's contents; spaces before the cursor go", () => {
  const kb = new Keyboard();
  kb.type("f(g([1, ");
  assert.deepEqual(kb.caret(), ["f(g([1, ]))", "f(g([1, ".length]);
  kb.press("Enter");
  assert.deepEqual(kb.lines(), ["f(g([1,", " ".repeat("f(g([".length) + "]))"]);
  assert.equal(kb.caret()[1], "f(g([".length);
});

test("Backspace right after a bracket the editor closed takes both", () => {
  const kb = new Keyboard();
  kb.type("x = f(");
  assert.equal(kb.line(), "x = f()");
  kb.press("Backspace");
  assert.equal(kb.line(), "x = f");
});

test("Tab and Shift+Tab indent by four, one line (the cursor stays after the code) or a selection", () => {
  const kb = new Keyboard();
  kb.type("def f(x):");
  kb.press("Enter");
  kb.type("a = 1");
  kb.press("Tab");
  assert.deepEqual(kb.caret(), [" ".repeat(8) + "a = 1", 13], "Tab indents the line");
  kb.press("Shift+Tab");
  assert.deepEqual(kb.caret(), [" ".repeat(4) + "a = 1", 9]);
  kb.press("Enter");
  kb.type("b = 2");
  kb.press("Enter");
  kb.type("c = 3");
  assert.deepEqual(kb.lines(), ["def f(x):", "    a = 1", "    b = 2", "    c = 3"]);

  // Select the three body lines (from the end of the first to the end of the third, as Shift+ArrowDown twice does).
  kb.select(2, Infinity, 4, Infinity);
  kb.press("Tab");
  assert.deepEqual(kb.lines(), ["def f(x):", "        a = 1", "        b = 2", "        c = 3"]);
  kb.press("Shift+Tab", 2);
  assert.deepEqual(kb.lines(), ["def f(x):", "a = 1", "b = 2", "c = 3"]);
  kb.press("Tab");
  assert.deepEqual(kb.lines(), ["def f(x):", "    a = 1", "    b = 2", "    c = 3"]);
});

test("Tab on an empty line indents a level; Shift+Tab at column 0 changes nothing", () => {
  const kb = new Keyboard();
  kb.press("Tab");
  assert.equal(kb.line(), "    ");
  kb.press("Shift+Tab", 2);
  assert.equal(kb.line(), "");
});

test("Ctrl+A then Backspace empties the editor", () => {
  const kb = new Keyboard("def f():\n    return 1\n");
  kb.press("Control+a");
  kb.press("Backspace");
  assert.deepEqual(kb.lines(), [""]);
});

test("Enter after decorators, a class, nested defs and a comment with brackets keeps Python's levels", () => {
  const { fixes } = typed([
    "import functools",
    "",
    "",
    "@functools.lru_cache(maxsize=None)",
    "def fib(n):  # see fib(n - 1) [and] {this}",
    "    if n < 2:",
    "        return n",
    "    return fib(n - 1) + fib(n - 2)",
    "",
    "",
    "class Node:",
    "    @property",
    "    def children(self):",
    "        def walk(node):",
    "            for child in node.kids:",
    "                yield from walk(child)",
    "        return list(walk(self))",
    "",
  ].join("\n"));
  // The learner typed the closing brackets; the editor's were deleted where it had closed them.
  assert.ok(fixes.every(([, extra]) => /^[)\]}]+$/.test(extra)), JSON.stringify(fixes));
});

test("nested brackets over several lines, multi-line strings and f-strings, typed as the learner does", () => {
  typed([
    "def table(rows):",
    '    """Rows as text (a docstring with brackets: f(x) [y] {z}).',
    "",
    "    More lines, (still) in the string.",
    '    """',
    "    widths = {",
    "        name: max(len(str(r[name]))",
    "                  for r in rows)",
    "        for name in rows[0]",
    "    }",
    "    head = ' '.join(f\"{name:>{widths[name]}}\" for name in widths)",
    "    return '\\n'.join([head] + [",
    "        ' '.join(f\"{r[n]!r:>{widths[n]}}\" for n in widths)",
    "        for r in rows",
    "    ])",
    "",
  ].join("\n"));
});

test("else, elif, except and finally go back a level as they are typed (indentOnInput)", () => {
  for (const block of [
    [["try:", 0], ["n = int('7')", 4], ["except ValueError:", 0], ["n = 0", 4], ["finally:", 0], ["print('n is', n)", 4]],
    [["if len('ab') > 1:", 0], ["print('long')", 4], ["elif len('ab'):", 0], ["print('short')", 4], ["else:", 0], ["pass", 4]],
    [["for x in []:", 0], ["print(x)", 4], ["else:", 0], ["print('none')", 4]],
  ]) {
    const kb = new Keyboard();
    typeBlock(kb, block);
  }
});

/** Type each [text, indent] of `block` after Enter, checking each line's place as it is typed. */
function typeBlock(kb, block, base = 0) {
  for (const [text, indent] of block) {
    if (kb.state.doc.length) kb.press("Enter");
    if (base + indent < kb.line().length) {
      // Where a learner types a block's next clause: Enter leaves the line in the block.
      assert.ok(/^(except|elif|else|finally)/.test(text), `${text}: Enter put ${kb.line().length} spaces`);
    }
    kb.type(text);
    if (kb.line().endsWith(")") && !text.endsWith(")")) kb.press("Delete");
    assert.equal(kb.line(), " ".repeat(base + indent) + text, `${JSON.stringify(text)} moved to column ${base + indent}`);
  }
}

// ------------------------------------------------- 3. brackets in text

test("a bracket typed in a string or a comment is not closed; in code and in an f-string's braces it is", () => {
  // `s = "f(x"` came out `s = "f(x")`: the closed bracket stayed after the quote, a SyntaxError (a learner
  // review; an f-string's format spec, `{s:(^7}`, by the next). The learner's own closing bracket steps over.
  const kb = new Keyboard();
  const want = ['s = "f(x"', "# see g(y", 'u = "q\\"(" + s', 'v = f"{s:(^7}"', 'print(s, u, v, f"{len(s)}", [1])'];
  want.forEach((line, n) => {
    if (n) kb.press("Enter");
    kb.type(line);
  });
  assert.deepEqual(kb.lines(), want);
  kb.press("Enter");
  kb.type("print(");
  assert.deepEqual(kb.caret(), ["print()", "print(".length], "in code the bracket closes itself");
});

test("brackets in triple-quoted strings, raw and byte strings, and after a closed string", () => {
  for (const [line, closed] of [
    ['"""doc (', false], ["'''a [", false], ['r"\\d{', false], ["b'(", false], ['x = "a" + f(', true],
    ['"a\\\\" + g(', true], ["s = ''; t = [", true], ['f"{x}" + h(', true], ["# a comment {", false],
  ]) {
    const kb = new Keyboard();
    kb.type(line);
    assert.equal(kb.line(), closed ? line + ")]}"[("([{".indexOf(line.at(-1)))] : line, JSON.stringify(line));
  }
});

test("openingBracketInText: only an opening bracket, in a string not yet closed, a comment or a format spec", () => {
  const at = (doc, text) => openingBracketInText(EditorState.create({ doc, extensions: [python()] }), doc.length, text);
  assert.equal(at('s = "a', "("), true);
  assert.equal(at('s = "a', ")"), false, "a closing bracket is not the rule's");
  assert.equal(at('s = "a', "(("), false, "pasted text is not a typed bracket");
  assert.equal(at('s = "a"', "("), false, "after the closing quote: code");
  assert.equal(at('s = f"{x', "("), false, "a replacement field is code");
  assert.equal(at('s = f"{x:', "("), true, "a format spec is text");
  assert.equal(at("# a", "["), true);
});

// ------------------------------------------------- 4. the end of a long cell, parsed late

// A cell longer than CodeMirror parses when the state is made (its first 3,000
// characters), as on a slow phone the background parse has not reached the end:
// the state's syntax tree stops short of the cursor (checked), and only the
// editor's own parse up to it (indentFromParsedTree) gives the code's levels.
const LONG = [
  "def block_table(n):",
  ...Array.from({ length: 92 }, (_, i) => `    slot_${i} = [n * ${i}, (n + ${i}) // 2]`),
  "    return slot_0",
  "",
].join("\n");

function atTheEndOfALongCell(doc = LONG) {
  const kb = new Keyboard(doc);
  assert.ok(LONG.length > 3200, `a long cell: ${LONG.length}`);
  assert.ok(syntaxTree(kb.state).length < LONG.length - 200, "the tree stops short of the end");
  return kb;
}

test("Enter indents from the code above at the end of a long cell whose tree has not reached it", () => {
  const kb = atTheEndOfALongCell();
  kb.press("Enter");
  kb.type("print(1, 2,");
  kb.press("Delete"); // the bracket the editor closed
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat("print(".length), "the next line of the call lines up inside its bracket");
  kb.type("3)");
  kb.press("Delete");
  kb.press("Enter");
  assert.equal(kb.line(), "");
  kb.type("def f():");
  kb.press("Enter");
  assert.equal(kb.line(), " ".repeat(4));
  kb.type("return 1");
  kb.press("Enter");
  assert.equal(kb.line(), "", "the block ended: the next line is the module's");
});

test("Enter right where the tree has not reached takes its indentation from the code above", () => {
  // No bracket typed first: typing one parses up to the cursor (openingBracketInText) and would hide the rule.
  for (const [last, indent] of [["def f():", 4], ["x = max(1,", "x = max(".length], ["def g():\n    return 1", 0],
    ["class A:\n    def f(self):\n        if self:", 12]]) {
    const kb = atTheEndOfALongCell(`${LONG}${last}`);
    kb.press("Enter");
    assert.equal(kb.line(), " ".repeat(indent), `after ${JSON.stringify(last)}`);
  }
});

test("else and except go back a level as typed at the end of a long cell whose tree has not reached it", () => {
  for (const block of [
    [["try:", 0], ["n = int('7')", 4], ["except ValueError:", 0], ["n = 0", 4], ["finally:", 0], ["print('n is', n)", 4]],
    [["if len('ab') > 1:", 0], ["print('long')", 4], ["elif len('ab'):", 0], ["print('short')", 4], ["else:", 0], ["pass", 4]],
  ]) {
    const kb = atTheEndOfALongCell();
    typeBlock(kb, block);
  }
});

test("a bracket typed in a string at the end of a long cell is not closed", () => {
  const kb = atTheEndOfALongCell();
  kb.press("Enter");
  kb.type('s = "f(x');
  assert.equal(kb.line(), 's = "f(x');
});

test("except, elif, else and finally typed where the tree has not reached go back a level (no Enter parsed first)", () => {
  for (const [head, clause] of [["try:", "except ValueError:"], ["if x:", "elif y:"], ["if x:", "else:"], ["try:", "finally:"],
    ["for i in x:", "else:"]]) {
    const kb = atTheEndOfALongCell(`${LONG}${head}\n    pass\n    `);
    kb.type(clause);
    assert.equal(kb.line(), clause, `${clause} after ${head}`);
  }
});
