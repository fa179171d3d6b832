// Inlined at the top of every page that has cells (pages.py), before any other
// script: start the Pyodide worker now, not after the page's scripts have been
// parsed and run (about 0.8 s later on a lab page). cells.js adopts the worker,
// replays the messages it sent in the meantime, and calls start() again for
// every restart: this is the one place a worker is made.
(function () {
  performance.mark("pyodide-cells:boot");
  var root = new URL(document.documentElement.getAttribute("data-content_root") || "./", location.href);
  var stat = new URL("_static/", root);
  var config = window.PYODIDE_CELLS_CONFIG || {};

  function start() {
    var interrupt = window.crossOriginIsolated && typeof SharedArrayBuffer === "function" ? new Uint8Array(new SharedArrayBuffer(2)) : null;
    // The worker starts loading Python by itself; it only waits for this
    // message to learn Stop's buffer.
    // Versioned (?v=, pages.py): a second visit takes it from the HTTP cache unasked.
    var worker = new Worker(new URL(config.worker || "pyodide_cells/worker.js", stat));
    worker.postMessage({ type: "init", interruptBuffer: interrupt ? interrupt.buffer : null });
    return { worker: worker, interrupt: interrupt };
  }

  var first = start();
  var early = [];
  first.worker.onmessage = function (event) { early.push(event); };
  window.PYODIDE_CELLS_BOOT = { start: start, first: first, early: early };
})();
