// @ts-check
// Keys typed between a click on a cell's code and the moment its editor is
// there (its first use may have to load CodeMirror): held back from the page,
// then typed into the editor (editor.js typeKeys), so nothing typed is lost.

// Where in `element`'s text the point (x, y) falls, as a character offset; null
// when it falls outside it.
/**
 * @param {Node} element
 * @param {number} x
 * @param {number} y
 * @returns {number | null}
 */
export function offsetInText(element, x, y) {
  /** @type {Node | null} */
  let node = null;
  let offset = 0;
  if (document.caretPositionFromPoint) {
    const caret = document.caretPositionFromPoint(x, y);
    if (caret) ({ offsetNode: node, offset } = caret);
  } else if (document.caretRangeFromPoint) {
    const range = document.caretRangeFromPoint(x, y);
    if (range) ({ startContainer: node, startOffset: offset } = range);
  }
  if (!node || !element.contains(node)) return null;
  return textOffset(element, node, offset);
}

/** How many characters of `element`'s text come before the point (node, offset) inside it. */
function textOffset(/** @type {Node} */ element, /** @type {Node} */ node, /** @type {number} */ offset) {
  const before = document.createRange();
  before.setStart(element, 0);
  before.setEnd(node, offset);
  return before.toString().length;
}

// What is typed from a click on a cell's code until its editor is there (its
// first use may have to load CodeMirror): held back from the page, then typed
// into the editor, so nothing typed is lost. Entries are {text} (characters,
// a paste), {key} (an editing key: Enter, Backspace, Delete, arrows, Home,
// End; DocHome and DocEnd for Ctrl/Cmd+Home and End; SelectAll, Undo and Redo
// for Ctrl/Cmd+A, Z, Shift+Z and Y; Cut, with
// the characters it takes, for Ctrl/Cmd+X) or
// {run: "run" | "run-next"} (Ctrl/Cmd+Enter, Shift+Enter). Focus or a
// click going outside the cell ends the hold (`left`): keys then go where the
// learner went, and the editor, when it comes, does not take the focus back.
// Tab is held too: in the editor it indents (Escape, then Tab, leaves it).
const HELD_KEYS = new Set(["Enter", "Tab", "Backspace", "Delete", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"]);

/** @typedef {{text?: string, key?: string, from?: number, to?: number, run?: "run" | "run-next"}} HeldEntry */

/**
 * The page's selection within `element`, as character offsets into its text; null
 * when nothing is selected there or the selection reaches outside it.
 * @param {Node} element
 * @returns {{from: number, to: number} | null}
 */
function selectedIn(element) {
  const selection = getSelection();
  if (!selection || selection.isCollapsed || !selection.rangeCount) return null;
  const range = selection.getRangeAt(0);
  if (!element.contains(range.startContainer) || !element.contains(range.endContainer)) return null;
  return { from: textOffset(element, range.startContainer, range.startOffset), to: textOffset(element, range.endContainer, range.endOffset) };
}

export class KeyHold {
  /** @param {HTMLElement} root  the cell @param {number | null} offset */
  constructor(root, offset) {
    this.root = root;
    this.offset = offset; // where in the code the cursor goes (offsetInText), or null
    /** @type {HeldEntry[]} */
    this.entries = [];
    this.left = false;
    this.onKey = (/** @type {KeyboardEvent} */ event) => {
      if (event.isComposing) return;
      const shortcut = (event.ctrlKey && !event.altKey) || event.metaKey; // AltGr is Ctrl+Alt: it types
      const key = event.key.toLowerCase();
      /** @type {HeldEntry | null} */
      let entry = null;
      if (event.key === "Enter" && shortcut) entry = { run: "run" };
      else if (event.key === "Enter" && event.shiftKey) entry = { run: "run-next" };
      // Select all, as a learner does before a paste: of the cell's code, not of the page (it is
      // selected on the page as well, so that Ctrl+C copies it). Undo and redo, of what was held.
      else if (shortcut && key === "a" && !event.shiftKey) {
        entry = { key: "SelectAll" };
        const code = this.root.querySelector(".cell_input pre");
        if (code) getSelection()?.selectAllChildren(code);
      } else if (shortcut && key === "x" && !event.shiftKey) {
        // Cut what is selected of the cell's code on the page (after Ctrl+A, all of it): it goes
        // to the clipboard now, while the key press lets the page write it, and the editor
        // deletes the same characters. Nothing selected there: nothing is cut.
        const code = this.root.querySelector(".cell_input pre");
        const range = code ? selectedIn(code) : null;
        if (!range) return;
        entry = { key: "Cut", ...range };
        document.execCommand("copy");
      } else if (shortcut && ((key === "z" && event.shiftKey) || key === "y")) entry = { key: "Redo" };
      else if (shortcut && key === "z") entry = { key: "Undo" };
      else if (shortcut && (event.key === "Home" || event.key === "End")) entry = { key: `${event.shiftKey ? "Shift+" : ""}Doc${event.key}` };
      else if (shortcut) return; // Ctrl+V arrives as a paste event, Ctrl+C copies what is selected
      else if (event.key.length === 1) entry = { text: event.key }; // Option/AltGr characters too
      else if (HELD_KEYS.has(event.key)) entry = { key: event.shiftKey && event.key !== "Enter" ? `Shift+${event.key}` : event.key };
      else if (event.key === "Escape") return this.leave(); // leaving the code
      if (!entry) return;
      this.entries.push(entry);
      event.preventDefault();
      event.stopPropagation(); // the page's own shortcuts (arrows turn pages, "/" searches) must not see it
    };
    this.onPaste = (/** @type {ClipboardEvent} */ event) => {
      this.entries.push({ text: event.clipboardData ? event.clipboardData.getData("text/plain") : "" });
      event.preventDefault();
    };
    const onElsewhere = (/** @type {Event} */ event) => {
      if (!this.root.contains(/** @type {Node} */ (event.target))) this.leave();
    };
    /** @type {[string, (event: any) => void][]} */
    this.listeners = [["keydown", this.onKey], ["paste", this.onPaste], ["focusin", onElsewhere], ["pointerdown", onElsewhere]];
    this.listen();
  }

  listen() {
    for (const [type, listener] of this.listeners) window.addEventListener(type, listener, true);
  }

  // A new click on the same code while the editor still loads: hold again, from there.
  /** @param {number | null} offset */
  resume(offset) {
    if (offset != null) this.offset = offset;
    if (this.left) {
      this.left = false;
      this.listen();
    }
  }

  leave() {
    this.left = true;
    this.stop();
  }

  stop() {
    for (const [type, listener] of this.listeners) window.removeEventListener(type, listener, true);
  }
}
