// @ts-check
// The page side of the cell runtime: turns myst-nb code cells into live,
// editable cells that run on Pyodide in a Web Worker, and wires the parts:
//
//   kernel.js     the worker and its message port (protocol.js)
//   scheduler.js  every run's state; Stop and Restart (with runqueue.js, worker_lifecycle.js, worker_messages.js)
//   statusbar.js  the bar: a view of the scheduler
//   cell.js       a cell: toolbar (celltoolbar.js), editor (celleditor.js, editor.js loaded on first use),
//                 output (output.js), saved edit (editsync.js, storage.js)
//   checks.js     the assertion console (checklines.js, checkhints.js, checkbars.js); reader/progress.js keeps what it last found
//   pagetools.js  Download .py / .ipynb (download.js) and Reset this page
//
// Cells keep their build-time outputs until they run. All cells of a page
// share one Python namespace; running a cell first runs the earlier cells
// that have not run in it, so the names they define exist, as in the baked page.

import { upgradeGraphs } from "./graph.js";
import { ChecksConsole } from "./checks.js";
import { Kernel } from "./kernel.js";
import { Scheduler } from "./scheduler.js";
import { StatusBar, describe } from "./statusbar.js";
import { Cell, editorState, loadEditor, unsaved } from "./cell.js";
import { EditStore } from "./storage.js";
import { PageTools } from "./pagetools.js";
import { forgetProgress, readProgress, recordProgress } from "../reader/progress.js";

const CONFIG = /** @type {any} */ (window).PYODIDE_CELLS_CONFIG || {};
const startedAt = performance.now();

// Editors for cells that scroll into view are made once Python has started and
// the cells queued meanwhile have run, in idle time: on a 2-core machine every
// millisecond of main-thread work while Python starts in the worker delays it,
// and an editor being made would hold up the first output. Until then the code
// the page was built with shows, highlighted; a click on it makes its editor at once.
/** @type {(() => void)[]} */
const startupWaiters = [];

function main() {
  performance.mark("pyodide-cells:main-start");
  const roots = /** @type {HTMLElement[]} */ ([...document.querySelectorAll("div.cell")]).filter((root) => root.querySelector(".cell_input pre"));
  if (!roots.length) return;

  const kernel = new Kernel(
    (msg) => {
      if (msg.type === "status") performance.mark(`pyodide-cells:${msg.state}-${msg.step}`, { startTime: Math.max(0, msg.at - performance.timeOrigin) });
      scheduler.receive(msg);
    },
    (message) => scheduler.onWorkerError(message),
  );
  const auto = roots.map((root, i) => (root.classList.contains("tag_auto-rerun") ? i : -1)).filter((i) => i >= 0);
  const exercises = roots.map((root, i) => (root.classList.contains("tag_exercise") ? i : -1)).filter((i) => i >= 0);
  const scheduler = new Scheduler({ transport: kernel, cells: roots.length, auto, exercises, checkCells: CONFIG.checkCells || null });
  const bar = new StatusBar({ onStop: () => scheduler.stop(), onRunAll: () => runAll(), onRestart: () => scheduler.restart() });
  bar.mount();

  const store = new EditStore(location.pathname);
  /** @type {Cell[]} */
  const cells = [];
  const cellAt = (/** @type {number} */ i) => ({ code: cells[i].code, sink: cells[i].sink });
  const afterStartup = (/** @type {() => void} */ task) => {
    startupWaiters.push(task);
    startupEnded();
  };
  const startupEnded = () => {
    if (scheduler.kernel.state === "loading" || scheduler.busy) return; // called again when they end
    for (const task of startupWaiters.splice(0)) (window.requestIdleCallback || setTimeout)(() => task());
  };
  const run = (/** @type {Cell} */ cell) => scheduler.runCell(cell.index, cellAt);
  const runAll = () => scheduler.runAll(cellAt);
  /**
   * Shift+Enter: run the cell and go on in the next one (typing there what
   * was held for it while CodeMirror loaded).
   * @param {Cell} cell
   * @param {{entries: import("./keyhold.js").HeldEntry[], focus: boolean}} [rest]
   */
  const runNext = async (cell, rest = { entries: [], focus: true }) => {
    run(cell);
    const next = cells[cell.index + 1];
    if (!next) return;
    const view = await next.ensureEditor().catch(() => null);
    if (!view) return;
    if (rest.focus) {
      view.focus();
      (await loadEditor()).reveal(view);
    }
    await next.replay(view, rest.entries, rest.focus);
  };
  const page = {
    store,
    run,
    runNext,
    stop: () => scheduler.stop(),
    isRunning: (/** @type {Cell} */ cell) => scheduler.running?.cell === cell.index && scheduler.running?.kind === "cell",
    afterStartup,
    topMargin: () => Math.max(0, bar.root.getBoundingClientRect().bottom),
    edited: () => tools?.update(),
    changed: () => checks?.codeChanged(),
    complete: (/** @type {string} */ code, /** @type {number} */ cursor) => {
      const run = scheduler.complete(code, cursor);
      const ahead = scheduler.ahead(run);
      const waitsFor = ahead ? describe(ahead) + " to end" : run.state === "queued" ? (scheduler.kernel.restarts ? "Python to restart" : "Python to load") : "";
      return { waitsFor, ended: run.ended.then((r) => (r.state === "done" && r.answer?.completions) || null) };
    },
    // An exercise back to its starter code: the count its checks found is about code that is gone.
    restored: (/** @type {Cell} */ cell) => {
      if (cell.root.classList.contains("tag_exercise")) forgetProgress(location.pathname);
    },
  };
  /** @type {ChecksConsole | null} */
  let checks = null;
  /** @type {PageTools | null} */
  let tools = null;
  roots.forEach((root, index) => cells.push(new Cell(root, index, page)));
  tools = new PageTools(cells, CONFIG.download || null);
  bar.keys.after(tools.root);

  const firstBlock = /** @type {HTMLElement | null} */ (document.querySelector("div.doctest-block pre"));
  checks = firstBlock && CONFIG.checks?.length
    ? new ChecksConsole(firstBlock, { blocks: CONFIG.blocks, checks: CONFIG.checks }, {
        check: (blocks, sink) => scheduler.check(blocks, CONFIG.checksUse || [], cellAt, sink),
        stop: () => scheduler.stop(),
        running: () => scheduler.running,
        checked: (passed, total) => recordProgress(location.pathname, passed, total),
        broken: () => cells.filter((cell) => !cell.auto && scheduler.cellState(cell.index) === "error").map((cell) => cell.describe()),
      }, readProgress(location.pathname))
    : null;

  scheduler.subscribe((s) => {
    bar.render(s, { startedAt, canInterrupt: kernel.canInterrupt, ranAny: s.finishedRuns > 0 });
    for (const cell of cells) cell.render(s);
    checks?.render(s);
    if (s.kernel.state === "ready" && !performance.getEntriesByName("pyodide-cells:ready").length) performance.mark("pyodide-cells:ready");
    if (s.finishedRuns > 0 && !performance.getEntriesByName("pyodide-cells:first-output").length) performance.mark("pyodide-cells:first-output");
    startupEnded();
  });
  kernel.start(); // adopts the worker boot.js started, replaying its messages
  scheduler.changed();

  store.onOtherTab((index, value) => {
    if (index < 0) cells.forEach((cell) => cell.storageCleared());
    else cells[index]?.otherTab(value);
  });
  window.addEventListener("beforeunload", (event) => {
    if (!unsaved.size) return;
    event.preventDefault(); // the browser asks before the unsaved edits go
    event.returnValue = "";
  });

  // A cell's editor is made while the cell is on the screen, where the learner
  // may use it: made all at once, a long page's editors held up the main thread
  // (and each measures every line once, editor.js).
  if ("IntersectionObserver" in window) {
    /** @type {Set<Cell>} */
    const onScreen = new Set();
    const io = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const cell = cells.find((c) => c.input === entry.target);
        if (!cell) continue;
        if (!entry.isIntersecting) {
          onScreen.delete(cell);
          continue;
        }
        onScreen.add(cell);
        afterStartup(() => {
          if (!onScreen.has(cell)) return; // scrolled away meanwhile: made when it is back
          io.unobserve(entry.target);
          cell.ensureEditor().catch(() => {});
        });
      }
    });
    // The code's box, not the cell's: the toolbar above it can be on the screen while it is not.
    for (const cell of cells) if (!cell.editor) io.observe(cell.input);
  } else cells.forEach((c) => c.ensureEditor().catch(() => {}));
  upgradeGraphs(document);
  // Code blocks that scroll sideways must be reachable by keyboard (WCAG 2.1.1).
  // Once the first runs are done: measuring them lays the whole page out, which
  // here, before Python's first answer, held that answer up.
  afterStartup(() => {
    for (const pre of document.querySelectorAll("div.highlight pre")) {
      if (pre.scrollWidth > pre.clientWidth + 1) pre.setAttribute("tabindex", "0");
    }
    performance.mark("pyodide-cells:code-reachable");
  });
  performance.mark("pyodide-cells:main-end");

  /**
   * Run code in the page's namespace without showing it in any cell (benchmarks, tests).
   * @param {string} code
   */
  const runCode = async (code) => {
    /** @type {{stdout: string, stderr: string, results: import("../protocol.js").MimeBundle[], error: import("../protocol.js").ErrorMessage | {traceback: string} | null}} */
    const out = { stdout: "", stderr: "", results: [], error: null };
    const t0 = performance.now();
    const ended = await scheduler.runCode(code, {
      stream: (name, text) => (out[name] += text),
      bundle: (data) => out.results.push(data),
      error: (msg) => (out.error = msg),
    });
    return { ...out, state: ended.state, status: ended.answer ? ended.answer.status : ended.state, reason: ended.reason, ms: ended.answer?.ms, wallMs: performance.now() - t0 };
  };
  // The one entry point for benchmarks and tests (tests/browser/helpers.py wraps it): what the
  // runtime does, as promises that resolve when what they start has ended, and what it holds, as
  // plain values. Tests read state here or from the DOM the learner sees, never from the
  // runtime's objects, so the runtime can change inside without the tests following it.
  /** @type {any} */ (window).pyodideCells = {
    /** The runtime's objects, for a benchmark that needs more than this entry point. */
    runtime: { cells, scheduler },
    /** Where Python's start came from: "" (a fresh start), or the snapshot it was restored from. */
    get restored() { return scheduler.kernel.restored; },
    /** How many runs have ended after running (not cancelled), page-wide. */
    get finishedRuns() { return scheduler.finishedRuns; },
    /**
     * The cell `index` (from 0, page order) as plain values: the code it holds now and as the page
     * gave it, where its editor is ("none" yet, "loading", "failed" with no load under way, or
     * "shown"), its state and how many of its runs have ended.
     * @param {number} index
     */
    cell: (index) => {
      const c = cells[index];
      return { code: c.code, original: c.original, editor: editorState(c), state: scheduler.cellState(index), runs: scheduler.ended[index] };
    },
    /** Make the cell's editor now (as a click or the cell coming on the screen does); resolves once it is shown. */
    makeEditor: (/** @type {number} */ index) => cells[index].ensureEditor().then((view) => view.dom.isConnected),
    run: (/** @type {number} */ index) => run(cells[index]),
    runAll,
    restart: () => scheduler.restart(),
    stop: () => scheduler.stop(),
    runCode,
    idle: () => new Promise((resolve) => {
      if (!scheduler.busy) return resolve(undefined);
      const stop = scheduler.subscribe((s) => !s.busy && (stop(), resolve(undefined)));
    }),
    check: () => checks && checks.check(),
  };
}

main();
