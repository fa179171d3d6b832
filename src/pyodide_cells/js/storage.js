// @ts-check
// Where a learner's edits are kept: the browser's localStorage, one key per
// cell of a page. Writing can fail (storage full: several sites share one
// origin on a user's GitHub Pages; or disabled), and another tab of the same
// page can write the same key: both are reported, never swallowed, so the
// cell can tell the learner.

/**
 * @typedef {{ok: true} | {ok: false, reason: "full" | "disabled", error: string}} WriteResult
 */

export class EditStore {
  /** @param {string} page  what names the page (its path): each page keeps its own edits */
  constructor(page) {
    this.prefix = `pyodide-cells:v1:${page}:`;
  }

  /** @param {number} index */
  key(index) {
    return `${this.prefix}cell-${index}`;
  }

  /** The saved edit of cell `index`, or null (none, or storage disabled). @param {number} index */
  get(index) {
    try {
      return window.localStorage.getItem(this.key(index));
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
