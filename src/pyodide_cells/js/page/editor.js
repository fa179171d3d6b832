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
import { Prec, RangeSetBuilder } from "@codemirror/state";
import {
  indentMore, indentLess, insertNewlineAndIndent, deleteCharBackward, deleteCharForward,
  cursorCharLeft, cursorCharRight, cursorLineUp, cursorLineDown, cursorLineBoundaryBackward,
  cursorLineBoundaryForward, selectCharLeft, selectCharRight, selectLineUp, selectLineDown,
  selectLineBoundaryBackward, selectLineBoundaryForward, selectAll, undo, redo, cursorDocStart, cursorDocEnd,
  selectDocStart, selectDocEnd,
} from "@codemirror/commands";
import { autocompletion, insertBracket } from "@codemirror/autocomplete";
import { python } from "@codemirror/lang-python";
import { HighlightStyle, bracketMatching, syntaxHighlighting } from "@codemirror/language";
import { editingRules, newlineBeforeClosingBracket, openingBracketInText } from "./editor_rules.js";
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

// CodeMirror's basicSetup without what a short notebook cell does not need and
// the page pays for in bytes: the search panel (Ctrl+F stays the browser's find),
// word completion, the lint and fold gutters. The rules for typing Python, the
// brackets and the keys are editor_rules.js's (tested in Node).
const editorSetup = [
  editingRules,
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  drawSelection(),
  dropCursor(),
  bracketMatching(),
  highlightActiveLine(),
];

/**
 * Completion from the live namespace, on Ctrl+Space only: asked of Python, which may be busy with a
 * run, so never on typing. Once the list is open, typing on filters it here (`validFor`).
 * @param {(code: string, cursor: number) => Promise<import("../protocol.js").Completions | null>} complete
 */
function pythonCompletion(complete) {
  /** @param {import("@codemirror/autocomplete").CompletionContext} context */
  const source = async (context) => {
    const answer = await complete(context.state.doc.toString(), context.pos);
    if (!answer || context.aborted || !answer.options.length) return null;
    return { from: answer.from, options: answer.options.map(({ label, type }) => ({ label, type })), validFor: /^\w*$/ };
  };
  // No interactionDelay: the list opens only when asked for, so Enter pressed at once is meant
  // for it (with CodeMirror's 75 ms, an Enter within them put a new line under "Val" instead).
  return autocompletion({ override: [source], activateOnTyping: false, icons: false, interactionDelay: 0 });
}

/**
 * An editor for one cell, appended to `parent`.
 * `label` names it for screen readers; `onRun` (Ctrl/Cmd+Enter), `onRunNext`
 * (Shift+Enter) and `onChange` (the text changed) are the cell's;
 * `topMargin()` is how much of the window's top the page covers (its sticky
 * bars), in CSS pixels: the cursor is never scrolled under it; `hangingColumns`
 * is the column a wrapped part of a line starts at (codelines.js).
 * Returns CodeMirror's EditorView.
 * `complete(code, cursor)` answers Ctrl+Space (CodeMirror's binding for completion) with the names
 * Python's namespace has for the dotted name at the cursor (protocol.js Completions), or null.
 * @param {{doc: string, parent: HTMLElement, label: string, onRun: () => void, onRunNext: () => void,
 *   onChange: () => void, topMargin?: () => number, hangingColumns: (text: string, tabSize: number) => number,
 *   complete?: (code: string, cursor: number) => Promise<import("../protocol.js").Completions | null>}} options
 */
export function createEditor({ doc, parent, label, onRun, onRunNext, onChange, topMargin = () => 0, hangingColumns, complete }) {
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
      complete ? pythonCompletion(complete) : [],
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
    const typed = /** @type {string} an entry with no key (nor run: cell.js runs those) is text (keyhold.js) */ (text);
    const head = view.state.selection.main.head;
    const bracket = typed.length === 1 && !openingBracketInText(view.state, head, typed) ? insertBracket(view.state, typed) : null;
    view.dispatch(bracket || { ...view.state.replaceSelection(typed), userEvent: "input.type", scrollIntoView: true });
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
