// @ts-check
// The cell editor: CodeMirror 6, set up for short notebook cells of Python.
//
// cells.js imports this module only when a cell needs its editor (it comes
// on the screen once Python has started, or the learner clicks the code):
// CodeMirror is most of the page's script, and parsing it while the worker
// boots Python competes with it for the CPU. esbuild writes it as a chunk of
// its own (assets.bundle_js).

import {
  EditorView, keymap, lineNumbers, highlightActiveLineGutter, highlightSpecialChars, drawSelection,
  dropCursor, highlightActiveLine, Decoration, ViewPlugin,
} from "@codemirror/view";
import { EditorSelection, EditorState, Prec, RangeSetBuilder } from "@codemirror/state";
import {
  history, defaultKeymap, historyKeymap, indentWithTab, indentMore, indentLess, insertNewlineAndIndent,
  deleteCharBackward, deleteCharForward,
  cursorCharLeft, cursorCharRight, cursorLineUp, cursorLineDown, cursorLineBoundaryBackward,
  cursorLineBoundaryForward, selectCharLeft, selectCharRight, selectLineUp, selectLineDown,
  selectLineBoundaryBackward, selectLineBoundaryForward, selectAll, undo, redo, cursorDocStart, cursorDocEnd,
  selectDocStart, selectDocEnd,
} from "@codemirror/commands";
import { closeBrackets, closeBracketsKeymap, insertBracket } from "@codemirror/autocomplete";
import { python } from "@codemirror/lang-python";
import {
  HighlightStyle, IndentContext, bracketMatching, ensureSyntaxTree, getIndentation, indentOnInput, indentService, indentString,
  indentUnit, syntaxHighlighting, syntaxTree,
} from "@codemirror/language";
import { tags as t } from "@lezer/highlight";

// Token colours come from CSS variables (cells.css) so they meet WCAG AA contrast
// in Furo's light and dark themes; CodeMirror's default style does not.
const highlightStyle = HighlightStyle.define([
  { tag: [t.keyword, t.self, t.controlKeyword, t.definitionKeyword, t.moduleKeyword], color: "var(--pc-hl-keyword)" },
  { tag: [t.string, t.special(t.string), t.docString], color: "var(--pc-hl-string)" },
  { tag: [t.comment, t.lineComment], color: "var(--pc-hl-comment)", fontStyle: "italic" },
  { tag: [t.number, t.bool, t.null, t.atom], color: "var(--pc-hl-number)" },
  { tag: [t.function(t.variableName), t.function(t.propertyName), t.function(t.definition(t.variableName))], color: "var(--pc-hl-function)" },
  { tag: [t.className, t.typeName, t.definition(t.className)], color: "var(--pc-hl-class)" },
  { tag: [t.operator, t.punctuation, t.bracket], color: "var(--pc-hl-operator)" },
  { tag: [t.variableName, t.propertyName, t.definition(t.variableName)], color: "var(--pc-hl-name)" },
]);
// Python indents by 4 spaces (PEP 8), as every Python editor does; CodeMirror's
// default unit is 2, which made hand-typed code fail with IndentationError.
const PYTHON_INDENT = "    ";

// A wrapped line continues under its own indentation, not at column 0, so a
// long line on a phone does not hide Python's block structure: each indented
// line gets a hanging indent as wide as its leading whitespace. The rule is the
// page's (codelines.js), which lays out the code the same way before the editor.
/** @param {(text: string, tabSize: number) => number} columnsOf  a line's hanging indent, in columns */
const hangingIndent = (columnsOf) => ViewPlugin.fromClass(
  class {
    /** @param {EditorView} view */
    constructor(view) {
      this.decorations = hangingIndents(view, columnsOf);
    }

    /** @param {import("@codemirror/view").ViewUpdate} update */
    update(update) {
      if (update.docChanged || update.viewportChanged) this.decorations = hangingIndents(update.view, columnsOf);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

/** @param {EditorView} view @param {(text: string, tabSize: number) => number} columnsOf */
function hangingIndents(view, columnsOf) {
  /** @type {RangeSetBuilder<Decoration>} */
  const builder = new RangeSetBuilder();
  for (const { from, to } of view.visibleRanges) {
    for (let pos = from; pos <= to; ) {
      const line = view.state.doc.lineAt(pos);
      const columns = columnsOf(line.text, view.state.tabSize);
      if (columns) {
        const style = `padding-left: calc(${columns}ch + 6px); text-indent: -${columns}ch`;
        builder.add(line.from, line.from, Decoration.line({ attributes: { style } }));
      }
      pos = line.to + 1;
    }
  }
  return builder.finish();
}

// Enter after a statement that ends its block (pass, return, raise, break,
// continue) goes back one level from the statement's first line, as IDLE,
// VS Code and PyCharm do: a line after it in the same block would never run.
// Also after the last line of one that spans lines (`return max(a,` / `b)`).
// Only for Enter (a simulated break after the whole statement); a statement
// still open (an unclosed bracket or string: a parse error in it) is left to
// the syntax's rules.
const BLOCK_EXIT = /^(Pass|Break|Continue|Return|Raise)Statement$/;
const dedentAfterBlockExit = indentService.of((cx, pos) => {
  if (cx.simulatedBreak !== pos) return undefined;
  const line = cx.lineAt(pos, -1);
  const start = line.from + /^\s*/.exec(line.text)[0].length;
  const tree = syntaxTree(cx.state);
  let node = tree.resolveInner(start, 1);
  while (node && !BLOCK_EXIT.test(node.name)) node = node.parent;
  if (!node || node.to > pos) return undefined;
  let open = false;
  tree.iterate({ from: node.from, to: node.to, enter: (n) => { if (n.type.isError) open = true; } });
  return open ? undefined : Math.max(0, cx.lineIndent(node.from) - cx.unit);
});

// Every indentation CodeMirror works out (Enter's, and a line's as `else:` or
// `except` is typed) comes from the syntax tree, which CodeMirror parses in the
// background, a slice at a time, and again after each change within a small
// budget. Where the tree does not reach the line yet (a slow phone, the end of
// a long cell) it gives up: Enter copied the line's own indentation (column 0
// inside an open bracket) and `else:` stayed in the block above. So a lookup
// past the end of the tree first parses up to it, and asks again of a state
// that holds the longer tree (a state's tree is fixed when the state is made;
// an empty update makes one that takes the parse). A cell's code parses in
// milliseconds; the budget bounds a pathological one. The lookup asked again
// keeps the first one's options (a simulated line break: Enter's), which
// CodeMirror's typings mark internal; the lockfile pins the version.
const INDENT_PARSE_BUDGET_MS = 500;
const indentFromParsedTree = Prec.highest(indentService.of((cx, pos) => {
  if (syntaxTree(cx.state).length >= pos || !ensureSyntaxTree(cx.state, pos, INDENT_PARSE_BUDGET_MS)) return undefined;
  const { options } = /** @type {IndentContext & {options: ConstructorParameters<typeof IndentContext>[1]}} */ (cx);
  return getIndentation(new IndentContext(cx.state.update({}).state, options), pos);
}));

// Enter right before the bracket the editor closed (`max(1,|)`) takes the
// bracket down with the cursor, and CodeMirror lines a line that starts with
// a closing bracket up with the opening one: the learner's next argument
// would start under the `(`, a column short of the first. Here the new line
// gets the indentation of the bracket's contents, as if the closing bracket
// were not there (CodeMirror's "double break"), and the bracket stays after
// the cursor. Right after the opening bracket (`f(|)`) is CodeMirror's own
// case: the bracket goes on a line of its own below.
const CLOSING_AHEAD = /^[ \t]*[)\]}]/;
const OPENING_BEHIND = /[(\[{][ \t]*$/;
/** @param {EditorView} view @returns {boolean} whether it made the new line */
function newlineBeforeClosingBracket(view) {
  const { state } = view;
  const ahead = state.selection.ranges.every((range) => {
    const line = state.doc.lineAt(range.head);
    return range.empty && CLOSING_AHEAD.test(line.text.slice(range.head - line.from))
      && !OPENING_BEHIND.test(line.text.slice(0, range.head - line.from));
  });
  if (!ahead) return false;
  /** @type {number[]} */
  const columns = [];
  for (const range of state.selection.ranges) {
    const column = getIndentation(new IndentContext(state, { simulateBreak: range.head, simulateDoubleBreak: true }), range.head);
    if (column == null) return false;
    columns.push(column);
  }
  let i = 0;
  view.dispatch(state.update(state.changeByRange((range) => {
    const line = state.doc.lineAt(range.head);
    let from = range.head;
    while (from > line.from && /[ \t]/.test(line.text[from - line.from - 1])) from--; // no spaces left at the end of the line
    let to = range.head;
    while (/[ \t]/.test(line.text[to - line.from] ?? "")) to++;
    const insert = "\n" + indentString(state, columns[i++]);
    return { changes: { from, to, insert }, range: EditorSelection.cursor(from + insert.length) };
  }), { scrollIntoView: true, userEvent: "input" }));
  return true;
}

const enterBeforeClosingBracket = Prec.highest(keymap.of([{ key: "Enter", run: newlineBeforeClosingBracket }]));

// Brackets close themselves in code, not in text: typed in a string or a
// comment (`s = "f(x"`), the bracket the editor closed was left over after
// the quote (`s = "f(x")`, a SyntaxError). An f-string's replacement fields
// (`f"{len(s)}"`) are code, up to a format spec. A string is text up to its
// closing quote; one not closed yet runs to the end of its line, cursor included.
const TEXT_NODES = new Set(["String", "FormatString", "Comment"]);
/**
 * Whether `text` typed at `pos` is an opening bracket inside a string or a comment.
 * @param {EditorState} state @param {number} pos @param {string} text
 */
function openingBracketInText(state, pos, text) {
  if (text.length !== 1 || !"([{".includes(text)) return false;
  const tree = ensureSyntaxTree(state, pos, INDENT_PARSE_BUDGET_MS) ?? syntaxTree(state);
  for (let node = tree.resolveInner(pos, -1); node; node = node.parent) {
    if (node.name === "FormatReplacement") return false;
    if (node.name === "FormatSpec") return true; // `f"{x:(^9}"`: after the colon, text again
    if (!TEXT_NODES.has(node.name)) continue;
    if (node.to > pos || node.name === "Comment") return true;
    const literal = state.sliceDoc(node.from, node.to).replace(/^[A-Za-z]*/, "");
    const quote = /^('''|"""|'|")/.exec(literal)?.[0] ?? "";
    const body = literal.slice(quote.length);
    // Closed by its quote, unless a backslash escapes that (`"a\"` is still open).
    const closed = quote !== "" && body.length >= quote.length && body.endsWith(quote)
      && !/(^|[^\\])(\\\\)*\\$/.test(body.slice(0, -quote.length));
    return !closed; // not closed: the cursor is in it
  }
  return false;
}
const noClosingBracketInText = Prec.highest(EditorView.inputHandler.of((view, from, to, text, insert) => {
  if (!openingBracketInText(view.state, from, text)) return false;
  view.dispatch(insert()); // as typed, without closeBrackets
  return true;
}));

// CodeMirror's basicSetup without what a short notebook cell does not need and
// the page pays for in bytes: the search panel (Ctrl+F stays the browser's find),
// word completion, the lint and fold gutters. Tab indents and Shift+Tab
// dedents; Escape then Tab leaves the editor (CodeMirror's tab focus mode, its
// documented accessible pattern), so Tab never traps the keyboard.
const editorSetup = [
  indentUnit.of(PYTHON_INDENT),
  // Brackets close themselves; quotes do not: with triple-quoted docstrings,
  // auto-closed quotes left learners with """Doc.""""" when they typed the end.
  Prec.highest(EditorState.languageData.of(() => [{ closeBrackets: { brackets: ["(", "[", "{"] } }])),
  EditorState.tabSize.of(PYTHON_INDENT.length),
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  history(),
  drawSelection(),
  dropCursor(),
  EditorState.allowMultipleSelections.of(true),
  indentOnInput(),
  dedentAfterBlockExit,
  indentFromParsedTree,
  enterBeforeClosingBracket,
  noClosingBracketInText,
  bracketMatching(),
  closeBrackets(),
  highlightActiveLine(),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
];

/**
 * An editor for one cell, appended to `parent`.
 * `label` names it for screen readers; `onRun` (Ctrl/Cmd+Enter), `onRunNext`
 * (Shift+Enter) and `onChange` (the text changed) are the cell's;
 * `topMargin()` is how much of the window's top the page covers (its sticky
 * bars), in CSS pixels: the cursor is never scrolled under it; `hangingColumns`
 * is the column a wrapped part of a line starts at (codelines.js).
 * Returns CodeMirror's EditorView.
 * @param {{doc: string, parent: HTMLElement, label: string, onRun: () => void, onRunNext: () => void,
 *   onChange: () => void, topMargin?: () => number, hangingColumns: (text: string, tabSize: number) => number}} options
 */
export function createEditor({ doc, parent, label, onRun, onRunNext, onChange, topMargin = () => 0, hangingColumns }) {
  const cellKeys = Prec.highest(
    keymap.of([
      { key: "Mod-Enter", run: () => (onRun(), true) },
      { key: "Shift-Enter", run: () => (onRunNext(), true) },
    ]),
  );
  const view = new EditorView({
    doc,
    parent,
    extensions: [
      editorSetup,
      hangingIndent(hangingColumns),
      python(),
      Prec.high(syntaxHighlighting(highlightStyle)),
      EditorView.lineWrapping, // no sideways scrolling, on phones either
      cellKeys,
      EditorView.contentAttributes.of({ "aria-label": label }),
      EditorView.scrollMargins.of(() => ({ top: topMargin() + 8 })),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange();
      }),
    ],
  });
  measureEveryLine(view);
  // CodeMirror measures again, at a new width, only the lines near the screen:
  // turned to landscape, an exercise kept its phone height (2,300 px for 1,250)
  // and a #link's scroll stopped thousands of pixels past its heading.
  let width = view.contentDOM.clientWidth;
  addEventListener("resize", () => requestAnimationFrame(() => {
    const now = view.contentDOM.clientWidth;
    if (now === width || !view.dom.isConnected) return;
    width = now;
    measureEveryLine(view);
  }));
  return view;
}

/**
 * Lays out and measures every line of a new editor once. CodeMirror lays out
 * only the lines within about a screen of the window and estimates the rest (a
 * line longer than its line length as wrapped, but not under its indentation,
 * nor at word ends): on a phone an exercise taller than the screen came out
 * hundreds of pixels shorter than the code it replaced, so the text below
 * moved, and a #link's scroll, already under way, stopped short of its heading.
 * The heights it measures it keeps. It does this itself to print (its
 * `viewState.printing`; there is no public option); a cell is at most a few
 * hundred lines.
 * @param {EditorView} view
 */
function measureEveryLine(view) {
  const internal = /** @type {{viewState?: {printing?: unknown}, measure?: unknown}} */ (/** @type {unknown} */ (view));
  const state = internal.viewState;
  const measure = internal.measure;
  // Another CodeMirror without them: its estimates, as before.
  if (!state || typeof state.printing !== "boolean" || typeof measure !== "function") return;
  state.printing = true;
  try {
    measure.call(view);
  } finally {
    state.printing = false;
  }
}

/** @type {{[key: string]: (view: EditorView) => boolean}} */
const KEY_COMMANDS = {
  Enter: (view) => newlineBeforeClosingBracket(view) || insertNewlineAndIndent(view), // as the keymap does
  Tab: indentMore,
  "Shift+Tab": indentLess,
  Backspace: deleteCharBackward,
  Delete: deleteCharForward,
  ArrowLeft: cursorCharLeft,
  ArrowRight: cursorCharRight,
  ArrowUp: cursorLineUp,
  ArrowDown: cursorLineDown,
  Home: cursorLineBoundaryBackward,
  End: cursorLineBoundaryForward,
  "Shift+ArrowLeft": selectCharLeft,
  "Shift+ArrowRight": selectCharRight,
  "Shift+ArrowUp": selectLineUp,
  "Shift+ArrowDown": selectLineDown,
  "Shift+Home": selectLineBoundaryBackward,
  "Shift+End": selectLineBoundaryForward,
  DocHome: cursorDocStart,
  DocEnd: cursorDocEnd,
  "Shift+DocHome": selectDocStart,
  "Shift+DocEnd": selectDocEnd,
  "Shift+Backspace": deleteCharBackward,
  "Shift+Delete": deleteCharForward,
  SelectAll: selectAll,
  Undo: undo,
  Redo: redo,
};

/**
 * Types `entries` into `view` at its cursor, as if they were pressed there:
 * what a learner typed after clicking the code, while this module loaded.
 * An entry is {text} (a character, or pasted text), {key} (a key of
 * KEY_COMMANDS) or {key: "Cut", from, to} (the characters Ctrl+X took). A
 * typed bracket is closed as the editor would (in code, not in a string).
 */
/**
 * @param {EditorView} view
 * @param {import("./keyhold.js").HeldEntry[]} entries
 */
export function typeKeys(view, entries) {
  for (const { text, key, from, to } of entries) {
    if (key === "Cut" && from !== undefined && to !== undefined) {
      // Held while the editor loaded (keyhold.js, which has copied them): these characters go.
      const end = Math.min(to, view.state.doc.length);
      view.dispatch({ changes: { from: Math.min(from, end), to: end }, selection: { anchor: Math.min(from, end) }, userEvent: "delete.cut", scrollIntoView: true });
      continue;
    }
    if (key) {
      KEY_COMMANDS[key]?.(view);
      continue;
    }
    const head = view.state.selection.main.head;
    const bracket = text.length === 1 && !openingBracketInText(view.state, head, text) ? insertBracket(view.state, text) : null;
    view.dispatch(bracket || { ...view.state.replaceSelection(text), userEvent: "input.type", scrollIntoView: true });
  }
}

/**
 * Make the editor's text `text` (another tab's edit, Reset), as one undoable
 * change of only the part that differs: the cursor stays where it was in the
 * text around it (replacing everything put it at the top of the cell).
 * @param {EditorView} view
 * @param {string} text
 */
export function replaceText(view, text) {
  const old = view.state.doc.toString();
  let start = 0;
  while (start < old.length && start < text.length && old[start] === text[start]) start++;
  let end = 0;
  while (end < old.length - start && end < text.length - start && old[old.length - 1 - end] === text[text.length - 1 - end]) end++;
  if (start === old.length && start === text.length) return;
  view.dispatch({ changes: { from: start, to: old.length - end, insert: text.slice(start, text.length - end) }, userEvent: "input.replace" });
}

/**
 * Scroll the editor's cursor into view, clear of the page's sticky bars
 * (Shift+Enter moves to the next cell: the learner must see where they type).
 * @param {EditorView} view
 */
export function reveal(view) {
  view.dispatch({ effects: EditorView.scrollIntoView(view.state.selection.main.head, { y: "center" }) });
}
