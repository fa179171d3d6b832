// @ts-check
// The Check bars of a page's later sections: checks in a section other than
// the assertion console's (a second exercise's) get a bar before that
// section's first doctest block, with its own Check my code, its own count and
// its checks' lines, linked up to the console, where the whole page's count
// is. Apart from the console (checks.js), which runs the checks and tells
// each bar what they found.

import { el, headingText } from "./util.js";
import { checkKey } from "./checklines.js";

/** @typedef {import("./checklines.js").Check} Check */

/** The Check my code button, or Stop while the checks wait or run. @param {HTMLButtonElement} button @param {boolean} busy */
export function setCheckButton(button, busy) {
  button.textContent = busy ? "■ Stop" : "Check my code";
  button.title = busy ? "Stop the checks (and the cells they wait for)" : "Run your cells, then the page's checks";
  button.classList.toggle("pc-stop", busy);
  button.setAttribute("aria-busy", busy ? "true" : "false");
}

/**
 * The bars of the sections whose checks are not the console's, each put before its section's
 * first block, its checks' lines (with their hints) moved into it from `items`. The page's
 * doctest blocks are read in page order (pages.py), so the k-th block in the page is block k;
 * none when the page is not the one the config was built from.
 * @param {{blocks: string[], checks: Check[]}} page  from the page's config (pages.py)
 * @param {HTMLElement} consoleRoot  the assertion console: given an id, for the bars' links
 * @param {Map<string, HTMLElement>} items  each check's line, by checkKey
 * @param {() => void} onclick  check, or stop while the checks run
 * @returns {SectionBar[]}
 */
export function makeSectionBars(page, consoleRoot, items, onclick) {
  const blocks = [...document.querySelectorAll("div.doctest-block")];
  if (blocks.length !== page.blocks.length) return []; // not the page the config was built from
  /** @type {Map<Element, {title: string, first: Element, keys: Set<string>}>} */
  const sections = new Map();
  for (const c of page.checks) {
    if (c.setup) continue;
    const section = sectionOf(blocks[c.block]);
    if (!section || section === sectionOf(consoleRoot)) continue;
    const entry = sections.get(section) || { title: headingOf(section), first: blocks[c.block], keys: new Set() };
    entry.keys.add(checkKey(c));
    sections.set(section, entry);
  }
  if (!sections.size) return [];
  consoleRoot.id ||= "assertion-console";
  const bars = [];
  for (const { title, first, keys } of sections.values()) {
    const lines = [...keys].map((k) => /** @type {HTMLElement} */ (items.get(k)));
    const bar = new SectionBar(title, keys, lines, consoleRoot.id, onclick);
    first.before(bar.root);
    bars.push(bar);
  }
  return bars;
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
export class SectionBar {
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
