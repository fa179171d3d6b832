// @ts-check
// The runtime's status bar: a view of the scheduler (what Python is doing,
// what waits) with Stop, Run all and Restart. It keeps no state of its own
// beyond its elements and the state it last published: render() draws it
// again from the scheduler. It is where the page's Python state is published
// (protocol/pagestate.js): the data-pyodide-state attribute on <html>, for CSS
// and tests, and an event on each change, for scripts (offline/offline.js).

import { el } from "./util.js";
import { PYODIDE_STATE_ASK, PYODIDE_STATE_ATTRIBUTE, cellName, pyodideStateEvent } from "../protocol.js";

/** @typedef {import("./scheduler.js").Scheduler} Scheduler @typedef {import("./scheduler.js").Run} Run */

/** What a run is, in words: "cell 3", "the checks". @param {Run} run */
export function describe(run) {
  if (run.kind === "cell" && run.cell !== null) return cellName(run.cell);
  if (run.kind === "checks") return "the checks";
  if (run.kind === "reset") return "the restart";
  if (run.kind === "complete") return "a completion";
  return "code";
}

export class StatusBar {
  /** @param {{onStop: () => void, onRunAll: () => void, onRestart: () => void}} actions */
  constructor({ onStop, onRunAll, onRestart }) {
    this.message = el("span", { class: "pc-runtime-message", text: "Python: starting…" });
    this.text = el("span", { class: "pc-runtime-text" }, this.message); // two lines' room (cells.css)
    this.progress = /** @type {HTMLProgressElement} */ (el("progress", { class: "pc-runtime-progress", max: "4", value: "0", "aria-label": "Python runtime loading progress" }));
    this.stop = /** @type {HTMLButtonElement} */ (el("button", { type: "button", class: "pc-button pc-stop", text: "■ Stop", disabled: true, onclick: onStop }));
    const runAll = el("button", { type: "button", class: "pc-button pc-run-all", text: "Run all", onclick: onRunAll });
    this.restart = el("button", { type: "button", class: "pc-button pc-restart", text: "Restart", title: "Forget every name the cells defined", onclick: onRestart });
    this.root = el(
      "div",
      { class: "pc-runtime", role: "status", "aria-live": "polite", "data-state": "loading" },
      el("span", { class: "pc-runtime-dot", "aria-hidden": "true" }),
      this.text,
      this.progress,
      el("span", { class: "pc-runtime-actions" }, this.stop, runAll, this.restart),
    );
    // Said once per page, under the bar (not in it: the bar stays on screen).
    const kbd = (/** @type {string} */ text) => el("kbd", { text });
    this.keys = el(
      "p",
      { class: "pc-keys" },
      "In a cell: ", kbd("Ctrl+Enter"), " runs it, ", kbd("Shift+Enter"), " runs it and moves on, ",
      kbd("Tab"), " indents (", kbd("Shift+Tab"), " dedents), ", kbd("Ctrl+Space"), " completes a name, ",
      kbd("Esc"), " then ", kbd("Tab"), " leaves the editor.",
    );
    this.readyText = "";
    /** @type {import("../protocol.js").PyodideState | null} the state last published */
    this.published = null;
    // A script that started following the state after it was first published asks for it again.
    document.addEventListener(PYODIDE_STATE_ASK, () => this.published && document.dispatchEvent(pyodideStateEvent(this.published)));
  }

  /** Put the bar under the page's title (or before the first cell). */
  mount() {
    const article = document.querySelector("article") || document.body;
    const anchor = article.querySelector("h1") || document.querySelector("div.cell");
    if (anchor && anchor.tagName === "H1") anchor.after(this.root, this.keys);
    else if (anchor) anchor.before(this.root, this.keys);
    else article.prepend(this.root, this.keys);
    // A link to a place on the page (#assertion-console, a heading) must land below the bar,
    // which sticks at the top: cells.css adds its height, kept here, to the target's scroll margin.
    const keep = () => document.documentElement.style.setProperty("--pc-bar-height", `${this.root.offsetHeight}px`);
    keep();
    if ("ResizeObserver" in window) new ResizeObserver(keep).observe(this.root);
  }

  /**
   * @param {Scheduler} s
   * @param {{startedAt: number, canInterrupt: boolean, ranAny: boolean}} page
   */
  render(s, page) {
    const { kernel } = s;
    const running = s.running;
    const state = kernel.state === "ready" && s.busy ? "running" : kernel.state;
    let text;
    if (kernel.state === "loading") {
      const step = `(${kernel.step}/${kernel.steps})`;
      text = kernel.restarts ? `${kernel.note ? `${kernel.note}. ` : ""}Restarting Python ${step}…` : `Python: ${kernel.message} ${step}…`;
    } else if (kernel.state === "error") {
      text = `Python failed to start: ${kernel.message.replace(/\.+$/, "")}. Check your connection, then press Restart to try again.`;
    } else if (running) {
      const waiting = s.queue.length - 1;
      text = s.stopping ? "Stopping…" : `Python: running ${describe(running)}${waiting ? ` (${waiting} more queued)` : ""}…`;
    } else {
      if (!this.readyText) {
        const seconds = ((performance.now() - page.startedAt) / 1000).toFixed(1);
        const how = { "": "", browser: " from this browser's start-up snapshot", site: " from the site's start-up snapshot" }[kernel.restored];
        // Which Stop this page has: without cross-origin isolation (a host that sends no
        // COOP/COEP, before the service worker adds them) Stop restarts Python.
        const stop = page.canInterrupt ? "" : " (Stop restarts Python on this host)";
        this.readyText = `Python 3.12 (Pyodide 0.26.2) ready in ${seconds} s${how}: edit a cell, then Run or Ctrl+Enter${stop}`;
      }
      text = kernel.note || (page.ranAny ? "Python ready" : this.readyText);
    }
    if (this.message.textContent !== text) {
      this.message.textContent = text;
      this.text.title = text; // the bar shows two lines of it; the rest on hover or a long press
    }
    this.root.dataset.state = state;
    document.documentElement.setAttribute(PYODIDE_STATE_ATTRIBUTE, state);
    if (this.published !== state) {
      this.published = state;
      document.dispatchEvent(pyodideStateEvent(state));
    }
    this.progress.hidden = kernel.state !== "loading";
    this.progress.max = kernel.steps;
    this.progress.value = kernel.step;
    this.stop.disabled = !s.busy;
    this.stop.title = page.canInterrupt
      ? "Stop the running code and cancel what waits (Python keeps its names)"
      : "Stop the running code and cancel what waits (Python restarts: the names the cells defined are lost)";
    this.restart.title = kernel.state === "error" ? "Try to start Python again" : "Forget every name the cells defined";
  }
}
