// @ts-check
// The assertion console: the page's checks, run against the learner's namespace.
//
// It parses nothing: the checks were read from the page's doctest blocks at
// build time by labs.checks (pages.py puts them in the page's config), and
// the same engine runs them in Python and returns one result per check,
// matched to its line here by block and line number, never by position.

import { el } from "./util.js";

/** A traceback is long: "raises PageFault: t=48 ..." says what matters. @param {string} text */
export function brief(text) {
  if (!text || !text.startsWith("Traceback (most recent call last):")) return text;
  const last = text.trim().split("\n").pop().trim();
  return `raises ${last.replace(/^[\w.]*\.(\w+:)/, "$1")}`;
}

const ICON = { pending: "○", passed: "✓", failed: "✗", error: "✗", "not run": "–", running: "…" };

/**
 * @typedef {import("./scheduler.js").Run} Run
 * @typedef {{name: string, description: string, source: string, expected: string, setup: boolean,
 *   block: number, line: number, hints?: string[]}} Check  labs.checks.Check, with the page's hints (hints.py)
 * @typedef {Check & {status: "passed" | "failed" | "error" | "not run", got: string, reason: string}} CheckResult
 */

/** @param {{block: number, line: number}} c */
const key = (c) => `${c.block}:${c.line}`;

export class ChecksConsole {
  /**
   * @param {HTMLElement} anchor  the page's first doctest block: the console goes before it
   * @param {{blocks: string[], checks: Check[]}} page  from the page's config (pages.py)
   * @param {{check: (blocks: string[], sink: import("./scheduler.js").Sink) => Run, stop: () => void,
   *   checked: (passed: number, total: number) => void}} actions
   * @param {import("./progress.js").Progress | null} last  what the checks found the last time they ran here
   */
  constructor(anchor, page, actions, last = null) {
    this.last = last;
    this.page = page;
    this.actions = actions;
    /** @type {Run | null} the checks' run while it waits or runs */
    this.run = null;
    this.runs = 0;
    /** @type {Map<string, HTMLElement>} each check's line, by block and line number */
    this.items = new Map();
    /** @type {Map<HTMLElement, number>} how many hints each check's line can show */
    this.hintCounts = new Map();
    this.build(anchor);
  }

  /** @param {HTMLElement} anchor */
  build(anchor) {
    const checks = this.page.checks.filter((c) => !c.setup);
    // One button that is Stop while the checks wait or run: it keeps the focus
    // (a button that disables itself drops it to the page).
    this.button = /** @type {HTMLButtonElement} */ (el("button", { type: "button", class: "pc-button pc-run", text: "Check my code", onclick: () => (this.run ? this.actions.stop() : this.check()) }));
    const before = this.last && this.last.total === checks.length ? ` (last time: ${this.last.passed} / ${this.last.total} passed)` : "";
    this.summary = el("span", { class: "pc-checks-summary", text: `${checks.length} checks · not run yet${before}` });
    this.list = el("ol", { class: "pc-checks-list" });
    checks.forEach((c, i) => {
      const item = el(
        "li",
        { class: "pc-check", "data-status": "pending" },
        el("span", { class: "pc-check-icon", "aria-hidden": "true", text: ICON.pending }),
        el("span", { class: "pc-check-body" },
          el("strong", { class: "pc-check-name", text: c.name || `Check ${i + 1}` }),
          " — ",
          el("code", { text: c.source.split("#")[0].trim() }),
          " → ",
          el("code", { text: brief(c.expected) }),
          c.description ? el("span", { class: "pc-check-desc", text: ` (${c.description})` }) : null,
          el("span", { class: "pc-visually-hidden pc-check-status", text: ": not run yet" }),
          el("span", { class: "pc-check-detail" }),
          this.hintsFor(c)),
      );
      this.list.append(item);
      this.items.set(key(c), item);
      this.hintCounts.set(item, (c.hints || []).length);
    });
    this.setupErrors = el("div", { class: "pc-checks-setup", role: "alert" });
    this.warnings = el("div", { class: "pc-checks-warnings", role: "alert" });
    this.root = el(
      "section",
      { class: "pc-checks", "data-state": "pending", "data-runs": "0", "aria-label": "Assertion console" },
      el("div", { class: "pc-checks-head" },
        el("strong", { text: "Assertion console" }),
        this.summary,
        this.button),
      this.warnings,
      this.setupErrors,
      this.list,
    );
    this.summary.setAttribute("aria-live", "polite");
    (anchor.closest("div.doctest-block") || anchor).before(this.root);
  }

  /**
   * The check's hints, written in the page next to it (hints.py): offered one
   * at a time while the check fails ("Show a hint", then "Another hint").
   * @param {Check} c
   */
  hintsFor(c) {
    const hints = c.hints || [];
    if (!hints.length) return null;
    const list = el("ol", { class: "pc-hints", "aria-live": "polite" });
    const button = el("button", { type: "button", class: "pc-button pc-hint-button", hidden: "", text: "Show a hint" });
    button.addEventListener("click", () => {
      const shown = list.children.length;
      const hint = el("li", { text: hints[shown] });
      if (shown < hints.length) list.append(hint);
      button.textContent = "Another hint";
      button.hidden = list.children.length >= hints.length;
      if (button.hidden) {
        hint.tabIndex = -1; // the button is gone: the focus goes to what it showed, not to the page
        hint.focus();
      }
    });
    return el("span", { class: "pc-check-hints" }, list, button);
  }

  /** Run the cells that have not run, then the checks; resolves when the checks' run ends. */
  async check() {
    if (this.run) return this.run.ended;
    /** @type {string} what Python said when the checks themselves failed */
    let failure = "";
    const sink = { error: (/** @type {{traceback?: string, ename?: string, evalue?: string}} */ msg) => {
      failure = msg.ename ? `${msg.ename}: ${msg.evalue}` : (msg.traceback || "").trim().split("\n").pop() || "";
    } };
    const run = (this.run = this.actions.check(this.page.blocks, sink));
    delete this.root.dataset.stale;
    this.root.dataset.state = "running";
    this.summary.textContent = "Running your cells, then the checks…";
    for (const item of this.items.values()) this.setItem(item, "running", "");
    this.setBusy(true);
    await run.ended;
    this.run = null;
    this.setBusy(false);
    this.runs += 1;
    if (run.state === "done" && run.answer?.results) {
      this.warnings.replaceChildren(...(run.answer.warnings || []).map((w) => el("p", { text: `⚠ ${w}` })));
      this.show(/** @type {CheckResult[]} */ (/** @type {unknown} */ (run.answer.results)));
    } else {
      for (const item of this.items.values()) this.setItem(item, "pending", "");
      const why = {
        interrupted: "Stopped: the checks did not finish. Press Check my code to run them again.",
        cancelled: `Not run: ${run.reason}. Press Check my code to run them.`,
        error: `Could not run the checks: ${run.reason || failure || "Python failed while running them"}`,
      }[run.state] || "The checks did not run.";
      this.summary.textContent = why;
      this.root.dataset.state = run.state === "error" ? "error" : "stopped";
    }
    this.root.dataset.runs = String(this.runs);
    return run;
  }

  /**
   * A cell's code changed (an edit, a Reset): results shown are of the code
   * before it, and the summary says so until the checks run again.
   */
  codeChanged() {
    if (this.run || !this.runs || this.root.dataset.stale === "true") return;
    this.root.dataset.stale = "true";
    this.summary.textContent += " · before your last change: press Check my code again";
  }

  /** @param {boolean} busy */
  setBusy(busy) {
    this.button.textContent = busy ? "■ Stop" : "Check my code";
    this.button.title = busy ? "Stop the checks (and the cells they wait for)" : "Run your cells, then the page's checks";
    this.button.classList.toggle("pc-stop", busy);
    this.button.setAttribute("aria-busy", busy ? "true" : "false");
  }

  /** @param {HTMLElement} item @param {keyof typeof ICON} status @param {string} detail */
  setItem(item, status, detail) {
    item.dataset.status = status;
    const hints = /** @type {HTMLElement | null} */ (item.querySelector(".pc-check-hints"));
    if (hints) {
      const failing = status === "failed" || status === "error" || status === "not run";
      const list = /** @type {HTMLElement} */ (hints.querySelector(".pc-hints"));
      const button = /** @type {HTMLButtonElement} */ (hints.querySelector(".pc-hint-button"));
      button.hidden = !failing || list.children.length >= (this.hintCounts.get(item) || 0);
      list.hidden = !failing;
    }
    /** @type {HTMLElement} */ (item.querySelector(".pc-check-icon")).textContent = ICON[status];
    /** @type {HTMLElement} */ (item.querySelector(".pc-check-status")).textContent = `: ${status === "pending" ? "not run yet" : status}`;
    /** @type {HTMLElement} */ (item.querySelector(".pc-check-detail")).textContent = detail;
  }

  /** @param {CheckResult[]} results */
  show(results) {
    const setupFailures = results.filter((r) => r.setup && r.status === "error");
    this.setupErrors.replaceChildren(
      ...setupFailures.map((r) => el("p", {}, "Set-up line ", el("code", { text: r.source }), " failed: ", el("code", { text: r.got }))),
    );
    let passed = 0;
    for (const r of results) {
      const item = this.items.get(key(r));
      if (!item || r.setup) continue;
      if (r.status === "passed") passed += 1;
      const detail = {
        passed: "",
        failed: `expected ${brief(r.expected)}, got ${brief(r.got) || "(nothing)"}`,
        error: `expected ${brief(r.expected)}, but it raised ${r.got}`,
        "not run": `not run: ${r.reason}`,
      }[r.status];
      this.setItem(item, r.status, detail);
    }
    this.summary.textContent = `${passed} / ${this.items.size} passed`;
    this.actions.checked(passed, this.items.size);
    this.root.dataset.state = passed === this.items.size && !setupFailures.length ? "passed" : "failed";
  }
}
