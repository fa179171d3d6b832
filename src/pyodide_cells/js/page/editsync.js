// @ts-check
// A cell's edit kept in step with storage (storage.js) and with the page's
// other tabs: saved on every change, another tab's edit taken while this one
// has not changed since, and a conflict put to the learner when both have.
// What the learner typed is never dropped without a word: an edit that cannot
// be saved, or that another tab changed, says so in the cell's notes. Apart
// from the cell (cell.js) so that the rules of who saves over whom are read in
// one place; the state they keep (saved, synced, conflict) is the cell's.

import { el } from "./util.js";

/** @typedef {import("./cell.js").Cell} Cell */

/** Cells whose edit is not saved in the browser: leaving the page asks first. @type {Set<Cell>} */
export const unsaved = new Set();

const NOT_SAVED = {
  full: "Not saved: this browser's storage for this site is full, so your edit lives only in this page until you leave it. Copy your code somewhere safe (Download .py, above, keeps the exercise), or free space (other pages of this site, or other sites on this address, use it).",
  disabled: "Not saved: this browser does not let the page keep edits (private browsing or blocked storage), so your edit lives only in this page until you leave it.",
};

/** The cell's code changed (typed, Reset, another tab's taken): save it, unless that would overwrite another tab's. @param {Cell} cell */
export function persist(cell) {
  cell.page.changed();
  const value = cell.edit;
  cell.saved = value;
  cell.markEdited();
  if (cell.conflict) return unsavedBecause(cell, null); // not written until the learner chooses
  if (value === cell.synced) {
    // Already what storage holds (saved here, or just taken from another tab): writing it
    // again would race the other tab's next save.
    unsavedBecause(cell, null);
    unsaved.delete(cell);
    return;
  }
  // Another tab wrote since this one last looked (its storage event may not have come yet).
  const stored = cell.page.store.get(cell.index);
  if (stored !== cell.synced && stored !== value) return otherTab(cell, stored);
  const result = cell.page.store.set(cell.index, value);
  if (result.ok === false) {
    unsaved.add(cell);
    unsavedBecause(cell, NOT_SAVED[result.reason]);
  } else {
    cell.synced = value;
    unsavedBecause(cell, null);
    unsaved.delete(cell);
  }
}

/**
 * Another tab of this page saved `value` for this cell. If this tab's code
 * is still what it last saved, take the other tab's; otherwise ask, and
 * save neither over the other until the learner chooses.
 * @param {Cell} cell @param {string | null} value
 */
export function otherTab(cell, value) {
  const mine = cell.edit;
  if (value === mine) {
    cell.synced = value;
    clearConflict(cell);
    return;
  }
  if (mine === cell.synced && !cell.conflict) {
    cell.synced = value;
    cell.setText(value === null ? cell.original : value);
    cell.statusText.textContent = value === null ? "Reset in another tab" : "Updated with the edit made in another tab";
    return;
  }
  cell.conflict = { value };
  unsaved.add(cell);
  const use = el("button", { type: "button", class: "pc-button", text: "Use the other tab's code", onclick: () => resolve(cell, "theirs") });
  const keep = el("button", { type: "button", class: "pc-button", text: "Keep this code", onclick: () => resolve(cell, "mine") });
  cell.notes.replaceChildren(
    el("p", { class: "pc-note pc-conflict", role: "alert" },
      "This cell was also edited in another tab of this page. Until you choose, neither tab's code is saved over the other. ",
      use, " ", keep),
  );
}

/** The learner chose whose code the cell keeps. @param {Cell} cell @param {"mine" | "theirs"} choice */
export async function resolve(cell, choice) {
  const conflict = cell.conflict;
  if (!conflict) return;
  clearConflict(cell);
  cell.synced = cell.page.store.get(cell.index);
  if (choice === "theirs") await cell.setText(conflict.value === null ? cell.original : conflict.value);
  persist(cell);
  cell.runButton.focus();
}

/** The whole storage was cleared (another site on this address did it): this page holds the only copy. @param {Cell} cell */
export function storageCleared(cell) {
  cell.synced = null;
  persist(cell);
}

/** @param {Cell} cell */
export function clearConflict(cell) {
  cell.conflict = null;
  cell.notes.replaceChildren();
  unsaved.delete(cell);
}

/** Say why the edit is not saved (null: it is, or a conflict note already says so). @param {Cell} cell @param {string | null} why */
export function unsavedBecause(cell, why) {
  if (cell.conflict) return;
  if (!why) {
    cell.notes.replaceChildren();
    return;
  }
  if (cell.notes.textContent !== why) cell.notes.replaceChildren(el("p", { class: "pc-note pc-not-saved", role: "alert", text: why }));
}
