// @ts-check
// The assertion console: the page's checks, run against the learner's namespace.
//
// It parses nothing: the checks were read from the page's doctest blocks at
// build time by labs.checks (pages.py puts them in the page's config), and
// the same engine runs them in Python and returns one result per check,
// matched to its line here by block and line number, never by position.
// Each check's line is drawn by checklines.js (its hints by checkhints.js);
// a later section's checks go in that section's bar (checkbars.js).

import { el } from "./util.js";
import { checkKey, makeLine, resultDetail, setLine } from "./checklines.js";
import { makeSectionBars, setCheckButton } from "./checkbars.js";
import { describe } from "./statusbar.js";

/**
 * @typedef {import("./scheduler.js").Run} Run
 * @typedef {import("./checklines.js").Check} Check
 * @typedef {import("./checklines.js").CheckResult} CheckResult
 */

export class ChecksConsole {
  /**
   * @param {HTMLElement} anchor  the page's first doctest block: the console goes before it
   * @param {{blocks: string[], checks: Check[]}} page  from the page's config (pages.py)
   * @param {{check: (blocks: string[], sink: import("./scheduler.js").Sink) => Run, stop: () => void,
   *   checked: (passed: number, total: number) => void, broken?: () => string[], running: () => Run | null}} actions
   *   `running`: the run Python is on now (the scheduler's)
   *   `broken`: the cells whose latest run raised (how the page names them): the checks then ran
   *   against what those cells defined before, if anything, and the console says so
   * @param {import("../reader/progress.js").Progress | null} last  what the checks found the last time they ran here
   */
  constructor(anchor, page, actions, last = null) {
    this.last = last;
    this.page = page;
    this.actions = actions;
    /** @type {Run | null} the checks' run while it waits or runs */
    this.run = null;
    this.runs = 0;
    /** whether the results shown are of code changed since (the summary says so) */
    this.stale = false;
    /** @type {Map<string, HTMLElement>} each check's line, by block and line number */
    this.items = new Map();
    /** @type {import("./checkbars.js").SectionBar[]} a bar by each later section of checks (a second exercise's) */
    this.bars = [];
    const checks = this.page.checks.filter((c) => !c.setup);
    // One button that is Stop while the checks wait or run: it keeps the focus
    // (a button that disables itself drops it to the page).
    this.button = /** @type {HTMLButtonElement} */ (el("button", { type: "button", class: "pc-button pc-run", text: "Check my code", onclick: () => (this.run ? this.actions.stop() : this.check()) }));
    // What the last visit's checks found, for the whole page (the progress kept is the page's).
    this.before = this.last && this.last.total === checks.length ? ` (last time: ${this.last.passed} / ${this.last.total} passed)` : "";
    this.summary = el("span", { class: "pc-checks-summary", text: `${checks.length} checks · not run yet${this.before}` });
    this.list = el("ol", { class: "pc-checks-list" });
    checks.forEach((c, i) => {
      const item = makeLine(c, i);
      this.list.append(item);
      this.items.set(checkKey(c), item);
    });
    this.setupErrors = el("div", { class: "pc-checks-setup", role: "alert" });
    this.parts = el("p", { class: "pc-checks-parts" }); // per section, when a later section has checks of its own
    this.warnings = el("div", { class: "pc-checks-warnings", role: "alert" });
    this.root = el(
      "section",
      { class: "pc-checks", "data-state": "pending", "data-runs": "0", "aria-label": "Assertion console" },
      el("div", { class: "pc-checks-head" },
        el("strong", { text: "Assertion console" }),
        this.summary,
        this.button),
      this.parts,
      this.warnings,
      this.setupErrors,
      this.list,
    );
    this.summary.setAttribute("aria-live", "polite");
    (anchor.closest("div.doctest-block") || anchor).before(this.root);
    this.bars = makeSectionBars(this.page, this.root, this.items, () => (this.run ? this.actions.stop() : this.check()));
    if (this.bars.length) this.summary.textContent = `${this.ownCount()} checks · not run yet${this.before}`;
  }

  /** How many checks are the console's own section's (the first exercise's), not a later bar's. */
  ownCount() {
    return this.items.size - this.bars.reduce((n, bar) => n + bar.keys.size, 0);
  }

  /** Run the cells the checks need that have not run (scheduler.check), then the checks; resolves when the checks' run ends. */
  async check() {
    if (this.run) return this.run.ended;
    /** @type {string} what Python said when the checks themselves failed */
    let failure = "";
    const sink = { error: (/** @type {{traceback?: string, ename?: string, evalue?: string}} */ msg) => {
      failure = msg.ename ? `${msg.ename}: ${msg.evalue}` : (msg.traceback || "").trim().split("\n").pop() || "";
    } };
    const run = (this.run = this.actions.check(this.page.blocks, sink));
    this.stale = false;
    delete this.root.dataset.stale;
    for (const bar of this.bars) delete bar.root.dataset.stale;
    this.root.dataset.state = "running";
    this.summary.textContent = "Running your cells, then the checks…";
    for (const item of this.items.values()) setLine(item, "running", "");
    this.setBusy(true);
    for (const bar of this.bars) bar.running();
    this.render({ running: this.actions.running() }); // a cell may have started already, as the run was queued
    await run.ended;
    this.run = null;
    this.setBusy(false);
    this.runs += 1;
    if (run.state === "done" && run.answer?.results) {
      const broken = this.actions.broken?.() || [];
      this.warnings.replaceChildren(
        ...broken.map((cell) => el("p", { text: `⚠ Your ${cell} raised an error when it ran: the checks ran against what was defined before it, if anything. Fix it, then check again.` })),
        ...(run.answer.warnings || []).map((w) => el("p", { text: `⚠ ${w}` })),
      );
      this.show(/** @type {CheckResult[]} */ (/** @type {unknown} */ (run.answer.results)), broken.length > 0);
    } else {
      this.warnings.replaceChildren(); // they were about a run of the checks that is not shown now
      for (const item of this.items.values()) setLine(item, "pending", "");
      const why = /** @type {Partial<Record<Run["state"], string>>} */ ({
        interrupted: "Stopped: the checks did not finish. Press Check my code to run them again.",
        cancelled: `Not run: ${run.reason}. Press Check my code to run them.`,
        error: `Could not run the checks: ${run.reason || failure || "Python failed while running them"}`,
      })[run.state] || "The checks did not run.";
      this.summary.textContent = why;
      this.root.dataset.state = run.state === "error" ? "error" : "stopped";
      for (const bar of this.bars) bar.stopped(why);
    }
    this.root.dataset.runs = String(this.runs);
    return run;
  }

  /**
   * While the checks wait for the cells they need, which one runs, and then that the checks run:
   * an endless loop in an exercise showed only "Running your cells, then the checks…" here,
   * with nothing to say which cell to fix (Stop ends it).
   * @param {{running: Run | null}} s  the scheduler
   */
  render(s) {
    if (!this.run) return;
    const running = s.running;
    const text = running === this.run ? "Running the checks…"
      : running?.kind === "cell" ? `Running ${describe(running)}, then the checks…`
        : "Running your cells, then the checks…";
    for (const summary of [this.summary, ...this.bars.map((bar) => bar.summary)]) {
      if (summary.textContent !== text) summary.textContent = text;
    }
  }

  /**
   * A cell's code changed (an edit, a Reset): results shown are of the code
   * before it, and the summary says so until the checks run again.
   */
  codeChanged() {
    if (this.run || !this.runs || this.stale) return;
    this.stale = true;
    this.root.dataset.stale = "true";
    for (const bar of this.bars) bar.root.dataset.stale = "true";
    for (const summary of [this.summary, ...this.bars.map((bar) => bar.summary)]) {
      summary.textContent += " · before your last change: press Check my code again";
    }
  }

  /** @param {boolean} busy */
  setBusy(busy) {
    for (const button of [this.button, ...this.bars.map((bar) => bar.button)]) setCheckButton(button, busy);
  }

  /** @param {CheckResult[]} results @param {boolean} [broken]  a cell's latest run raised: not a pass, whatever the count */
  show(results, broken = false) {
    const setupFailures = results.filter((r) => r.setup && r.status === "error");
    this.setupErrors.replaceChildren(
      ...setupFailures.map((r) => el("p", {}, "Set-up line ", el("code", { text: r.source }), " failed: ", el("code", { text: r.got }))),
    );
    let passed = 0;
    /** @type {Set<string>} */
    const passing = new Set();
    for (const r of results) {
      const item = this.items.get(checkKey(r));
      if (!item || r.setup) continue;
      if (r.status === "passed") {
        passed += 1;
        passing.add(checkKey(r));
      }
      setLine(item, r.status, resultDetail(r));
    }
    // The head counts this section's checks (the first exercise's): a learner who has finished it
    // reads a pass, not the page's total with the next exercise's checks still to come.
    const parts = this.bars.map((bar) => bar.show(passing, broken));
    const own = this.ownCount();
    const ownPassed = passed - this.bars.reduce((n, bar) => n + [...bar.keys].filter((k) => passing.has(k)).length, 0);
    if (parts.length) this.parts.textContent = `The whole page: ${passed} / ${this.items.size} passed · ${parts.join(" · ")}`;
    this.summary.textContent = `${ownPassed} / ${own} passed${broken ? " · a cell raised an error: see above" : ""}`;
    this.actions.checked(passed, this.items.size);
    this.root.dataset.state = ownPassed === own && !setupFailures.length && !broken ? "passed" : "failed";
  }
}
