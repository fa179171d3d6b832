// @ts-check
// A cell's toolbar: its name, Run (Stop while it runs), Reset, the "edited"
// badge and a line of status, drawn from the scheduler's state as the status
// bar (statusbar.js) is, whose words for a run ("cell 3", "the checks") it
// shares. A view: it keeps no state beyond its elements, and render draws it
// again from the scheduler.

import { el } from "./util.js";
import { cellName } from "../protocol.js";
import { REASON } from "./reasons.js";
import { describe } from "./statusbar.js";

/** @typedef {import("./scheduler.js").Scheduler} Scheduler */

const RUN_TITLE = "Run this cell (Ctrl+Enter)";

/**
 * The toolbar's elements, for cell `index`; `root` holds them in order.
 * @param {number} index
 * @param {{run: () => void, reset: () => void}} actions  Run's click (Run or Stop) and Reset's
 */
export function makeToolbar(index, actions) {
  const runButton = el("button", { type: "button", class: "pc-button pc-run", title: RUN_TITLE, onclick: actions.run }, "▶ Run");
  const resetButton = el("button", { type: "button", class: "pc-button pc-reset", title: "Restore the original code", onclick: actions.reset }, "Reset");
  // The cell's name, the one number the page uses for it (protocol.cellName): the status bar's
  // "running cell 4" and a traceback's File "<cell 4>" say the same. Not Jupyter's execution
  // count, which changes with every run and is named by no traceback of an earlier run's function.
  const counter = el("span", { class: "pc-count", "aria-hidden": "true", text: cellName(index) });
  const statusText = el("span", { class: "pc-cell-status", text: "" });
  const editedBadge = el("span", { class: "pc-edited", text: "edited", hidden: "" });
  const root = el("div", { class: "pc-toolbar" }, counter, runButton, resetButton, editedBadge, statusText);
  return { root, counter, runButton, resetButton, editedBadge, statusText };
}

/**
 * Draw cell `index`'s toolbar (and its root's data-state, data-runs) from the scheduler's state.
 * The status line is left alone while it says the editor could not load (`editorFailed`).
 * @param {{root: HTMLElement, index: number, statusText: HTMLElement, runButton: HTMLElement, editorFailed: boolean}} cell
 * @param {Scheduler} s
 */
export function renderToolbar(cell, s) {
  const run = s.latest.get(cell.index);
  const state = run ? run.state : "idle";
  cell.root.dataset.state = state;
  cell.root.dataset.runs = String(s.ended[cell.index]);
  let text = "";
  if (state === "queued" && run) {
    const ahead = s.ahead(run);
    if (s.kernel.state === "loading") text = s.kernel.restarts ? "Queued: waiting for Python to restart" : "Queued: waiting for Python to load";
    else text = ahead ? `Queued: after ${describe(ahead)}` : "Queued";
  } else if (state === "running") text = s.stopping ? "Stopping…" : "Running…";
  else if (state === "done" && run) text = `Ran in ${(run.answer?.ms ?? 0).toFixed(1)} ms`;
  else if (state === "error" && run) text = run.reason || "Failed: see the error below";
  else if (state === "interrupted" && run) text = run.cause === REASON.stopped ? "Stopped (KeyboardInterrupt)" : `Stopped: ${run.reason}`;
  else if (state === "cancelled" && run) text = `Cancelled: ${run.reason}`;
  if (run && cell.statusText.textContent !== text && !cell.editorFailed) cell.statusText.textContent = text;
  const busy = state === "running" || state === "queued";
  cell.runButton.textContent = state === "running" ? "■ Stop" : "▶ Run";
  cell.runButton.title = state === "running" ? "Stop the running code" : RUN_TITLE;
  cell.runButton.classList.toggle("pc-stop", state === "running");
  cell.runButton.setAttribute("aria-busy", busy ? "true" : "false");
}
