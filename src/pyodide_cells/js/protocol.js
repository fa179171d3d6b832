// @ts-check
// The contract of the cell runtime, its one entry point: every message between
// the page, the worker, the Python cell runner and the service worker, and what
// the runtime publishes on the page. Each part is a file of protocol/ (its
// README.md); every importer imports this module, and nothing else builds a
// message. docs/runtime.md links here.
//
//   protocol/transport.js      the worker started, its port and `init`, Stop's interrupt buffer, ?plain-start
//   protocol/requests.js       page -> worker: run, check, reset, complete
//   protocol/messages.js       worker -> page: status (the boot steps), stream, display/result, clear, error, done, fatal
//   protocol/runner.js         runner -> worker: the kinds python/runner.py emits
//   protocol/limits.js         the output limits, from ../limits.json (the Python runner reads it too)
//   protocol/serviceworker.js  page <-> service worker: skip-waiting, version
//   protocol/pagestate.js      the state of the page's Python: an attribute for CSS, an event for scripts
//
// page/boot.js is inlined into each page, so assets.py bundles it with this
// module at build time; the /* @__PURE__ */ marks let esbuild leave out what
// a bundle does not use (boot.js, nav.js, sw.js use little of it).

export * from "./protocol/transport.js";
export * from "./protocol/requests.js";
export * from "./protocol/messages.js";
export * from "./protocol/runner.js";
export * from "./protocol/limits.js";
export * from "./protocol/serviceworker.js";
export * from "./protocol/pagestate.js";
