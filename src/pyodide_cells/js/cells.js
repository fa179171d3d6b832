// The page side of the cell runtime: turns myst-nb code cells into live,
// editable cells that run on Pyodide in a Web Worker (worker.js).
//
// Cells keep their build-time outputs until they run. All cells of a page share
// one Python namespace; running a cell first runs the earlier cells that have
// not run yet in this session, so names they define exist, as in the baked page.

import { el } from "./util.js";
import { loadViz, upgradeGraphs } from "./graph.js";
import { ChecksConsole } from "./checks.js";

const CONFIG = window.PYODIDE_CELLS_CONFIG || {};
const MAX_OUTPUT_CHARS = 200_000; // per cell and run: more would only freeze the page
const MAX_RICH_CHARS = 2_000_000; // HTML, SVG... per cell and run (runner.py refuses one over 1,000,000)

// CodeMirror comes in its own chunk, when the first editor is made (editor.js).
let editorModule = null;
function loadEditor() {
  editorModule ||= import("./editor.js").catch((err) => {
    editorModule = null; // the next use tries again
    throw err;
  });
  return editorModule;
}

// Where in `element`'s text the point (x, y) falls, as a character offset; null
// when it falls outside it.
function offsetInText(element, x, y) {
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
  const before = document.createRange();
  before.setStart(element, 0);
  before.setEnd(node, offset);
  return before.toString().length;
}

// Terminal escape sequences (colours, cursor moves): a cell's output drops them.
const ANSI_ESCAPE = /\x1b(\[[0-9;?]*[ -\/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z])/g;

// Each line of `text` as a terminal leaves it: after a carriage return, what
// follows overwrites the line from its start ("50%\r100%" shows "100%").
function overwriteReturns(text) {
  if (!text.includes("\r")) return text;
  return text
    .split("\n")
    .map((line) => line.split("\r").reduce((shown, part) => part + shown.slice(part.length), ""))
    .join("\n");
}

// What is typed from a click on a cell's code until its editor is there (its
// first use may have to load CodeMirror): held back from the page, then typed
// into the editor, so nothing typed is lost. Entries are {text} (characters,
// a paste), {key} (an editing key: Enter, Backspace, Delete, arrows, Home,
// End) or {run: "run" | "run-next"} (Ctrl/Cmd+Enter, Shift+Enter). Focus or a
// click going outside the cell ends the hold (`left`): keys then go where the
// learner went, and the editor, when it comes, does not take the focus back.
const HELD_KEYS = new Set(["Enter", "Backspace", "Delete", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"]);

class KeyHold {
  constructor(root, offset) {
    this.root = root;
    this.offset = offset; // where in the code the cursor goes (offsetInText), or null
    this.entries = [];
    this.left = false;
    this.onKey = (event) => {
      if (event.isComposing) return;
      const shortcut = (event.ctrlKey && !event.altKey) || event.metaKey; // AltGr is Ctrl+Alt: it types
      let entry = null;
      if (event.key === "Enter" && shortcut) entry = { run: "run" };
      else if (event.key === "Enter" && event.shiftKey) entry = { run: "run-next" };
      else if (shortcut) return; // Ctrl+V arrives as a paste event
      else if (event.key.length === 1) entry = { text: event.key }; // Option/AltGr characters too
      else if (HELD_KEYS.has(event.key)) entry = { key: event.shiftKey && event.key !== "Enter" ? `Shift+${event.key}` : event.key };
      else if (event.key === "Tab" || event.key === "Escape") return this.leave(); // leaving the code
      if (!entry) return;
      this.entries.push(entry);
      event.preventDefault();
      event.stopPropagation(); // the page's own shortcuts (arrows turn pages, "/" searches) must not see it
    };
    this.onPaste = (event) => {
      this.entries.push({ text: event.clipboardData ? event.clipboardData.getData("text/plain") : "" });
      event.preventDefault();
    };
    const onElsewhere = (event) => {
      if (!this.root.contains(event.target)) this.leave();
    };
    this.listeners = [["keydown", this.onKey], ["paste", this.onPaste], ["focusin", onElsewhere], ["pointerdown", onElsewhere]];
    this.listen();
  }

  listen() {
    for (const [type, listener] of this.listeners) window.addEventListener(type, listener, true);
  }

  // A new click on the same code while the editor still loads: hold again, from there.
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
const STORAGE_PREFIX = `pyodide-cells:v1:${location.pathname}:`;

const runtime = {
  state: "loading", // loading | ready | error
  worker: null,
  cells: [],
  pending: new Map(), // run id -> {cell, resolve}
  checks: new Map(), // check id -> resolve
  nextId: 1,
  startedAt: performance.now(),
  restored: false, // true when the worker started from this browser's start-up snapshot (worker.js)
};

// ---------------------------------------------------------------- helpers ---

// Editors for cells that scroll into view are made once Python has started and
// the cells queued meanwhile have run, in idle time: on a 2-core machine every
// millisecond of main-thread work while Python starts in the worker delays it,
// and an editor being made would hold up the first output. Until then the code
// the page was built with shows, highlighted; a click on it makes its editor at once.
const startupWaiters = [];
function afterStartup(task) {
  startupWaiters.push(task);
  startupEnded();
}
function startupEnded() {
  if (runtime.state === "loading" || runtime.pending.size > 0) return; // called again when they end
  for (const task of startupWaiters.splice(0)) (window.requestIdleCallback || setTimeout)(() => task());
}

const storage = {
  get(key) {
    try {
      return window.localStorage.getItem(STORAGE_PREFIX + key);
    } catch {
      return null; // storage disabled (private mode, sandboxed frame)
    }
  },
  set(key, value) {
    try {
      if (value === null) window.localStorage.removeItem(STORAGE_PREFIX + key);
      else window.localStorage.setItem(STORAGE_PREFIX + key, value);
    } catch {
      /* quota or disabled storage: the edit stays in the editor */
    }
  },
};

// ------------------------------------------------------------ status bar ---

const bar = {
  root: null,
  text: null,
  progress: null,
  build() {
    this.text = el("span", { class: "pc-runtime-text", text: "Python: starting…" });
    this.progress = el("progress", { class: "pc-runtime-progress", max: "4", value: "0", "aria-label": "Python runtime loading progress" });
    const runAllButton = el("button", { type: "button", class: "pc-button pc-run-all", text: "Run all", onclick: () => runAll() });
    const restart = el("button", { type: "button", class: "pc-button", text: "Restart", title: "Forget every name the cells defined", onclick: () => restartRuntime() });
    this.stop = el("button", { type: "button", class: "pc-button pc-stop", text: "■ Stop", title: "Stop the running code", disabled: true, onclick: () => stopPython() });
    this.root = el(
      "div",
      { class: "pc-runtime", role: "status", "aria-live": "polite", "data-state": "loading" },
      el("span", { class: "pc-runtime-dot", "aria-hidden": "true" }),
      this.text,
      this.progress,
      el("span", { class: "pc-runtime-actions" }, this.stop, runAllButton, restart),
    );
    const firstCell = document.querySelector("div.cell");
    const article = document.querySelector("article") || document.body;
    const anchor = article.querySelector("h1");
    if (anchor) anchor.after(this.root);
    else if (firstCell) firstCell.before(this.root);
    else article.prepend(this.root);
  },
  set(state, message, step, steps) {
    runtime.state = state;
    this.stop.disabled = state !== "running";
    document.documentElement.dataset.pyodideState = state;
    this.root.dataset.state = state;
    this.text.textContent = message;
    if (state === "loading") {
      this.progress.hidden = false;
      this.progress.max = steps || 4;
      this.progress.value = step || 0;
    } else {
      this.progress.hidden = true;
    }
  },
};

// ------------------------------------------------------------------ cells ---

class Cell {
  constructor(root, index) {
    this.root = root;
    this.index = index;
    this.ranInSession = false;
    const pre = root.querySelector(".cell_input pre");
    this.original = pre ? pre.textContent.replace(/\n$/, "") : "";
    this.output = root.querySelector(".cell_output");
    if (!this.output) {
      this.output = el("div", { class: "cell_output docutils container" });
      root.append(this.output);
    }
    this.output.setAttribute("aria-live", "polite");
    this.output.setAttribute("aria-label", `Output of cell ${index + 1}`);
    this.auto = root.classList.contains("tag_auto-rerun");
    this.exercise = root.classList.contains("tag_exercise");
    this.build(root.querySelector(".cell_input"), pre);
  }

  build(input, pre) {
    this.saved = storage.get(`cell-${this.index}`);
    this.editor = null; // CodeMirror's view, once made (ensureEditor)
    this.editorReady = null;
    this.pre = pre;
    this.runButton = el("button", { type: "button", class: "pc-button pc-run", title: "Run this cell (Ctrl+Enter)", onclick: () => (this.root.dataset.state === "running" ? stopPython() : this.run()) }, "▶ Run");
    this.resetButton = el("button", { type: "button", class: "pc-button pc-reset", title: "Restore the original code", onclick: () => this.reset() }, "Reset");
    this.counter = el("span", { class: "pc-count", "aria-hidden": "true", text: "[ ]" });
    this.statusText = el("span", { class: "pc-cell-status", text: "" });
    this.editedBadge = el("span", { class: "pc-edited", text: "edited", hidden: "" });
    const toolbar = el("div", { class: "pc-toolbar" }, this.counter, this.runButton, this.resetButton, this.editedBadge, this.statusText);
    this.mount = el("div", { class: "pc-editor" });
    // Keys typed in the editor are the editor's: Sphinx's page shortcuts
    // (arrows turn the page, "/" jumps to search) listen on the document.
    this.mount.addEventListener("keydown", (event) => event.stopPropagation());
    input.before(toolbar);
    input.append(this.mount);
    this.root.classList.add("pc-live");
    this.root.dataset.state = "idle";
    // The editor is made when the cell comes near the screen, or is used: a
    // page of ten editors made at once holds up the main thread while Python
    // loads. Until then the highlighted code the page was built with shows.
    if (pre) {
      pre.title = "Click to edit";
      pre.addEventListener("pointerdown", () => loadEditor().catch(() => {}), { once: true }); // a head start
      pre.addEventListener("click", async (event) => {
        // The editor takes the code's place: the cursor goes where the click was
        // (taken now, in the code's text: by the time the editor is there, the
        // page may have moved under the pointer), then what was typed meanwhile.
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
        this.unapplied = [...(this.unapplied || []), ...hold.entries];
        if (!view) return;
        if (hold.offset != null) view.dispatch({ selection: { anchor: Math.min(hold.offset, view.state.doc.length) } });
        if (!hold.left) view.focus();
        const entries = this.unapplied;
        this.unapplied = [];
        await this.replay(view, entries, !hold.left);
      });
    }
    this.runButton.addEventListener("focus", () => afterStartup(() => this.ensureEditor().catch(() => {})));
    if (this.saved !== null || !pre) this.ensureEditor().catch(() => {});
    if (this.saved !== null && this.saved !== this.original) {
      // Until the editor is there, the code shown is the code that runs.
      if (pre) pre.textContent = this.saved;
      // Restored edits sit above the output of the original code: say so.
      this.output.classList.add("pc-stale");
      this.output.prepend(el("p", { class: "pc-stale-note", text: "This output is from the original code; run the cell to see what your edited code gives." }));
    }
    this.markEdited();
  }

  // Types what was held while the editor loaded (KeyHold) into it; a
  // Shift+Enter among it runs this cell and goes on typing in the next one,
  // which takes the focus only if the learner has not gone elsewhere (`focus`).
  async replay(view, entries, focus) {
    if (!entries.length) return;
    const { typeKeys } = await loadEditor();
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (!entry.run) {
        typeKeys(view, [entry]);
        continue;
      }
      this.run();
      const next = entry.run === "run-next" && runtime.cells[this.index + 1];
      if (next) {
        const nextView = await next.ensureEditor();
        if (focus) nextView.focus();
        return next.replay(nextView, entries.slice(i + 1), focus);
      }
    }
  }

  // Resolves to the cell's CodeMirror view, made on first use. When CodeMirror
  // cannot load (the site went offline before it was ever loaded), the cell
  // says so, keeps showing its code, and the next use tries again.
  ensureEditor() {
    this.editorReady ||= loadEditor().catch((err) => {
      this.editorReady = null;
      this.editorFailed = true;
      this.statusText.textContent = "The editor could not load; check the connection, then click the code again (what you typed is kept).";
      throw err;
    }).then(({ createEditor }) => {
      if (this.editorFailed) this.statusText.textContent = "";
      this.editorFailed = false;
      this.editor = createEditor({
        doc: this.saved !== null ? this.saved : this.original,
        parent: this.mount,
        label: `Code of cell ${this.index + 1}`,
        onRun: () => this.run(),
        onRunNext: () => (this.run(), focusCell(this.index + 1)),
        onEscape: () => this.runButton.focus(),
        onChange: () => this.persist(),
        topMargin: () => (bar.root ? Math.max(0, bar.root.getBoundingClientRect().bottom) : 0),
      });
      if (this.pre) this.pre.closest(".highlight-ipython3, .highlight-python, div.highlight")?.setAttribute("hidden", "");
      return this.editor;
    });
    return this.editorReady;
  }

  get code() {
    if (this.editor) return this.editor.state.doc.toString();
    return this.saved !== null ? this.saved : this.original;
  }

  persist() {
    this.saved = this.code === this.original ? null : this.code;
    storage.set(`cell-${this.index}`, this.saved);
    this.markEdited();
  }

  markEdited() {
    this.editedBadge.hidden = this.code === this.original;
  }

  reset() {
    if (this.code !== this.original && !window.confirm("Discard your edits to this cell and restore the original code?")) return;
    if (this.editor) this.editor.dispatch({ changes: { from: 0, to: this.editor.state.doc.length, insert: this.original } });
    this.saved = null;
    storage.set(`cell-${this.index}`, null);
    this.markEdited();
  }

  setState(state, message = "") {
    this.root.dataset.state = state;
    this.statusText.textContent = message;
    const busy = state === "running" || state === "queued";
    this.runButton.textContent = state === "running" ? "■ Stop" : "▶ Run";
    this.runButton.title = state === "running" ? "Stop the running code" : "Run this cell (Ctrl+Enter)";
    this.runButton.classList.toggle("pc-stop", state === "running");
    this.runButton.setAttribute("aria-busy", busy ? "true" : "false");
  }

  clearOutput() {
    this.output.replaceChildren();
    this.output.classList.remove("pc-stale");
    this.lastStream = null;
    this.streamChars = 0;
    this.richChars = 0;
    this.truncated = null;
  }

  appendStream(name, text) {
    // Appending text nodes keeps long outputs linear (textContent += is quadratic),
    // and past MAX_OUTPUT_CHARS a cell's streams are cut with a note: the write
    // that crosses the limit shows up to it, and the note counts every character left out.
    // Counted as shown: a progress bar that rewrites its line adds little.
    const room = MAX_OUTPUT_CHARS - (this.streamChars || 0);
    if (!this.truncated && text.length <= room) {
      this.streamChars = (this.streamChars || 0) + this.appendText(name, text);
      return;
    }
    this.streamChars = (this.streamChars || 0) + text.length;
    if (room > 0) this.appendText(name, text.slice(0, room));
    if (!this.truncated) {
      this.truncated = el("p", { class: "pc-truncated", text: "" });
      this.output.append(this.truncated);
    }
    this.truncated.textContent = `… output cut: ${(this.streamChars - MAX_OUTPUT_CHARS).toLocaleString()} more characters not shown`;
  }

  // Streams read as a terminal shows them: a carriage return (a progress bar)
  // goes back to the start of its line, and terminal colour codes are dropped.
  // Finished lines go into text nodes once; the unfinished last line is kept
  // raw (`lastLine`) and redrawn, so a return in a later write still applies.
  appendText(name, text) {
    if (!(this.lastStream && this.lastStream.dataset.name === name)) {
      const pre = el("pre");
      const box = el("div", { class: `output stream pc-${name}` }, pre);
      box.dataset.name = name;
      this.output.append(box);
      this.lastStream = pre;
      pre.dataset.name = name;
      this.lastLine = { raw: "", node: document.createTextNode("") };
      pre.append(this.lastLine.node);
    }
    const shownBefore = this.lastLine.node.data.length;
    const pending = this.lastLine.raw + text.replace(ANSI_ESCAPE, "").replace(/\r\n/g, "\n");
    const cut = pending.lastIndexOf("\n");
    let added = 0;
    if (cut >= 0) {
      const done = overwriteReturns(pending.slice(0, cut + 1));
      this.lastStream.insertBefore(document.createTextNode(done), this.lastLine.node);
      added += done.length;
    }
    // Only the last carriage return's part still overwrites: what came before
    // it is kept as shown, so a long progress bar stays one line's worth.
    let raw = pending.slice(cut + 1);
    const back = raw.lastIndexOf("\r");
    if (back > 0) raw = `${overwriteReturns(raw.slice(0, back))}\r${raw.slice(back + 1)}`;
    this.lastLine.raw = raw;
    this.lastLine.node.data = overwriteReturns(raw);
    return added + this.lastLine.node.data.length - (cut >= 0 ? 0 : shownBefore);
  }

  appendBundle(data, kind) {
    this.lastStream = null;
    const box = el("div", { class: `output pc-${kind}` });
    this.output.append(box);
    // Rich output cannot be cut: past the cell's budget, its text form shows.
    const rich = Object.entries(data).filter(([mime]) => mime !== "text/plain");
    const size = rich.reduce((sum, [, value]) => sum + String(value).length, 0);
    this.richChars = (this.richChars || 0) + size;
    if (size && this.richChars > MAX_RICH_CHARS) {
      const note = `\n… ${size.toLocaleString()} characters of rich output not shown: this run's outputs passed ${MAX_RICH_CHARS.toLocaleString()}`;
      renderBundle(box, { "text/plain": String(data["text/plain"] || "").slice(0, MAX_OUTPUT_CHARS) + note });
      return;
    }
    renderBundle(box, data);
  }

  appendError(msg) {
    this.lastStream = null;
    let text = msg.traceback || `${msg.ename}: ${msg.evalue}`;
    if (text.length > MAX_OUTPUT_CHARS) {
      text = `${text.slice(0, MAX_OUTPUT_CHARS)}\n… traceback cut: ${(text.length - MAX_OUTPUT_CHARS).toLocaleString()} more characters not shown`;
    }
    const pre = el("pre", { text });
    this.output.append(el("div", { class: "output traceback pc-error", role: "alert" }, pre));
  }

  run() {
    return runCell(this);
  }
}

function renderBundle(box, data) {
  if (data["text/vnd.graphviz"]) {
    box.classList.add("pc-graph");
    box.textContent = "Drawing the graph…";
    loadViz()
      .then((viz) => {
        const svg = viz.renderSVGElement(data["text/vnd.graphviz"]);
        box.replaceChildren(svg);
      })
      .catch((err) => {
        box.replaceChildren(el("pre", { text: `${data["text/plain"] || ""}\n(could not draw the graph: ${err.message})` }));
      });
  } else if (data["text/html"]) {
    box.classList.add("text_html");
    box.innerHTML = data["text/html"];
    upgradeGraphs(box);
  } else if (data["image/svg+xml"]) {
    box.classList.add("image_svg");
    box.innerHTML = data["image/svg+xml"];
  } else {
    box.classList.add("text_plain");
    box.append(el("pre", { text: data["text/markdown"] || data["text/latex"] || data["text/plain"] || "" }));
  }
}

function focusCell(index) {
  const cell = runtime.cells[index];
  if (cell) cell.ensureEditor().then((view) => view.focus(), () => {});
}

// ---------------------------------------------------------------- running ---

function send(cell) {
  const id = runtime.nextId++;
  return new Promise((resolve) => {
    runtime.pending.set(id, { cell, resolve, started: false });
    cell.setState(runtime.state === "ready" ? "running" : "queued", runtime.state === "ready" ? "Running…" : "Queued: waiting for Python to load");
    runtime.worker.postMessage({ type: "run", id, code: cell.code, stopGeneration: stopGeneration() });
  });
}

// ------------------------------------------------------------------- stop ---
//
// Cross-origin isolated pages (the serve command sends COOP/COEP) share an
// interrupt buffer with Pyodide: writing SIGINT (2) makes Python raise
// KeyboardInterrupt at its next check, and the namespace survives. Elsewhere,
// or when Python does not answer within STOP_GRACE_MS (stuck outside the
// interpreter loop), the worker is terminated and a fresh one started.

const STOP_GRACE_MS = 2000;

/** How many times Stop was pressed (mod 256); a run carries the count it was sent under. */
function stopGeneration() {
  return runtime.interrupt ? runtime.interrupt[1] : null;
}

function stopPython() {
  if (!runtime.pending.size) return;
  const running = [...runtime.pending.values()].find((e) => e.started) || [...runtime.pending.values()][0];
  if (runtime.interrupt) {
    // Byte 1 counts Stops: runs sent before this one are cancelled when they
    // come up (worker.js), as Jupyter aborts queued cells on an interrupt.
    runtime.interrupt[1] = (runtime.interrupt[1] + 1) & 255;
    runtime.interrupt[0] = 2; // SIGINT, read by Python in the running cell
    // Watch this run, not this cell: the learner may run the cell again at once.
    const stopped = running;
    bar.set("running", "Stopping…");
    // Python reads (and clears) the signal; now and then, in a restored interpreter,
    // one is read but raises nothing (1 Stop in 5 in tests). Send it again while
    // the run goes on, before the grace period ends in a restart.
    for (let t = 400; t < STOP_GRACE_MS; t += 400) {
      setTimeout(() => {
        if ([...runtime.pending.values()].includes(stopped) && runtime.interrupt[0] === 0) runtime.interrupt[0] = 2;
      }, t);
    }
    setTimeout(() => {
      if ([...runtime.pending.values()].includes(stopped)) {
        hardRestart("Python did not respond to Stop, so it was restarted: the namespace was reset");
      }
    }, STOP_GRACE_MS);
  } else {
    hardRestart("Python was stopped and restarted: the namespace was reset (earlier cells re-run when needed)");
  }
}

function hardRestart(message) {
  runtime.worker.terminate();
  for (const [id, entry] of runtime.pending) {
    entry.cell.setState("error", entry.started ? "Stopped" : "Cancelled");
    if (entry.started) entry.cell.appendError({ traceback: message });
    entry.resolve({ status: "stopped" });
    runtime.pending.delete(id);
  }
  for (const [id, entry] of runtime.checks) {
    entry.reject(new Error(message));
    runtime.checks.delete(id);
  }
  for (const cell of runtime.cells) {
    cell.ranInSession = false;
    cell.queuedInSession = false;
    cell.autoQueued = false;
    cell.counter.textContent = "[ ]";
  }
  runtime.restartMessage = message;
  startWorker();
}

// Cells tagged "auto-rerun" (e.g. the live computation graph) run again after
// every run of another cell, so what they show follows the learner's code.
function queueAutoReruns(exclude) {
  return runtime.cells
    .filter((c) => c.auto && c !== exclude && !c.autoQueued)
    .map((c) => {
      c.autoQueued = true;
      c.queuedInSession = true;
      return send(c).finally(() => (c.autoQueued = false));
    });
}

async function runCell(cell) {
  // Earlier cells that have not run yet define names this one may use.
  const before = runtime.cells.slice(0, cell.index).filter((c) => !c.ranInSession && !c.queuedInSession && !c.auto);
  for (const c of [...before, cell]) c.queuedInSession = true;
  const runs = [...before, cell].map((c) => send(c));
  queueAutoReruns(cell);
  const results = await Promise.all(runs);
  return results[results.length - 1];
}

function runAll() {
  const runs = runtime.cells.filter((c) => !c.auto).map((c) => ((c.queuedInSession = true), send(c)));
  queueAutoReruns(null);
  return Promise.all(runs);
}

/** Run code in the page's namespace without showing it in any cell (benchmarks, tests). */
function runCode(code) {
  const sink = {
    index: -1, code, stdout: "", stderr: "", results: [], error: null, counter: {},
    setState() {}, clearOutput() {}, appendError(msg) { this.error = msg; },
    appendStream(name, text) { this[name] += text; },
    appendBundle(data) { this.results.push(data); },
  };
  const id = runtime.nextId++;
  return new Promise((resolve) => {
    const t0 = performance.now();
    runtime.pending.set(id, {
      cell: sink,
      started: false,
      resolve: (r) => resolve({ ...r, wallMs: performance.now() - t0, stdout: sink.stdout, stderr: sink.stderr, results: sink.results, error: sink.error }),
    });
    runtime.worker.postMessage({ type: "run", id, code, stopGeneration: stopGeneration() });
  });
}

/** Run the cells that have not run yet, then the page's checks; resolve with their records. */
function runChecks(blocks) {
  const missing = runtime.cells.filter((c) => !c.ranInSession && !c.queuedInSession && !c.auto);
  for (const c of missing) {
    c.queuedInSession = true;
    send(c);
  }
  if (missing.length) queueAutoReruns(null);
  const id = runtime.nextId++;
  return new Promise((resolve, reject) => {
    runtime.checks.set(id, { resolve, reject });
    runtime.worker.postMessage({ type: "check", id, blocks, names: CONFIG.checksUse || [] });
  });
}

function restartRuntime() {
  runtime.worker.postMessage({ type: "restart" });
  for (const cell of runtime.cells) {
    cell.ranInSession = false;
    cell.queuedInSession = false;
    cell.counter.textContent = "[ ]";
  }
}

function onWorkerMessage(event) {
  const msg = event.data;
  if (msg.type === "status") {
    const at = msg.at ? Math.max(0, msg.at - performance.timeOrigin) : performance.now();
    performance.mark(`pyodide-cells:${msg.state}-${msg.step}`, { startTime: at });
    if (msg.state === "loading" && runtime.restartMessage) bar.set("loading", `${runtime.restartMessage}. Restarting Python (${msg.step}/${msg.steps})…`, msg.step, msg.steps);
    else if (msg.state === "loading") bar.set("loading", `Python: ${msg.message} (${msg.step}/${msg.steps})…`, msg.step, msg.steps);
    else if (msg.state === "ready") {
      const seconds = ((performance.now() - runtime.startedAt) / 1000).toFixed(1);
      performance.mark("pyodide-cells:ready");
      runtime.restored = Boolean(msg.restored);
      queueMicrotask(startupEnded); // after bar.set() below has marked the runtime ready
      const how = msg.restored ? " from this browser's start-up snapshot" : "";
      if (runtime.restartMessage) {
        bar.set("ready", runtime.restartMessage);
        runtime.restartMessage = null;
      } else bar.set("ready", `Python 3.12 (Pyodide 0.26.2) ready in ${seconds} s${how}: edit a cell, then Run or Ctrl+Enter`);
      for (const { cell, started } of runtime.pending.values()) if (!started) cell.setState("running", "Running…");
    } else if (msg.state === "error") {
      bar.set("error", `Python failed to start: ${msg.message}`);
      queueMicrotask(startupEnded); // the code can still be read and edited
      for (const [id, { cell, resolve }] of runtime.pending) {
        cell.setState("error", "Python is not available");
        resolve({ status: "error" });
        runtime.pending.delete(id);
      }
    }
    return;
  }
  if (msg.type === "fatal") {
    hardRestart(`Python crashed (${msg.message}) and was restarted: the namespace was reset`);
    return;
  }
  if (msg.type === "checks") {
    const entry = runtime.checks.get(msg.id);
    runtime.checks.delete(msg.id);
    if (entry) msg.error ? entry.reject(new Error(msg.error)) : entry.resolve({ results: msg.results, warnings: msg.warnings || [] });
    return;
  }
  if (msg.type === "restarted") {
    bar.set("ready", "Python restarted: the namespace is empty");
    return;
  }
  const entry = runtime.pending.get(msg.id);
  if (!entry) return;
  const { cell } = entry;
  if (!entry.started) {
    entry.started = true;
    cell.clearOutput();
    bar.set("running", `Python: running cell ${cell.index + 1}…`);
  }
  switch (msg.type) {
    case "start":
      cell.setState("running", "Running…");
      break;
    case "stream":
      cell.appendStream(msg.name, msg.text);
      break;
    case "display":
      cell.appendBundle(msg.data, "display");
      break;
    case "result":
      cell.appendBundle(msg.data, "result");
      break;
    case "error":
      cell.appendError(msg);
      break;
    case "done": {
      runtime.pending.delete(msg.id);
      cell.ranInSession = true;
      cell.queuedInSession = false;
      if (msg.execution_count != null) cell.counter.textContent = `[${msg.execution_count}]`;
      const ok = msg.status === "ok";
      cell.setState(ok ? "done" : "error", ok ? `Ran in ${msg.ms.toFixed(1)} ms` : "Failed: see the traceback below");
      if (!performance.getEntriesByName("pyodide-cells:first-output").length) performance.mark("pyodide-cells:first-output");
      if (runtime.pending.size === 0) {
        bar.set("ready", "Python ready");
        startupEnded();
      }
      entry.resolve({ status: msg.status, ms: msg.ms });
      break;
    }
  }
}

// ------------------------------------------------------------------- boot ---

function startWorker() {
  // boot.js (inlined at the top of the page) made the first worker already;
  // restarts ask it for a new one.
  const boot = window.PYODIDE_CELLS_BOOT;
  const adopting = !boot.adopted;
  const { worker, interrupt } = adopting ? boot.first : boot.start();
  boot.adopted = true;
  runtime.worker = worker;
  runtime.interrupt = interrupt;
  runtime.worker.onmessage = onWorkerMessage;
  runtime.worker.onerror = (event) => bar.set("error", `Python worker failed: ${event.message || "unknown error"}`);
  if (adopting) for (const event of boot.early.splice(0)) onWorkerMessage(event);
}

function main() {
  performance.mark("pyodide-cells:main-start");
  const roots = [...document.querySelectorAll("div.cell")].filter((root) => root.querySelector(".cell_input pre"));
  if (!roots.length) return;
  bar.build();
  bar.set("loading", "Python: starting…", 0, 4);
  startWorker(); // adopts the worker boot.js started, replaying its messages
  runtime.cells = roots.map((root, index) => new Cell(root, index));
  if ("IntersectionObserver" in window) {
    const io = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        io.unobserve(entry.target);
        const cell = runtime.cells.find((c) => c.root === entry.target);
        if (cell) afterStartup(() => cell.ensureEditor().catch(() => {}));
      }
    }, { rootMargin: "300px" });
    for (const cell of runtime.cells) if (!cell.editor) io.observe(cell.root);
  } else runtime.cells.forEach((c) => c.ensureEditor().catch(() => {}));
  upgradeGraphs(document);
  // Code blocks that scroll sideways must be reachable by keyboard (WCAG 2.1.1).
  for (const pre of document.querySelectorAll("div.highlight pre")) {
    if (pre.scrollWidth > pre.clientWidth + 1) pre.setAttribute("tabindex", "0");
  }
  const blocks = [...document.querySelectorAll("div.doctest-block pre")];
  if (blocks.length) runtime.console = new ChecksConsole(blocks, runChecks);
  performance.mark("pyodide-cells:main-end");
  window.pyodideCells = {
    runtime,
    run: (index) => runtime.cells[index].run(),
    runAll,
    restart: restartRuntime,
    stop: stopPython,
    runCode,
    idle: () => new Promise((resolve) => {
      const poll = () => (runtime.pending.size ? setTimeout(poll, 5) : resolve());
      poll();
    }),
    check: () => runtime.console && runtime.console.check(),
  };
}

main();
