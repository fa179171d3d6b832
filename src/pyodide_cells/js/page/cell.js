// @ts-check
// One live cell: the parts of it, put together, and the code it holds. Its
// run state is the scheduler's; its parts' jobs are in modules of their own:
//
//   celltoolbar.js  the toolbar (Run, Reset, status), drawn from the scheduler
//   celleditor.js   the editor, made on first use, and the keys held meanwhile
//   editsync.js     the edit saved (storage.js), kept in step with other tabs
//   output.js       the output area
//
// The methods below that only hand on to those modules are the cell's API
// (cells.js, pagetools.js and window.pyodideCells call them).

import { el, headingText } from "./util.js";
import { OutputArea } from "./output.js";
import { holdFirstOutput } from "./hold.js";
import { showLines } from "./codelines.js";
import { LIMITS, cellName } from "../protocol.js";
import { makeToolbar, renderToolbar } from "./celltoolbar.js";
import * as lazyEditor from "./celleditor.js";
import * as editSync from "./editsync.js";

// Kept here too, where cells.js has always imported them.
export { loadEditor, editorState } from "./celleditor.js";
export { unsaved } from "./editsync.js";

/** @typedef {import("./scheduler.js").Scheduler} Scheduler @typedef {import("./storage.js").EditStore} EditStore */
/** @typedef {import("@codemirror/view").EditorView} EditorView */

export class Cell {
  /**
   * @param {HTMLElement} root  myst-nb's `div.cell`
   * @param {number} index
   * @param {{store: EditStore, run: (cell: Cell) => void, stop: () => void, isRunning: (cell: Cell) => boolean,
   *   runNext: (cell: Cell, rest?: {entries: import("./keyhold.js").HeldEntry[], focus: boolean}) => void,
   *   topMargin: () => number, afterStartup: (task: () => void) => void, edited: () => void, changed: () => void,
   *   restored: (cell: Cell) => void,
   *   complete: (code: string, cursor: number) => {waitsFor: string, ended: Promise<import("../protocol.js").Completions | null>}}} page
   */
  constructor(root, index, page) {
    this.root = root;
    this.index = index;
    this.page = page;
    const pre = /** @type {HTMLElement | null} */ (root.querySelector(".cell_input pre"));
    this.pre = pre;
    this.original = pre ? (pre.textContent || "").replace(/\n$/, "") : "";
    // The code as the page was built with it (highlighted, in lines: code_lines.py), to show again on Reset.
    this.originalLines = pre ? [...pre.childNodes].map((node) => node.cloneNode(true)) : [];
    let output = /** @type {HTMLElement | null} */ (root.querySelector(".cell_output"));
    if (!output) {
      // A cell with no output at build time: its output area is made here. A label on a plain
      // div is not read (ARIA prohibits it), so the area is a group.
      output = el("div", { class: "cell_output docutils container", role: "group" });
      root.append(output);
    }
    output.setAttribute("aria-live", "polite");
    output.setAttribute("aria-label", `Output of ${cellName(index)}`);
    this.output = new OutputArea(output);
    this.auto = root.classList.contains("tag_auto-rerun");
    /** @type {EditorView | null} CodeMirror's view, once made (ensureEditor) */
    this.editor = null;
    /** @type {Promise<EditorView> | null} */
    this.editorReady = null;
    this.editorFailed = false;
    /** @type {import("./keyhold.js").KeyHold | null} keys held while the editor loads (celleditor.js) */
    this.hold = null;
    /** @type {import("./keyhold.js").HeldEntry[]} */
    this.unapplied = [];
    this.ranHere = false; // a run has replaced the build-time output
    this.saved = page.store.get(index);
    this.synced = this.saved; // what this tab last read from or wrote to storage
    /** @type {{value: string | null} | null} another tab's edit, while both differ */
    this.conflict = null;
    /** The cell's code box: the code the page was built with, then its editor. */
    this.input = /** @type {HTMLElement} */ (root.querySelector(".cell_input"));
    const toolbar = makeToolbar(index, {
      run: () => (this.page.isRunning(this) ? this.page.stop() : this.page.run(this)),
      reset: () => this.reset(),
    });
    this.runButton = toolbar.runButton;
    this.resetButton = toolbar.resetButton;
    this.counter = toolbar.counter;
    this.statusText = toolbar.statusText;
    this.editedBadge = toolbar.editedBadge;
    this.notes = el("div", { class: "pc-cell-notes" });
    this.mount = el("div", { class: "pc-editor" });
    // Keys typed in the editor are the editor's: Sphinx's page shortcuts
    // (arrows turn the page, "/" jumps to search) listen on the document.
    this.mount.addEventListener("keydown", (event) => event.stopPropagation());
    this.input.before(toolbar.root, this.notes);
    this.input.append(this.mount);
    this.root.classList.add("pc-live");
    this.root.dataset.state = "idle";
    this.root.dataset.runs = "0";
    // The editor is made when its code is on the screen, or is used (celleditor.js).
    lazyEditor.makeOnUse(this);
    if (this.saved !== null && this.saved !== this.original) {
      this.showCode(this.saved); // until the editor is there, the code shown is the code that runs
      this.output.markStale("This output is from the original code; run the cell to see what your edited code gives.");
    }
    this.markEdited();
  }

  // ---------------------------------------------------------------- editor

  /** @param {HTMLElement} pre @param {MouseEvent} event */
  clickedCode(pre, event) {
    return lazyEditor.clickedCode(this, pre, event);
  }

  /** @param {EditorView} view @param {import("./keyhold.js").HeldEntry[]} entries @param {boolean} focus */
  replay(view, entries, focus) {
    return lazyEditor.replay(this, view, entries, focus);
  }

  /** The cell's CodeMirror view, made on first use (celleditor.js). @returns {Promise<EditorView>} */
  ensureEditor() {
    return lazyEditor.ensureEditor(this);
  }

  // ------------------------------------------------------------------ code

  /** The code that runs: the editor's, or the saved edit, or the page's. */
  get code() {
    if (this.editor) return this.editor.state.doc.toString();
    return this.saved !== null ? this.saved : this.original;
  }

  /** What storage should hold for the code now: null when it is the page's own. */
  get edit() {
    const code = this.code;
    return code === this.original ? null : code;
  }

  /** Show `text` as the cell's code (Reset, another tab's edit), in the editor or in place of it. @param {string} text */
  async setText(text) {
    if (this.editor) {
      const { replaceText } = await lazyEditor.loadEditor();
      replaceText(this.editor, text);
    } else {
      this.saved = text === this.original ? null : text;
      this.showCode(text);
      this.persist();
    }
  }

  /** Show `text` in place of the editor, not yet made: the page's highlighted code when it is that. @param {string} text */
  showCode(text) {
    if (!this.pre) return;
    showLines(this.pre, text);
    if (text === this.original) this.pre.replaceChildren(...this.originalLines.map((node) => node.cloneNode(true)));
  }

  // ---------------------------------------------------- saving (editsync.js)

  persist() {
    editSync.persist(this);
  }

  /** Another tab of this page saved `value` for this cell. @param {string | null} value */
  otherTab(value) {
    editSync.otherTab(this, value);
  }

  /** @param {"mine" | "theirs"} choice */
  resolve(choice) {
    return editSync.resolve(this, choice);
  }

  /** The whole storage was cleared (another site on this address did it): this page holds the only copy. */
  storageCleared() {
    editSync.storageCleared(this);
  }

  clearConflict() {
    editSync.clearConflict(this);
  }

  /** @param {string | null} why */
  unsavedBecause(why) {
    editSync.unsavedBecause(this, why);
  }

  /** How the page names this cell to the learner: "cell 4 (under “Second pass”)", its section's heading. */
  describe() {
    const title = headingText(this.root.closest("section"));
    return title ? `${cellName(this.index)} (under “${title}”)` : cellName(this.index);
  }

  markEdited() {
    const edited = this.code !== this.original;
    if (this.editedBadge.hidden === !edited) return;
    this.editedBadge.hidden = !edited;
    this.page.edited();
  }

  /** Restore the page's code, asking first if it was edited (`ask: false`: the page's Reset asked already). */
  async reset({ ask = true } = {}) {
    if (ask && this.code !== this.original && !window.confirm("Discard your edits to this cell and restore the original code?")) return;
    this.clearConflict();
    await this.setText(this.original);
    this.saved = null;
    this.persist();
    this.page.restored(this);
    // The build-time output is the original code's again; a run's output is not.
    this.output.unmarkStale();
    if (this.ranHere) this.output.markStale("This output is from the code before Reset; run the cell to see what the original code gives.");
  }

  /**
   * Ctrl+Space: the names that complete the one at the cursor, from Python's namespace. A
   * completion waits for what Python is doing; the toolbar says what it waits for meanwhile.
   * @param {string} code @param {number} cursor
   */
  async complete(code, cursor) {
    const { waitsFor, ended } = this.page.complete(code, cursor);
    const note = waitsFor ? `Completion waits for ${waitsFor}…` : "";
    const before = this.statusText.textContent;
    if (note) this.statusText.textContent = note;
    try {
      return await ended;
    } finally {
      // What the toolbar said comes back, unless a run's state has been drawn over the note meanwhile.
      if (note && this.statusText.textContent === note) this.statusText.textContent = before;
    }
  }

  // -------------------------------------------------------------- running

  /** Where the scheduler sends this cell's output. @returns {import("./scheduler.js").Sink} */
  get sink() {
    return holdFirstOutput({
      start: () => {
        this.ranHere = true;
        this.output.begin();
      },
      end: () => this.output.end(),
      stream: (name, text) => this.output.appendStream(name, text),
      bundle: (data, kind, displayId, update) => this.output.appendBundle(data, kind, displayId, update),
      clear: (wait) => this.output.clearOutput(wait),
      error: (msg) => this.output.appendError(msg),
    }, LIMITS.streamFlushMs);
  }

  /** Draw the toolbar from the scheduler's state (celltoolbar.js). @param {Scheduler} s */
  render(s) {
    renderToolbar(this, s);
  }
}
