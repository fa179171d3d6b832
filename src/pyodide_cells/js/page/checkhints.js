// @ts-check
// A check's hints, written in the page next to it (hints.py): offered one at a
// time while the check fails ("Show a hint", then "Another hint"), hidden
// while it passes or has not run. Apart from the check's line (checklines.js),
// which only says when the check fails.

import { el } from "./util.js";

/** @type {WeakMap<HTMLElement, number>} how many hints each check's hints can show */
const counts = new WeakMap();

/**
 * The hints' list and their button, for a check's line; null when the check has none.
 * @param {string[]} hints
 */
export function makeHints(hints) {
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
  const root = el("span", { class: "pc-check-hints" }, list, button);
  counts.set(root, hints.length);
  return root;
}

/**
 * Show the hints of a check's line (those shown, and the button while more are left) only while it fails.
 * @param {HTMLElement} item  the check's line @param {boolean} failing
 */
export function showHints(item, failing) {
  const hints = /** @type {HTMLElement | null} */ (item.querySelector(".pc-check-hints"));
  if (!hints) return;
  const list = /** @type {HTMLElement} */ (hints.querySelector(".pc-hints"));
  const button = /** @type {HTMLButtonElement} */ (hints.querySelector(".pc-hint-button"));
  button.hidden = !failing || list.children.length >= (counts.get(hints) || 0);
  list.hidden = !failing;
}
