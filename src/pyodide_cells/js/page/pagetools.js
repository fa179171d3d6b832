// @ts-check
// The page's own tools, under the status bar: the learner's work as a file
// (download.js) and "Reset this page", which restores every edited cell at
// once, after asking.

import { el } from "./util.js";
import { downloadFile } from "./download.js";

/** @typedef {import("./cell.js").Cell} Cell @typedef {import("./download.js").Download} Download */

export class PageTools {
  /**
   * @param {Cell[]} cells
   * @param {Download | null} download  the page's config.download (downloads.py); null: no exercise
   */
  constructor(cells, download) {
    this.cells = cells;
    this.download = download;
    /** @type {HTMLButtonElement[]} */
    const buttons = [];
    if (download?.parts?.length) {
      for (const format of /** @type {const} */ (["py", "ipynb"])) {
        buttons.push(/** @type {HTMLButtonElement} */ (el("button", {
          type: "button",
          class: "pc-button pc-download",
          "data-format": format,
          title: format === "py"
            ? "Your exercise code and the page's checks, as a Python script (run the checks with python -m doctest)"
            : "Your exercise code and the page's checks, as a Jupyter notebook",
          text: `Download .${format}`,
          onclick: () => this.save(format),
        })));
      }
    }
    this.resetButton = /** @type {HTMLButtonElement} */ (el("button", {
      type: "button",
      class: "pc-button pc-reset-page",
      text: "Reset this page",
      onclick: () => this.resetAll(),
    }));
    this.said = el("span", { class: "pc-page-tools-said", role: "status" });
    this.root = el("div", { class: "pc-page-tools", role: "group", "aria-label": "Your work on this page" },
      el("span", { class: "pc-page-tools-label", text: "Your work:" }), ...buttons, this.resetButton, this.said);
    this.update();
  }

  /** The exercise cells' code as it is now (edited or not), in page order. */
  exercises() {
    return this.cells.filter((cell) => cell.root.classList.contains("tag_exercise")).map((cell) => cell.code);
  }

  /** @param {"py" | "ipynb"} format */
  save(format) {
    if (!this.download) return;
    const page = location.href.split("#")[0];
    const file = downloadFile(this.download, format, this.exercises(), page);
    const url = URL.createObjectURL(new Blob([file.text], { type: file.type }));
    const link = el("a", { href: url, download: file.filename, hidden: "" });
    document.body.append(link);
    link.click();
    link.remove();
    // The browser has the file once the click's download started; the URL is not needed after.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  edited() {
    return this.cells.filter((cell) => cell.code !== cell.original);
  }

  /** Enable "Reset this page" only while a cell is edited (called when an edit changes). */
  update() {
    const edited = this.edited().length;
    this.resetButton.disabled = edited === 0;
    this.resetButton.title = edited
      ? `Restore the original code of the ${edited === 1 ? "edited cell" : `${edited} edited cells`} on this page`
      : "No cell on this page is edited";
  }

  async resetAll() {
    const edited = this.edited();
    if (!edited.length) return;
    const which = edited.map((cell) => cell.describe());
    const exercise = edited.some((cell) => cell.root.classList.contains("tag_exercise"));
    const question = [
      `Restore the original code of ${edited.length === 1 ? which[0] : `${edited.length} cells: ${which.join("; ")}`}?`,
      `Your edits to ${edited.length === 1 ? "it" : "them"} will be lost.`,
      exercise && this.download?.parts?.length ? "(Download .py first to keep a copy of the exercise.)" : "",
    ].filter(Boolean).join(" ");
    if (!window.confirm(question)) return;
    for (const cell of edited) await cell.reset({ ask: false });
    this.update();
    // The button is disabled now: the focus goes to the first restored cell, and the page says what it did.
    this.said.textContent = `Restored ${edited.length === 1 ? which[0] : `${edited.length} cells`}.`;
    edited[0].runButton.focus();
  }
}
