// @ts-check
// What the cell runtime publishes on a lab page for the rest of the page (the
// reader's code, CSS, tests): the state of its Python, declared once here.
//
// - The attribute PYODIDE_STATE_ATTRIBUTE on <html> is an output only, for CSS
//   (cells.css) and the browser tests: no script reads it back.
// - The event PYODIDE_STATE_EVENT, dispatched on `document` each time the state
//   changes (page/statusbar.js, where the attribute is set), is how a script
//   follows it (offline/offline.js).
// - The event PYODIDE_STATE_ASK, dispatched on `document` by a script that starts
//   following late, has the runtime dispatch its current state again: the order in
//   which the page's scripts run does not matter (nav.js, then cells.js, today).

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

/** The event that asks the runtime, if it has started, to dispatch its current state again (a plain Event). */
export const PYODIDE_STATE_ASK = "pyodide-cells:state-ask";

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
