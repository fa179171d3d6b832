// The assertion console: the page's doctest blocks, run against the learner's namespace.
//
// The blocks are the single source of the checks: the same text pytest runs in
// CI. Each ">>>" line with expected output is a check; its "# Name: description"
// comment names it. Lines without expected output are set-up.

import { el } from "./util.js";

/** Parse doctest text into examples: {source, want, name, description}. */
export function parseExamples(text) {
  const lines = text.split("\n");
  const examples = [];
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

/** A traceback is long: "raises PageFault: t=48 ..." says what matters. */
export function brief(text) {
  if (!text || !text.startsWith("Traceback (most recent call last):")) return text;
  const last = text.trim().split("\n").pop().trim();
  return `raises ${last.replace(/^[\w.]*\.(\w+:)/, "$1")}`;
}

const ICON = { pending: "○", passed: "✓", failed: "✗", running: "…" };

export class ChecksConsole {
  constructor(blocks, runChecks) {
    this.blocks = blocks; // <pre> elements, in page order
    this.runChecks = runChecks; // async (texts) => results
    this.examples = blocks.flatMap((pre) => parseExamples(pre.textContent));
    this.build();
  }

  build() {
    const checks = this.examples.filter((ex) => ex.want !== "");
    this.button = el("button", { type: "button", class: "pc-button pc-run", text: "Check my code", onclick: () => this.check() });
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
      { class: "pc-checks", "data-state": "pending", "aria-label": "Assertion console" },
      el("div", { class: "pc-checks-head" },
        el("strong", { text: "Assertion console" }),
        this.summary,
        this.button),
      this.warnings,
      this.setupErrors,
      this.list,
    );
    this.root.querySelector(".pc-checks-summary").setAttribute("aria-live", "polite");
    this.blocks[0].closest("div.doctest-block").before(this.root);
  }

  async check() {
    this.root.dataset.state = "running";
    this.button.disabled = true;
    this.summary.textContent = "Running your cells, then the checks…";
    for (const item of this.items) this.setItem(item, "running", "");
    let results;
    try {
      const answer = await this.runChecks(this.blocks.map((pre) => pre.textContent));
      results = answer.results;
      this.warnings.replaceChildren(...answer.warnings.map((w) => el("p", { text: `⚠ ${w}` })));
    } catch (err) {
      this.summary.textContent = `Could not run the checks: ${err.message || err}`;
      this.root.dataset.state = "error";
      this.button.disabled = false;
      return;
    }
    this.show(results);
    this.button.disabled = false;
  }

  setItem(item, status, detail) {
    item.dataset.status = status;
    item.querySelector(".pc-check-icon").textContent = ICON[status];
    item.querySelector(".pc-check-status").textContent = `: ${status}`;
    item.querySelector(".pc-check-detail").textContent = detail;
  }

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
