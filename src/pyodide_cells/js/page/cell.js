// @ts-check
// One live cell: its toolbar, its editor (made on first use), its output area
// and its saved edit. Its run state is the scheduler's: render() draws the
// toolbar from it. What the learner typed is never dropped without a word:
// an edit that cannot be saved, or that another tab changed, says so here.

import { el, headingText, loadOnce } from "./util.js";
import { KeyHold, offsetInText } from "./keyhold.js";
import { OutputArea } from "./output.js";
import { holdFirstOutput } from "./hold.js";
import { hangingColumns, showLines } from "./codelines.js";
import { LIMITS, cellName } from "../protocol.js";
import { STOPPED } from "./scheduler.js";
import { describe } from "./statusbar.js";

/** @typedef {import("./scheduler.js").Scheduler} Scheduler @typedef {import("./storage.js").EditStore} EditStore */
/** @typedef {import("@codemirror/view").EditorView} EditorView */

// CodeMirror comes in its own chunk, when the first editor is made (editor.js).
/** @type {() => Promise<typeof import("./editor.js")>} */
export const loadEditor = loadOnce(() => import("./editor.js"));

/** Cells whose edit is not saved in the browser: leaving the page asks first. */
export const unsaved = new Set();

const NOT_SAVED = {
  full: "Not saved: this browser's storage for this site is full, so your edit lives only in this page until you leave it. Copy your code somewhere safe (Download .py, above, keeps the exercise), or free space (other pages of this site, or other sites on this address, use it).",
  disabled: "Not saved: this browser does not let the page keep edits (private browsing or blocked storage), so your edit lives only in this page until you leave it.",
};

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
    /** @type {KeyHold | null} */
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
    this.runButton = el("button", { type: "button", class: "pc-button pc-run", title: "Run this cell (Ctrl+Enter)", onclick: () => (this.page.isRunning(this) ? this.page.stop() : this.page.run(this)) }, "▶ Run");
    this.resetButton = el("button", { type: "button", class: "pc-button pc-reset", title: "Restore the original code", onclick: () => this.reset() }, "Reset");
    // The cell's name, the one number the page uses for it (protocol.cellName): the status bar's
    // "running cell 4" and a traceback's File "<cell 4>" say the same. Not Jupyter's execution
    // count, which changes with every run and is named by no traceback of an earlier run's function.
    this.counter = el("span", { class: "pc-count", "aria-hidden": "true", text: cellName(this.index) });
    this.statusText = el("span", { class: "pc-cell-status", text: "" });
    this.editedBadge = el("span", { class: "pc-edited", text: "edited", hidden: "" });
    this.notes = el("div", { class: "pc-cell-notes" });
    const toolbar = el("div", { class: "pc-toolbar" }, this.counter, this.runButton, this.resetButton, this.editedBadge, this.statusText);
    this.mount = el("div", { class: "pc-editor" });
    // Keys typed in the editor are the editor's: Sphinx's page shortcuts
    // (arrows turn the page, "/" jumps to search) listen on the document.
    this.mount.addEventListener("keydown", (event) => event.stopPropagation());
    this.input.before(toolbar, this.notes);
    this.input.append(this.mount);
    this.root.classList.add("pc-live");
    this.root.dataset.state = "idle";
    this.root.dataset.runs = "0";
    // The editor is made when its code is on the screen, or is used: a
    // page of ten editors made at once holds up the main thread while Python
    // loads. Until then the highlighted code the page was built with shows.
    if (pre) {
      pre.title = "Click to edit";
      pre.addEventListener("pointerdown", () => loadEditor().catch(() => {}), { once: true }); // a head start
      pre.addEventListener("click", (event) => this.clickedCode(pre, event));
    }
    // Tab onto Run makes the editor (the next Tab goes into it), if its code is on the screen
    // (as cells.js makes them).
    this.runButton.addEventListener("focus", () => this.page.afterStartup(() => {
      const box = this.input.getBoundingClientRect();
      if (box.bottom > 0 && box.top < innerHeight) this.ensureEditor().catch(() => {});
    }));
    if (!pre) this.ensureEditor().catch(() => {});
    if (this.saved !== null && this.saved !== this.original) {
      this.showCode(this.saved); // until the editor is there, the code shown is the code that runs
      this.output.markStale("This output is from the original code; run the cell to see what your edited code gives.");
    }
    this.markEdited();
  }

  /**
   * The editor takes the code's place: the cursor goes where the click was
   * (taken now, in the code's text: by the time the editor is there, the page
   * may have moved under the pointer), then what was typed meanwhile.
   * @param {HTMLElement} pre @param {MouseEvent} event
   */
  async clickedCode(pre, event) {
    const offset = offsetInText(pre, event.clientX, event.clientY);
    if (this.hold) {
      this.hold.resume(offset); // a second click (a double-click) while it loads
      return;
    }
    const hold = (this.hold = new KeyHold(this.root, offset));
    const view = await this.ensureEditor().catch(() => null);
    this.hold = null;
    hold.stop();
    // Kept until an editor loads: the next click tries again (ensureEditor said why on the cell).
    this.unapplied = [...this.unapplied, ...hold.entries];
    if (!view) return;
    if (hold.offset != null) view.dispatch({ selection: { anchor: Math.min(hold.offset, view.state.doc.length) } });
    if (!hold.left) view.focus();
    const entries = this.unapplied;
    this.unapplied = [];
    await this.replay(view, entries, !hold.left);
  }

  /**
   * Types what was held while the editor loaded into it; a Shift+Enter among
   * it runs this cell and goes on typing in the next one, which takes the
   * focus only if the learner has not gone elsewhere (`focus`).
   * @param {EditorView} view @param {import("./keyhold.js").HeldEntry[]} entries @param {boolean} focus
   */
  async replay(view, entries, focus) {
    if (!entries.length) return;
    const { typeKeys } = await loadEditor();
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (!entry.run) {
        typeKeys(view, [entry]);
        continue;
      }
      if (entry.run === "run") this.page.run(this);
      else return this.page.runNext(this, { entries: entries.slice(i + 1), focus });
    }
  }

  /**
   * Resolves to the cell's CodeMirror view, made on first use. When CodeMirror
   * cannot load (the site went offline before it was ever loaded), the cell
   * says so, keeps showing its code, and the next use tries again.
   * @returns {Promise<EditorView>}
   */
  ensureEditor() {
    this.editorReady ||= loadEditor()
      .catch((err) => {
        this.editorReady = null;
        this.editorFailed = true;
        this.statusText.textContent = "The editor could not load; check the connection, then click the code again (what you typed is kept).";
        throw err;
      })
      .then(({ createEditor }) => {
        if (this.editorFailed) this.statusText.textContent = "";
        this.editorFailed = false;
        this.editor = createEditor({
          doc: this.code,
          parent: this.mount,
          label: `Code of ${cellName(this.index)}`,
          onRun: () => this.page.run(this),
          onRunNext: () => this.page.runNext(this),
          onChange: () => this.persist(),
          topMargin: this.page.topMargin,
          hangingColumns,
          complete: (code, cursor) => this.complete(code, cursor),
        });
        if (this.pre) this.pre.closest(".highlight-ipython3, .highlight-python, div.highlight")?.setAttribute("hidden", "");
        return this.editor;
      });
    return this.editorReady;
  }

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
      const { replaceText } = await loadEditor();
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

  // --------------------------------------------------------------- saving

  persist() {
    this.page.changed();
    const value = this.edit;
    this.saved = value;
    this.markEdited();
    if (this.conflict) return this.unsavedBecause(null); // not written until the learner chooses
    if (value === this.synced) {
      // Already what storage holds (saved here, or just taken from another tab): writing it
      // again would race the other tab's next save.
      this.unsavedBecause(null);
      unsaved.delete(this);
      return;
    }
    // Another tab wrote since this one last looked (its storage event may not have come yet).
    const stored = this.page.store.get(this.index);
    if (stored !== this.synced && stored !== value) return this.otherTab(stored);
    const result = this.page.store.set(this.index, value);
    if (result.ok === false) {
      unsaved.add(this);
      this.unsavedBecause(NOT_SAVED[result.reason]);
    } else {
      this.synced = value;
      this.unsavedBecause(null);
      unsaved.delete(this);
    }
  }

  /**
   * Another tab of this page saved `value` for this cell. If this tab's code
   * is still what it last saved, take the other tab's; otherwise ask, and
   * save neither over the other until the learner chooses.
   * @param {string | null} value
   */
  otherTab(value) {
    const mine = this.edit;
    if (value === mine) {
      this.synced = value;
      this.clearConflict();
      return;
    }
    if (mine === this.synced && !this.conflict) {
      this.synced = value;
      this.setText(value === null ? this.original : value);
      this.statusText.textContent = value === null ? "Reset in another tab" : "Updated with the edit made in another tab";
      return;
    }
    this.conflict = { value };
    unsaved.add(this);
    const use = el("button", { type: "button", class: "pc-button", text: "Use the other tab's code", onclick: () => this.resolve("theirs") });
    const keep = el("button", { type: "button", class: "pc-button", text: "Keep this code", onclick: () => this.resolve("mine") });
    this.notes.replaceChildren(
      el("p", { class: "pc-note pc-conflict", role: "alert" },
        "This cell was also edited in another tab of this page. Until you choose, neither tab's code is saved over the other. ",
        use, " ", keep),
    );
  }

  /** @param {"mine" | "theirs"} choice */
  async resolve(choice) {
    const conflict = this.conflict;
    if (!conflict) return;
    this.clearConflict();
    this.synced = this.page.store.get(this.index);
    if (choice === "theirs") await this.setText(conflict.value === null ? this.original : conflict.value);
    this.persist();
    this.runButton.focus();
  }

  /** The whole storage was cleared (another site on this address did it): this page holds the only copy. */
  storageCleared() {
    this.synced = null;
    this.persist();
  }

  clearConflict() {
    this.conflict = null;
    this.notes.replaceChildren();
    unsaved.delete(this);
  }

  /** Say why the edit is not saved (null: it is, or a conflict note already says so). @param {string | null} why */
  unsavedBecause(why) {
    if (this.conflict) return;
    if (!why) {
      this.notes.replaceChildren();
      return;
    }
    if (this.notes.textContent !== why) this.notes.replaceChildren(el("p", { class: "pc-note pc-not-saved", role: "alert", text: why }));
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

  /** Draw the toolbar from the scheduler's state. @param {Scheduler} s */
  render(s) {
    const run = s.latest.get(this.index);
    const state = run ? run.state : "idle";
    this.root.dataset.state = state;
    this.root.dataset.runs = String(s.ended[this.index]);
    let text = "";
    if (state === "queued" && run) {
      const ahead = s.ahead(run);
      if (s.kernel.state === "loading") text = s.kernel.restarts ? "Queued: waiting for Python to restart" : "Queued: waiting for Python to load";
      else text = ahead ? `Queued: after ${describe(ahead)}` : "Queued";
    } else if (state === "running") text = s.stopping ? "Stopping…" : "Running…";
    else if (state === "done" && run) text = `Ran in ${(run.answer?.ms ?? 0).toFixed(1)} ms`;
    else if (state === "error" && run) text = run.reason || "Failed: see the error below";
    else if (state === "interrupted" && run) text = run.reason === STOPPED ? "Stopped (KeyboardInterrupt)" : `Stopped: ${run.reason}`;
    else if (state === "cancelled" && run) text = `Cancelled: ${run.reason}`;
    if (run && this.statusText.textContent !== text && !this.editorFailed) this.statusText.textContent = text;
    const busy = state === "running" || state === "queued";
    this.runButton.textContent = state === "running" ? "■ Stop" : "▶ Run";
    this.runButton.title = state === "running" ? "Stop the running code" : "Run this cell (Ctrl+Enter)";
    this.runButton.classList.toggle("pc-stop", state === "running");
    this.runButton.setAttribute("aria-busy", busy ? "true" : "false");
  }
}
