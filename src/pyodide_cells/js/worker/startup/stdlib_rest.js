// @ts-check
// The rest of the standard library (what start-up never imports: doctest and
// unittest for the checks, statistics, email, most codecs...) is fetched once
// the page has had time to show Python's first answer (REST_AFTER_ANSWER_MS
// after it), or REST_WAIT_MS after Python is ready if no request comes: on a
// fast link, fetched at once, it arrived and was given to Python before the
// first cell had run, and its bytes counted on the way to first output.

const REST_WAIT_MS = 3000;
const REST_AFTER_ANSWER_MS = 500;

/**
 * Schedules the fetch of the rest of the standard library from `url` (relative to `base`);
 * returns what the worker calls after each answer. An import that needs the rest before it
 * arrives fetches it itself, synchronously (worker_boot.StdlibRest); a fetch that fails here
 * is left to that import, which reports it.
 * @param {any} pyodide
 * @param {string} url  "": a site without the split (nothing to fetch)
 * @param {string} base  the worker script's URL
 * @returns {() => void}  call once a request has been answered
 */
export function fetchRestLater(pyodide, url, base) {
  /** @type {(() => void) | null} */
  let pending = url ? () => fetchStdlibRest(pyodide, new URL(url, base).href) : null;
  const startNow = () => {
    const start = pending;
    pending = null;
    start?.();
  };
  if (pending) setTimeout(startNow, REST_WAIT_MS);
  return () => {
    if (pending) setTimeout(startNow, REST_AFTER_ANSWER_MS);
  };
}

/**
 * Fetches the rest of the standard library and gives it to Python
 * (worker_boot.mount_stdlib_rest). Its arrival is handled between two
 * requests, never while Python runs.
 * @param {any} pyodide
 * @param {string} href
 */
function fetchStdlibRest(pyodide, href) {
  // Low priority: the learner's next request (a chunk of CodeMirror, Graphviz) goes first.
  fetch(href, /** @type {RequestInit} */ ({ priority: "low" }))
    .then((response) => (response.ok ? response.arrayBuffer() : null))
    .then((buffer) => {
      if (!buffer) return;
      const mount = pyodide.globals.get("mount_stdlib_rest");
      mount(new Uint8Array(buffer));
      mount.destroy();
    })
    .catch(() => {});
}
