// @ts-check
// The reader's place on a page, kept across a reload and Back/Forward.
//
// The browser keeps a scroll offset in pixels and puts it back while the page
// loads. On these pages it often did not (headless Chromium, 390-1000 px wide:
// after a reload, 4 of 6 pages came back at the top), and where it did, the
// content above had changed height meanwhile (the micrograd graph, not drawn
// yet, is 184 px shorter), so the reader was on another line. Here the place
// is kept as an element of the page as built that starts at or above the top
// of the screen, and how far above; it is put back once the page is parsed and
// again once it has loaded, unless the reader has scrolled, pressed or typed.

const PREFIX = "lab-guide:place:";
/** What a place is kept by: elements of the page as built, so a reload finds the same ones. */
const SECTIONS = "article section[id]";
const CELLS = "article div.cell";

/** @typedef {{mark: string, top: number}} Place  `mark` is "#<section id>" or "cell:<index>"; `top` in CSS px from the screen's top */

/** @param {string} mark @returns {Element | null} */
function find(mark) {
  if (mark.startsWith("#")) return document.getElementById(mark.slice(1));
  const index = Number(mark.slice("cell:".length));
  return mark.startsWith("cell:") && Number.isInteger(index) ? document.querySelectorAll(CELLS)[index] || null : null;
}

/** The element that starts last at or above the screen's top, and where: null at the top of the page. @returns {Place | null} */
export function placeNow() {
  /** @type {Place | null} */
  let best = null;
  const consider = (/** @type {Element} */ element, /** @type {string} */ mark) => {
    const top = element.getBoundingClientRect().top;
    if (top <= 0 && (!best || top > best.top)) best = { mark, top };
  };
  for (const section of document.querySelectorAll(SECTIONS)) consider(section, `#${section.id}`);
  document.querySelectorAll(CELLS).forEach((cell, index) => consider(cell, `cell:${index}`));
  return best;
}

/** Scrolls so that the place's element is where it was; false if the page has no such element. @param {Place} place */
export function goTo(place) {
  const element = find(place.mark);
  if (!element) return false;
  const off = element.getBoundingClientRect().top - place.top;
  if (Math.abs(off) >= 1) window.scrollBy({ top: off, behavior: "instant" });
  return true;
}

/**
 * Keeps this page's place in sessionStorage (this tab's, per page) when the
 * page is left or hidden, and after a reload or Back/Forward puts it back.
 * Marks `pyodide-cells:place-kept` once it has done all it will.
 */
export function keepPlace() {
  const key = PREFIX + location.pathname;
  const save = () => {
    try {
      const place = placeNow();
      if (place) sessionStorage.setItem(key, JSON.stringify(place));
      else sessionStorage.removeItem(key);
    } catch {
      // no storage here (blocked, or full): the browser's own restoring is all there is
    }
  };
  addEventListener("pagehide", save);
  document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && save());

  const navigation = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType("navigation")[0]);
  /** @type {Place | null} */
  let saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(key) || "null");
  } catch {
    saved = null;
  }
  const done = () => performance.mark("pyodide-cells:place-kept");
  if (!saved || typeof saved.mark !== "string" || typeof saved.top !== "number" || !["reload", "back_forward"].includes(navigation?.type || "")) {
    done();
    return;
  }
  const place = saved;
  let readerMoved = false;
  const moved = () => (readerMoved = true);
  for (const type of ["wheel", "touchstart", "keydown", "pointerdown"]) addEventListener(type, moved, { capture: true, passive: true, once: true });
  const putBack = () => readerMoved || goTo(place);
  putBack();
  // Again once fonts, images and the browser's own restoring have had their say.
  const last = () => requestAnimationFrame(() => { putBack(); done(); });
  if (document.readyState === "complete") last();
  else addEventListener("load", last, { once: true });
}
