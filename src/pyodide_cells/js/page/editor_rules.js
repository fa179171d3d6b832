// @ts-check
// The cell editor's rules for typing Python: its indentation (a 4-space unit,
// Enter's indentation from the parsed tree, back a level after a statement that
// ends its block, `else:` as typed), its brackets (closed in code, not in text)
// and its keys. They are functions of CodeMirror's EditorState, with no DOM:
// editor.js puts them in the editor, and tests/js/editor.test.mjs types into a
// state with them under node --test, through this same keymap and input handlers.

import { EditorView, keymap } from "@codemirror/view";
import { EditorSelection, EditorState, Prec } from "@codemirror/state";
import { history, defaultKeymap, historyKeymap, indentWithTab } from "@codemirror/commands";
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import {
  IndentContext, ensureSyntaxTree, getIndentation, indentOnInput, indentService, indentString, indentUnit, syntaxTree,
} from "@codemirror/language";

/** @typedef {import("@lezer/common").SyntaxNode} SyntaxNode */

// Python indents by 4 spaces (PEP 8), as every Python editor does; CodeMirror's
// default unit is 2, which made hand-typed code fail with IndentationError.
export const PYTHON_INDENT = "    ";

// Enter after a statement that ends its block (pass, return, raise, break,
// continue) goes back one level from the statement's first line, as IDLE,
// VS Code and PyCharm do: a line after it in the same block would never run.
// Also after the last line of one that spans lines (`return max(a,` / `b)`).
// Only for Enter (a simulated break after the whole statement); a statement
// still open (an unclosed bracket or string: a parse error in it) is left to
// the syntax's rules.
const BLOCK_EXIT = /^(Pass|Break|Continue|Return|Raise)Statement$/;
export const dedentAfterBlockExit = indentService.of((cx, pos) => {
  if (cx.simulatedBreak !== pos) return undefined;
  const line = cx.lineAt(pos, -1);
  const start = line.from + /** @type {RegExpExecArray} it always matches */ (/^\s*/.exec(line.text))[0].length;
  const tree = syntaxTree(cx.state);
  /** @type {SyntaxNode | null} */
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
export const INDENT_PARSE_BUDGET_MS = 500;
export const indentFromParsedTree = Prec.highest(indentService.of((cx, pos) => {
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
/**
 * @param {{state: EditorState, dispatch: (tr: import("@codemirror/state").Transaction) => void}} view
 * @returns {boolean} whether it made the new line
 */
export function newlineBeforeClosingBracket(view) {
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
export function openingBracketInText(state, pos, text) {
  if (text.length !== 1 || !"([{".includes(text)) return false;
  const tree = ensureSyntaxTree(state, pos, INDENT_PARSE_BUDGET_MS) ?? syntaxTree(state);
  for (let /** @type {SyntaxNode | null} */ node = tree.resolveInner(pos, -1); node; node = node.parent) {
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
export const noClosingBracketInText = Prec.highest(EditorView.inputHandler.of((view, from, to, text, insert) => {
  if (!openingBracketInText(view.state, from, text)) return false;
  view.dispatch(insert()); // as typed, without closeBrackets
  return true;
}));

// The editor's keys, in its precedence order after the Prec.highest ones above
// (enterBeforeClosingBracket) and the cell's own (editor.js). Tab indents and
// Shift+Tab dedents; Escape then Tab leaves the editor (CodeMirror's tab focus
// mode, its documented accessible pattern), so Tab never traps the keyboard.
export const editorKeymap = [...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab];

/**
 * Everything of the editor that lives in its state: the rules above, brackets,
 * history, the keymap. The Python language (python()) is added with it.
 * @type {import("@codemirror/state").Extension[]}
 */
export const editingRules = [
  indentUnit.of(PYTHON_INDENT),
  // Brackets close themselves; quotes do not: with triple-quoted docstrings,
  // auto-closed quotes left learners with """Doc.""""" when they typed the end.
  Prec.highest(EditorState.languageData.of(() => [{ closeBrackets: { brackets: ["(", "[", "{"] } }])),
  EditorState.tabSize.of(PYTHON_INDENT.length),
  history(),
  EditorState.allowMultipleSelections.of(true),
  indentOnInput(),
  dedentAfterBlockExit,
  indentFromParsedTree,
  enterBeforeClosingBracket,
  noClosingBracketInText,
  closeBrackets(),
  keymap.of(editorKeymap),
];
