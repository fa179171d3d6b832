// @ts-check
// Inlined at the top of every page that has cells (pages.py), before any other
// script: start the Pyodide worker now, not after the page's scripts have been
// parsed and run (about 0.8 s later on a lab page). kernel.js adopts the
// worker, replays the messages it sent in the meantime, and calls start()
// again for every restart: this is the one place a worker is made.
//
// The worker gets one message on the Worker itself (protocol.js `init`): a
// MessagePort, over which everything else goes, Stop's interrupt buffer, and
// the page's `?site-snapshot=always|never` (the bench measures both ways).
// Kept in plain ES5 and free of imports: it is inlined as it is.
(function () {
  performance.mark("pyodide-cells:boot");
  var root = new URL(document.documentElement.getAttribute("data-content_root") || "./", location.href);
  var stat = new URL("_static/", root);
  var config = window.PYODIDE_CELLS_CONFIG || {};
  var asked = new URLSearchParams(location.search).get("site-snapshot");
  var siteSnapshot = asked === "always" || asked === "never" ? asked : "auto";
  if (asked !== null && siteSnapshot === "auto") {
    console.warn("pyodide-cells: ?site-snapshot=" + asked + " is not understood: expected always or never; choosing by the link's speed");
  }

  function start() {
    var isolated = window.crossOriginIsolated && typeof SharedArrayBuffer === "function";
    var interrupt = isolated ? new Uint8Array(new SharedArrayBuffer(1)) : null; // protocol.INTERRUPT_BYTES
    // Versioned (?v=, pages.py): a second visit takes it from the HTTP cache unasked.
    var worker = new Worker(new URL(config.worker || "pyodide_cells/worker.js", stat));
    var channel = new MessageChannel();
    var early = [];
    channel.port1.onmessage = function (event) { early.push(event.data); };
    worker.postMessage({ type: "init", port: channel.port2, interruptBuffer: interrupt ? interrupt.buffer : null, siteSnapshot: siteSnapshot }, [channel.port2]);
    return { worker: worker, port: channel.port1, interrupt: interrupt, early: early };
  }

  window.PYODIDE_CELLS_BOOT = { start: start, first: start() };
})();
