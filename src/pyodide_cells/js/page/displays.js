// @ts-check
// Which output boxes show each display id (IPython's display(..., display_id=...)), wherever
// they are on the page: an update replaces them all (output.js). Kept here rather than found
// by querying the page for the attribute, which is only an output (for tests).

/** @type {Map<string, Set<HTMLElement>>} */
const displays = new Map();
let recorded = 0;

/**
 * The boxes on the page that show `displayId` now (those whose cell's output was cleared since are let go).
 * @param {string} displayId @returns {HTMLElement[]}
 */
export function showing(displayId) {
  const boxes = displays.get(displayId);
  if (!boxes) return [];
  for (const box of boxes) if (!box.isConnected) boxes.delete(box);
  return [...boxes];
}

/**
 * Records that `box`, on the page, shows `displayId` (in place of `replaced`, if it replaced one).
 * @param {string} displayId @param {HTMLElement} box @param {HTMLElement} [replaced]
 */
export function shown(displayId, box, replaced) {
  box.dataset.displayId = displayId;
  let boxes = displays.get(displayId);
  if (!boxes) displays.set(displayId, (boxes = new Set()));
  if (replaced) boxes.delete(replaced);
  boxes.add(box);
  // Now and then, every box no longer on the page is let go: a display made afresh on every
  // run, and never updated, would keep each run's box otherwise.
  if (++recorded % 64) return;
  for (const [id, set] of displays) {
    for (const old of set) if (!old.isConnected) set.delete(old);
    if (!set.size) displays.delete(id);
  }
}
