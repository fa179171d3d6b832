// @ts-check
// A learner's progress, kept in this browser: how many of a lab's checks
// passed the last time its "Check my code" ran. The lab page writes it;
// every page shows it beside the links to the labs (the sidebar, the
// landing page's cards). Nothing leaves the browser.

/** @typedef {{passed: number, total: number, at: string}} Progress */

import { pagePath } from "./pagepath.js";

const PREFIX = "pyodide-cells:v1:progress:";

/**
 * The key a page's progress is kept under: its path, the same whether a host
 * serves it as `/lab.html`, `/lab` or `/lab/`.
 * @param {string} pathname
 */
export function progressKey(pathname) {
  return `${PREFIX}${pagePath(pathname)}`;
}

/**
 * Parse what storage holds (null when it is missing or not a progress record).
 * @param {string | null} text
 * @returns {Progress | null}
 */
export function parseProgress(text) {
  if (!text) return null;
  try {
    const value = JSON.parse(text);
    const ok = Number.isInteger(value?.passed) && Number.isInteger(value?.total) && value.total > 0 && value.passed >= 0 && value.passed <= value.total;
    return ok ? { passed: value.passed, total: value.total, at: String(value.at || "") } : null;
  } catch {
    return null;
  }
}

/** How it reads beside a link: "8 / 10". @param {Progress} p */
export const progressText = (p) => `${p.passed} / ${p.total}`;

/** @param {string} pathname */
export function readProgress(pathname) {
  try {
    return parseProgress(window.localStorage.getItem(progressKey(pathname)));
  } catch {
    return null; // storage disabled
  }
}

/**
 * Keep the result of a page's checks. A full or disabled storage only loses
 * the badge, never the learner's code, so it is not worth a message.
 * @param {string} pathname @param {number} passed @param {number} total
 */
export function recordProgress(pathname, passed, total) {
  try {
    window.localStorage.setItem(progressKey(pathname), JSON.stringify({ passed, total, at: new Date().toISOString() }));
    window.dispatchEvent(new Event("pyodide-cells:progress")); // this tab (other tabs get "storage")
  } catch {
    /* not kept: see above */
  }
}

/**
 * Forget a page's progress: its exercise's code was reset, so the count the
 * checks found is no longer about the code the page holds. The badges beside
 * the links to it then show nothing, as for a lab not checked yet, until the
 * next Check my code.
 * @param {string} pathname
 */
export function forgetProgress(pathname) {
  try {
    const key = progressKey(pathname);
    if (window.localStorage.getItem(key) === null) return;
    window.localStorage.removeItem(key);
    window.dispatchEvent(new Event("pyodide-cells:progress")); // this tab (other tabs get "storage")
  } catch {
    /* storage disabled: there is no record to forget */
  }
}

/**
 * Put each lab's progress beside the links to it: the sidebar's, and the
 * title of a card that links to it. Drawn again when a check ends here or in another tab.
 * @param {Document} doc
 */
export function showProgress(doc) {
  const draw = () => {
    for (const badge of doc.querySelectorAll(".pc-progress")) badge.remove();
    for (const link of /** @type {NodeListOf<HTMLAnchorElement>} */ (doc.querySelectorAll(".sidebar-tree a.reference.internal, a.sd-stretched-link"))) {
      let url;
      try {
        url = new URL(link.href, doc.baseURI);
      } catch {
        continue;
      }
      if (url.origin !== location.origin) continue;
      const progress = readProgress(url.pathname);
      if (!progress) continue;
      const done = progress.passed === progress.total;
      const badge = doc.createElement("span");
      badge.className = `pc-progress${done ? " pc-progress-done" : ""}`;
      badge.title = `${progressText(progress)} checks passed when you last pressed “Check my code” on this lab`;
      const hidden = doc.createElement("span");
      hidden.className = "pc-progress-label";
      hidden.textContent = "checks passed: ";
      badge.append(hidden, `${done ? "✓ " : ""}${progressText(progress)}`);
      const card = link.classList.contains("sd-stretched-link") ? link.closest(".sd-card") : null;
      const target = card ? card.querySelector(".sd-card-title") : link;
      target?.append(badge);
    }
  };
  draw();
  window.addEventListener("pyodide-cells:progress", draw);
  window.addEventListener("storage", (event) => {
    if (event.key === null || event.key.startsWith(PREFIX)) draw();
  });
}
