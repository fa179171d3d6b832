// @ts-check
// The assertion console: the page's doctest blocks, run against the learner's namespace.
//
// The blocks are the single source of the checks: the same text pytest runs in
// CI. Each ">>>" line with expected output is a check; its "# Name: description"
// comment names it. Lines without expected output are set-up.

import { el } from "./util.js";

/**
 * Parse doctest text into examples.
 * @param {string} text
 * @returns {{source: string, want: string, name: string, description: string}[]}
 */
export function parseExamples(text) {
  const lines = text.split("\n");
  /** @type {{source: string, want: string[]}[]} */
  const examples = [];
  /** @type {{source: string, want: string[]} | null} */
  let current = null;
  for (const line of lines) {
    const stripped = line.trimStart();
    if (stripped.startsWith(">>>")) {
      current = { source: stripped.slice(4), want: [] };
      examples.push(current);
    } else if (current && stripped.startsWith("...") && current.want.length === 0) {
      current.source += "\n" + stripped.slice(4);
    } else if (current && stripped !== "") {
      current.want.push(line);
    } else {
      current = stripped === "" ? null : current;
    }
  }
  return examples.map((ex) => {
    const hash = ex.source.split("\n")[0].indexOf("#");
    const comment = hash >= 0 ? ex.source.split("\n")[0].slice(hash + 1).trim() : "";
    const [name, ...rest] = comment.split(":");
    return {
      source: (hash >= 0 ? ex.source.slice(0, hash) : ex.source).trim(),
      want: ex.want.join("\n"),
      name: name.trim(),
      description: rest.join(":").trim(),
    };
  });
}

/** A traceback is long: "raises PageFault: t=48 ..." says what matters. @param {string} text */
export function brief(text) {
  if (!text || !text.startsWith("Traceback (most recent call last):")) return text;
  const last = text.trim().split("\n").pop().trim();
  return `raises ${last.replace(/^[\w.]*\.(\w+:)/, "$1")}`;
}

const ICON = { pending: "○", passed: "✓", failed: "✗", running: "…" };

/** @typedef {import("./scheduler.js").Run} Run @typedef {import("./protocol.js").CheckRecord} CheckRecord */

export class ChecksConsole {
  /**
   * @param {HTMLElement[]} blocks  the page's doctest blocks (<pre>), in page order
   * @param {{check: (texts: string[]) => Run, stop: () => void}} actions
   */
  constructor(blocks, actions) {
    this.blocks = blocks;
    this.actions = actions;
    this.examples = blocks.flatMap((pre) => parseExamples(pre.textContent || ""));
    /** @type {Run | null} the checks' run while it waits or runs */
    this.run = null;
    this.runs = 0;
    this.build();
  }

  build() {
    const checks = this.examples.filter((ex) => ex.want !== "");
    // One button that is Stop while the checks wait or run: it keeps the focus
    // (a button that disables itself drops it to the page).
    this.button = /** @type {HTMLButtonElement} */ (el("button", { type: "button", class: "pc-button pc-run", text: "Check my code", onclick: () => (this.run ? this.actions.stop() : this.check()) }));
    this.summary = el("span", { class: "pc-checks-summary", text: `${checks.length} checks · not run yet` });
    this.list = el("ol", { class: "pc-checks-list" });
    this.items = checks.map((ex, i) => {
      const item = el(
        "li",
        { class: "pc-check", "data-status": "pending" },
        el("span", { class: "pc-check-icon", "aria-hidden": "true", text: ICON.pending }),
        el("span", { class: "pc-check-body" },
          el("strong", { class: "pc-check-name", text: ex.name || `Check ${i + 1}` }),
          " — ",
          el("code", { text: ex.source }),
          " → ",
          el("code", { text: brief(ex.want) }),
          ex.description ? el("span", { class: "pc-check-desc", text: ` (${ex.description})` }) : null,
          el("span", { class: "pc-visually-hidden pc-check-status", text: ": not run yet" }),
          el("span", { class: "pc-check-detail" })),
      );
      this.list.append(item);
      return item;
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
    this.blocks[0].closest("div.doctest-block")?.before(this.root);
  }

  /** Run the cells that have not run, then the checks; resolves when the checks' run ends. */
  async check() {
    if (this.run) return this.run.ended;
    const run = (this.run = this.actions.check(this.blocks.map((pre) => pre.textContent || "")));
    this.root.dataset.state = "running";
    this.summary.textContent = "Running your cells, then the checks…";
    for (const item of this.items) this.setItem(item, "running", "");
    this.setBusy(true);
    await run.ended;
    this.run = null;
    this.setBusy(false);
    this.runs += 1;
    if (run.state === "done" && run.answer?.results) {
      this.warnings.replaceChildren(...(run.answer.warnings || []).map((w) => el("p", { text: `⚠ ${w}` })));
      this.show(run.answer.results);
    } else {
      for (const item of this.items) this.setItem(item, "pending", "");
      const why = {
        interrupted: "Stopped: the checks did not finish. Press Check my code to run them again.",
        cancelled: `Not run: ${run.reason}. Press Check my code to run them.`,
        error: `Could not run the checks: ${run.reason || "Python failed while running them"}.`,
      }[run.state] || "The checks did not run.";
      this.summary.textContent = why;
      this.root.dataset.state = run.state === "error" ? "error" : "stopped";
    }
    this.root.dataset.runs = String(this.runs);
    return run;
  }

  /** @param {boolean} busy */
  setBusy(busy) {
    this.button.textContent = busy ? "■ Stop" : "Check my code";
    this.button.title = busy ? "Stop the checks (and the cells they wait for)" : "Run your cells, then the page's checks";
    this.button.classList.toggle("pc-stop", busy);
    this.button.setAttribute("aria-busy", busy ? "true" : "false");
  }

  /** @param {HTMLElement} item @param {string} status @param {string} detail */
  setItem(item, status, detail) {
    item.dataset.status = status;
    /** @type {HTMLElement} */ (item.querySelector(".pc-check-icon")).textContent = /** @type {any} */ (ICON)[status];
    /** @type {HTMLElement} */ (item.querySelector(".pc-check-status")).textContent = `: ${status === "pending" ? "not run yet" : status}`;
    /** @type {HTMLElement} */ (item.querySelector(".pc-check-detail")).textContent = detail;
  }

  /** @param {CheckRecord[]} results */
  show(results) {
    const checks = results.filter((r) => !r.setup);
    const setupFailures = results.filter((r) => r.setup && r.status === "failed");
    this.setupErrors.replaceChildren(
      ...setupFailures.map((r) => el("p", {}, "Set-up line ", el("code", { text: r.source }), " failed: ", el("code", { text: r.got }))),
    );
    checks.forEach((r, i) => {
      const item = this.items[i];
      if (!item) return;
      const detail = r.status === "passed" ? "" : `expected ${brief(r.expected)}, got ${brief(r.got) || "(nothing)"}`;
      this.setItem(item, r.status, detail);
    });
    const passed = checks.filter((r) => r.status === "passed").length;
    this.summary.textContent = `${passed} / ${checks.length} passed`;
    this.root.dataset.state = passed === checks.length && !setupFailures.length ? "passed" : "failed";
  }
}
