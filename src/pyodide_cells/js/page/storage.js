// @ts-check
// Where a learner's edits are kept: the browser's localStorage, one key per
// cell of a page. Writing can fail (storage full: several sites share one
// origin on a user's GitHub Pages; or disabled), and another tab of the same
// page can write the same key: both are reported, never swallowed, so the
// cell can tell the learner.

import { pagePath } from "../reader/pagepath.js";

/**
 * @typedef {{ok: true} | {ok: false, reason: "full" | "disabled", error: string}} WriteResult
 */

export class EditStore {
  /** @param {string} pathname  the page's path: each page keeps its own edits, under pagePath() */
  constructor(pathname) {
    this.prefix = `pyodide-cells:v1:${pagePath(pathname)}:`;
    this.legacy = `pyodide-cells:v1:${pathname}:`;
    this.adopt(this.legacy);
  }

  /**
   * Edits saved under the page's path as it was served (`/lab.html`) before keys were made
   * the same for `/lab` and `/lab.html`: moved to this page's keys, unless it has its own.
   * @param {string} legacy
   */
  adopt(legacy) {
    if (legacy === this.prefix) return;
    try {
      const storage = window.localStorage;
      for (const key of Object.keys(storage).filter((k) => k.startsWith(legacy))) {
        const moved = this.prefix + key.slice(legacy.length);
        if (storage.getItem(moved) === null) storage.setItem(moved, /** @type {string} */ (storage.getItem(key)));
        storage.removeItem(key);
      }
    } catch {
      /* storage disabled or full: the old keys stay, and get() reads them there */
    }
  }

  /** @param {number} index */
  key(index) {
    return `${this.prefix}cell-${index}`;
  }

  /** The saved edit of cell `index`, or null (none, or storage disabled). @param {number} index */
  get(index) {
    try {
      const value = window.localStorage.getItem(this.key(index));
      return value !== null || this.legacy === this.prefix ? value : window.localStorage.getItem(`${this.legacy}cell-${index}`);
    } catch {
      return null; // storage disabled (private mode, sandboxed frame)
    }
  }

  /**
   * Save cell `index`'s code (null: forget the edit).
   * @param {number} index
   * @param {string | null} value
   * @returns {WriteResult}
   */
  set(index, value) {
    try {
      if (value === null) window.localStorage.removeItem(this.key(index));
      else window.localStorage.setItem(this.key(index), value);
      if (this.legacy !== this.prefix) window.localStorage.removeItem(`${this.legacy}cell-${index}`);
      return { ok: true };
    } catch (err) {
      const name = err && /** @type {any} */ (err).name;
      const full = name === "QuotaExceededError" || name === "NS_ERROR_DOM_QUOTA_REACHED";
      return { ok: false, reason: full ? "full" : "disabled", error: String(err) };
    }
  }

  /**
   * Call `listener(index, value)` when another tab of this page changes a cell's saved code
   * (the `storage` event, which only other tabs receive).
   * @param {(index: number, value: string | null) => void} listener
   */
  onOtherTab(listener) {
    window.addEventListener("storage", (event) => {
      if (event.storageArea !== window.localStorage) return;
      if (event.key === null) {
        listener(-1, null); // the whole storage was cleared
        return;
      }
      if (!event.key.startsWith(`${this.prefix}cell-`)) return;
      const index = Number(event.key.slice(this.prefix.length + 5));
      if (Number.isInteger(index)) listener(index, event.newValue);
    });
  }
}
