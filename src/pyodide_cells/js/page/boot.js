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
// `?plain-start` (protocol.js PLAIN_START) travels in the worker's address
// instead: the worker chooses how to start before that message arrives.
//
// An inline script cannot import: assets.py bundles this file with protocol.js
// (esbuild, as a classic script) into _static/pyodide_cells/boot.js, and
// pages.py inlines that, so the message and the buffer are built by protocol.js.
import * as protocol from "../protocol.js";

performance.mark("pyodide-cells:boot");
const root = new URL(document.documentElement.getAttribute("data-content_root") || "./", location.href);
const stat = new URL("_static/", root);
const config = window.PYODIDE_CELLS_CONFIG || {};
// The page's address is read here, once: kernel.js and the worker take what it says from start().
const query = new URLSearchParams(location.search);
const asked = query.get("site-snapshot");
/** @type {protocol.InitMessage["siteSnapshot"]} */
const siteSnapshot = asked === "always" || asked === "never" ? asked : "auto";
if (asked !== null && siteSnapshot === "auto") {
  console.warn(`pyodide-cells: ?site-snapshot=${asked} is not understood: expected always or never; choosing by the link's speed`);
}
const plainStart = query.has(protocol.PLAIN_START);
if (plainStart) console.info("pyodide-cells: ?plain-start: Python starts with stock loadPyodide, without the start-up speed work");

function start() {
  const interrupt = protocol.interruptBuffer(window.crossOriginIsolated && typeof SharedArrayBuffer === "function");
  // Versioned (?v=, pages.py): a second visit takes it from the HTTP cache unasked.
  const worker = new Worker(protocol.workerURL(new URL(config.worker || "pyodide_cells/worker.js", stat), plainStart));
  const channel = new MessageChannel();
  /** @type {unknown[]} */
  const early = [];
  channel.port1.onmessage = (event) => early.push(event.data);
  worker.postMessage(protocol.init(channel.port2, interrupt, siteSnapshot), [channel.port2]);
  return { worker, port: channel.port1, interrupt, early };
}

window.PYODIDE_CELLS_BOOT = { start, first: start(), plainStart };
