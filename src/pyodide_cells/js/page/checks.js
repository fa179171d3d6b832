// @ts-check
// The assertion console: the page's checks, run against the learner's namespace.
//
// It parses nothing: the checks were read from the page's doctest blocks at
// build time by labs.checks (pages.py puts them in the page's config), and
// the same engine runs them in Python and returns one result per check,
// matched to its line here by block and line number, never by position.

import { el, headingText } from "./util.js";

/** A traceback is long: "raises PageFault: t=48 ..." says what matters. @param {string} text */
export function brief(text) {
  if (!text || !text.startsWith("Traceback (most recent call last):")) return text;
  const last = /** @type {string} split gives at least one part */ (text.trim().split("\n").pop()).trim();
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
   *   checked: (passed: number, total: number) => void, broken?: () => string[]}} actions
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
    /** @type {Map<string, HTMLElement>} each check's line, by block and line number */
    this.items = new Map();
    /** @type {Map<HTMLElement, number>} how many hints each check's line can show */
    this.hintCounts = new Map();
    /** @type {SectionBar[]} a bar by each later section of checks (a second exercise's) */
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
    this.buildSectionBars();
    if (this.bars.length) this.summary.textContent = `${this.ownCount()} checks · not run yet${this.before}`;
  }

  /** How many checks are the console's own section's (the first exercise's), not a later bar's. */
  ownCount() {
    return this.items.size - this.bars.reduce((n, bar) => n + bar.keys.size, 0);
  }

  /**
   * The page's doctest blocks are read in page order (pages.py), so the k-th
   * block in the page is block k. Checks in a section other than the console's
   * (a second exercise's) get a bar before that section's first block: its own
   * Check my code, its own count, its checks' lines (moved from the console's
   * list, with their hints) and a link up to the console, where the whole page's
   * count and the notes about cells that raised are.
   */
  buildSectionBars() {
    const blocks = [...document.querySelectorAll("div.doctest-block")];
    if (blocks.length !== this.page.blocks.length) return; // not the page the config was built from
    /** @type {Map<Element, {title: string, first: Element, keys: Set<string>}>} */
    const sections = new Map();
    for (const c of this.page.checks) {
      if (c.setup) continue;
      const section = sectionOf(blocks[c.block]);
      if (!section || section === sectionOf(this.root)) continue;
      const entry = sections.get(section) || { title: headingOf(section), first: blocks[c.block], keys: new Set() };
      entry.keys.add(key(c));
      sections.set(section, entry);
    }
    if (!sections.size) return;
    this.root.id ||= "assertion-console";
    for (const { title, first, keys } of sections.values()) {
      const lines = [...keys].map((k) => /** @type {HTMLElement} */ (this.items.get(k)));
      const bar = new SectionBar(title, keys, lines, this.root.id, () => (this.run ? this.actions.stop() : this.check()));
      first.before(bar.root);
      this.bars.push(bar);
    }
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

  /** Run the cells the checks need that have not run (scheduler.check), then the checks; resolves when the checks' run ends. */
  async check() {
    if (this.run) return this.run.ended;
    /** @type {string} what Python said when the checks themselves failed */
    let failure = "";
    const sink = { error: (/** @type {{traceback?: string, ename?: string, evalue?: string}} */ msg) => {
      failure = msg.ename ? `${msg.ename}: ${msg.evalue}` : (msg.traceback || "").trim().split("\n").pop() || "";
    } };
    const run = (this.run = this.actions.check(this.page.blocks, sink));
    delete this.root.dataset.stale;
    for (const bar of this.bars) delete bar.root.dataset.stale;
    this.root.dataset.state = "running";
    this.summary.textContent = "Running your cells, then the checks…";
    for (const item of this.items.values()) this.setItem(item, "running", "");
    this.setBusy(true);
    for (const bar of this.bars) bar.running();
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
      for (const item of this.items.values()) this.setItem(item, "pending", "");
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
   * A cell's code changed (an edit, a Reset): results shown are of the code
   * before it, and the summary says so until the checks run again.
   */
  codeChanged() {
    if (this.run || !this.runs || this.root.dataset.stale === "true") return;
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
      const item = this.items.get(key(r));
      if (!item || r.setup) continue;
      if (r.status === "passed") {
        passed += 1;
        passing.add(key(r));
      }
      const detail = {
        passed: "",
        failed: `expected ${brief(r.expected)}, got ${brief(r.got) || "(nothing)"}`,
        error: `expected ${brief(r.expected)}, but it raised ${r.got}`,
        "not run": `not run: ${r.reason}`,
      }[r.status];
      this.setItem(item, r.status, detail);
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

/** The Check my code button, or Stop while the checks wait or run. @param {HTMLButtonElement} button @param {boolean} busy */
function setCheckButton(button, busy) {
  button.textContent = busy ? "■ Stop" : "Check my code";
  button.title = busy ? "Stop the checks (and the cells they wait for)" : "Run your cells, then the page's checks";
  button.classList.toggle("pc-stop", busy);
  button.setAttribute("aria-busy", busy ? "true" : "false");
}

/** The section (h2 level, or the nearest) an element is in. @param {Element | undefined} node */
function sectionOf(node) {
  let section = node?.closest("section") || null;
  while (section?.parentElement?.closest("section") && !section.querySelector(":scope > h2")) {
    section = section.parentElement.closest("section");
  }
  return section;
}

/** A section's heading as text, without its permalink. @param {Element} section */
function headingOf(section) {
  return headingText(section) || "this section";
}

/** A later section's own Check my code and count (a second exercise's checks), linked to the console. */
class SectionBar {
  /**
   * @param {string} title  the section's heading
   * @param {Set<string>} keys  its checks (block:line)
   * @param {HTMLElement[]} lines  its checks' lines, with their hints (moved here from the console)
   * @param {string} consoleId  where the whole page's count is
   * @param {() => void} onclick  check, or stop while the checks run
   */
  constructor(title, keys, lines, consoleId, onclick) {
    this.keys = keys;
    this.title = title;
    this.button = /** @type {HTMLButtonElement} */ (el("button", { type: "button", class: "pc-button pc-run", text: "Check my code", onclick }));
    this.summary = el("span", { class: "pc-checks-bar-summary", text: `${keys.size} checks here · not run yet` });
    this.summary.setAttribute("aria-live", "polite");
    this.root = el("div", { class: "pc-checks-bar", "data-state": "pending", role: "group", "aria-label": `Checks of “${title}”` },
      el("div", { class: "pc-checks-head" },
        this.summary,
        this.button,
        el("a", { href: `#${consoleId}`, class: "pc-checks-link", text: "the whole page's count in the assertion console ↑" })),
      el("ol", { class: "pc-checks-list" }, ...lines));
  }

  running() {
    this.root.dataset.state = "running";
    this.summary.textContent = "Running your cells, then the checks…";
  }

  /** @param {string} why */
  stopped(why) {
    this.root.dataset.state = "stopped";
    this.summary.textContent = why;
  }

  /**
   * Count this section's passing checks; returns the part of the console's summary it makes.
   * @param {Set<string>} passing @param {boolean} broken  a cell's latest run raised: not a pass
   */
  show(passing, broken) {
    const passed = [...this.keys].filter((k) => passing.has(k)).length;
    this.summary.textContent = `${passed} / ${this.keys.size} of these checks passed${broken ? " · a cell raised an error: see the assertion console" : ""}`;
    this.root.dataset.state = passed === this.keys.size && !broken ? "passed" : "failed";
    return `${this.title}: ${passed} / ${this.keys.size}`;
  }
}
