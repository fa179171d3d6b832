// @ts-check
// What the cell runtime publishes on a lab page for the rest of the page (the
// reader's code, CSS, tests): the state of its Python, declared once here.
//
// - The attribute PYODIDE_STATE_ATTRIBUTE on <html> is an output only, for CSS
//   (cells.css) and the browser tests: no script reads it back.
// - The event PYODIDE_STATE_EVENT, dispatched on `document` each time the state
//   changes (page/statusbar.js, where the attribute is set), is how a script
//   follows it (offline/offline.js). The first is dispatched when the runtime
//   starts (cells.js, a module script): a listener that must see every change
//   is added by a script that runs before it (nav.js comes first on the page).

/**
 * The state of a lab page's Python: starting, ready and idle, running a request, or failed to start
 * (a BootState, with "running" while the page's queue is not empty).
 * @typedef {"loading" | "ready" | "running" | "error"} PyodideState
 * @typedef {{state: PyodideState}} PyodideStateDetail  the event's `detail`
 */

/** The attribute on <html> that holds the state, for CSS and tests (`html[data-pyodide-state]`). */
export const PYODIDE_STATE_ATTRIBUTE = "data-pyodide-state";
/** The event dispatched on `document` when the state changes; its `detail` is a PyodideStateDetail. */
export const PYODIDE_STATE_EVENT = "pyodide-cells:state";

/** The event that says the state is now `state`. @param {PyodideState} state @returns {CustomEvent<PyodideStateDetail>} */
export const pyodideStateEvent = (state) => new CustomEvent(PYODIDE_STATE_EVENT, { detail: { state } });

const STATES = /* @__PURE__ */ new Set(["loading", "ready", "running", "error"]);

/**
 * The state an event says, if it is a well-formed PYODIDE_STATE_EVENT, else null.
 * @param {Event} event
 * @returns {PyodideState | null}
 */
export function asPyodideState(event) {
  const detail = /** @type {any} */ (event).detail;
  if (event.type !== PYODIDE_STATE_EVENT || !detail || !STATES.has(detail.state)) return null;
  return detail.state;
}
