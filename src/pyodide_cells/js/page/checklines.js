// @ts-check
// A check's line in the assertion console (or a section's bar): its name, the
// code it runs and what it expects, its status icon and what it found, its
// hints (checkhints.js). The line is matched to its result by the check's
// block and line number (`checkKey`), never by position.

import { el } from "./util.js";
import { makeHints, showHints } from "./checkhints.js";

/**
 * @typedef {{name: string, description: string, source: string, expected: string, setup: boolean,
 *   block: number, line: number, hints?: string[]}} Check  labs.checks.Check, with the page's hints (hints.py)
 * @typedef {Check & {status: "passed" | "failed" | "error" | "not run", got: string, reason: string}} CheckResult
 */

/** A traceback is long: "raises PageFault: t=48 ..." says what matters. @param {string} text */
export function brief(text) {
  if (!text || !text.startsWith("Traceback (most recent call last):")) return text;
  const last = /** @type {string} split gives at least one part */ (text.trim().split("\n").pop()).trim();
  return `raises ${last.replace(/^[\w.]*\.(\w+:)/, "$1")}`;
}

const ICON = { pending: "○", passed: "✓", failed: "✗", error: "✗", "not run": "–", running: "…" };

/** @typedef {keyof typeof ICON} LineStatus */

/** Which check a line or a result is: its block and line number. @param {{block: number, line: number}} c */
export const checkKey = (c) => `${c.block}:${c.line}`;

/** The line of check `c`, the `i`-th of the page's (its name when it has none), not run yet. @param {Check} c @param {number} i */
export function makeLine(c, i) {
  return el(
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
      makeHints(c.hints || [])),
  );
}

/** @param {HTMLElement} item  a check's line @param {LineStatus} status @param {string} detail  what it found */
export function setLine(item, status, detail) {
  item.dataset.status = status;
  showHints(item, status === "failed" || status === "error" || status === "not run");
  /** @type {HTMLElement} */ (item.querySelector(".pc-check-icon")).textContent = ICON[status];
  /** @type {HTMLElement} */ (item.querySelector(".pc-check-status")).textContent = `: ${status === "pending" ? "not run yet" : status}`;
  /** @type {HTMLElement} */ (item.querySelector(".pc-check-detail")).textContent = detail;
}

/** What a check's result found, in words ("" when it passed). @param {CheckResult} r */
export function resultDetail(r) {
  return {
    passed: "",
    failed: `expected ${brief(r.expected)}, got ${brief(r.got) || "(nothing)"}`,
    error: `expected ${brief(r.expected)}, but it raised ${r.got}`,
    "not run": `not run: ${r.reason}`,
  }[r.status];
}
