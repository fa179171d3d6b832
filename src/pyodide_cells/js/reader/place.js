// @ts-check
// The reader's place on a page, kept across a reload and Back/Forward.
//
// The browser keeps a scroll offset in pixels and puts it back while the page
// loads. On these pages it often did not (headless Chromium, 390-1000 px wide:
// after a reload, 4 of 6 pages came back at the top), and where it did, the
// content above had changed height meanwhile (the micrograd graph, not drawn
// yet, is 184 px shorter), so the reader was on another line; it is turned off
// (history.scrollRestoration) wherever a place can be kept. Here the place
// is kept per history entry as the section or cell nearest the top of the
// screen and how far from it; it is put back once the page is parsed, again
// once it has loaded, and whenever the page's height changes after that (a
// graph drawn, an editor made), until the reader scrolls, presses or types.

const PREFIX = "lab-guide:place:";
/** What the reader does to move: from then on, the page stops putting a place back. */
const READER_MOVES = ["wheel", "touchstart", "keydown", "pointerdown"];
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

/**
 * The section or cell whose top is nearest the screen's top, and where: null at the top of the page.
 * Nearest, not the last above: a cell that starts far above may be shorter after a reload (its
 * output as built, not as the last run left it), and would move everything below it.
 * @returns {Place | null}
 */
export function placeNow() {
  if (window.scrollY <= 0) return null;
  /** @type {Place | null} */
  let best = null;
  const consider = (/** @type {Element} */ element, /** @type {string} */ mark) => {
    const top = element.getBoundingClientRect().top;
    if (!best || Math.abs(top) < Math.abs(best.top)) best = { mark, top };
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

/** @returns {Record<string, unknown>} this history entry's state, as an object */
const stateNow = () => (history.state && typeof history.state === "object" ? history.state : {});

/** @param {string} name  kept in this history entry's state, beside what else it holds */
function nameEntry(name) {
  try {
    history.replaceState({ ...stateNow(), placeEntry: name }, "");
  } catch {
    // a state that cannot be cloned: the place is kept for the page, not the entry
  }
}

/**
 * This history entry's name, kept in its history.state: a page visited twice
 * is two entries, and Back to the first must not take the second's place.
 * Fragment links make entries of their own (hashchange).
 * @returns {string}
 */
function entryName() {
  const state = stateNow();
  if (typeof state.placeEntry === "string") return state.placeEntry;
  const name = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  nameEntry(name);
  return name;
}

/** @param {string} key @returns {Place | null} the place kept under `key`, if any */
function keptAt(key) {
  try {
    const saved = JSON.parse(sessionStorage.getItem(key) || "null");
    return saved && typeof saved.mark === "string" && typeof saved.top === "number" ? saved : null;
  } catch {
    return null;
  }
}

/**
 * Keeps this page's place in sessionStorage (this tab's, per history entry)
 * whenever the reader stops scrolling and when the page is left or hidden,
 * and after a reload or Back/Forward puts it back. Marks
 * `pyodide-cells:place-kept` once the page has loaded and it is put back,
 * and again after Back/Forward between entries of the page (its sections).
 */
export function keepPlace() {
  // The place is put back here, and only here: the browser's own restoring came after the
  // page had loaded and put the place back, animated by the theme's smooth scrolling, to the
  // old offset in pixels, which was on another line. Where no place can be kept (no storage),
  // the browser's restoring is all there is.
  try {
    sessionStorage.setItem(`${PREFIX}probe`, "");
    sessionStorage.removeItem(`${PREFIX}probe`);
    history.scrollRestoration = "manual";
  } catch {
    // storage blocked or full: left to the browser
  }
  let entry = entryName();
  let hash = location.hash;
  // Which entry is current: one named before (Back/Forward between this page's sections), a new
  // one (a fragment link: its own name, given now), or the same one, its state replaced by another
  // script: Sphinx's highlighter, on a page opened from a search result, takes ?highlight= out of
  // the address with history.replaceState({}). Its name is put back, so that a reload or Back
  // finds its place under the same name.
  const follow = () => {
    const named = stateNow().placeEntry;
    if (typeof named === "string") entry = named;
    else if (location.hash !== hash) entry = entryName();
    else nameEntry(entry);
    hash = location.hash;
  };
  const keyNow = () => `${PREFIX}${location.pathname}:${entry}`;
  const key = keyNow();
  document.addEventListener("DOMContentLoaded", follow);
  addEventListener("load", follow);
  addEventListener("hashchange", follow);
  let restoring = true; // until the kept place is put back, the scroll is the browser's, not the reader's
  /** Keeps the place now under the current entry's name, as it was before `follow`. */
  const keep = () => {
    try {
      const place = placeNow();
      if (place) sessionStorage.setItem(keyNow(), JSON.stringify(place));
      else sessionStorage.removeItem(keyNow());
    } catch {
      // no storage here (blocked, or full): the browser's own restoring is all there is
    }
  };
  const save = () => {
    follow();
    keep();
  };
  addEventListener("pagehide", save);
  document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && save());
  // Leaving an entry for another of the same page (a section link, Back, Forward) hides nothing:
  // the place is kept each time the reader stops scrolling, before the address changes.
  let settle = 0;
  const scrolled = () => restoring || save();
  if ("onscrollend" in window) addEventListener("scrollend", scrolled);
  else addEventListener("scroll", () => (clearTimeout(settle), (settle = setTimeout(scrolled, 150))), { passive: true });
  // Back/Forward between entries of this page: the browser's own restoring came back elsewhere,
  // and for a section's entry scrolled to the section's heading after the page had put the place
  // back. So the place is held against other scrolls until the first one after it has ended, or
  // the reader moves or moves the focus (a screen reader's cursor scrolls the page too).
  const LET_GO = [...READER_MOVES, "focusin"];
  let release = () => {};
  addEventListener("popstate", () => {
    release();
    // The entry left, where the reader left it (Back at once, before scrolling had ended), if
    // the browser has not yet scrolled for the entry come back to: it does that after this event.
    if (!restoring) keep();
    follow();
    const place = keptAt(keyNow());
    if (!place) return;
    const hold = () => goTo(place);
    let put = false;
    const ended = () => put && release();
    release = () => {
      removeEventListener("scroll", hold);
      removeEventListener("scrollend", ended);
      for (const type of LET_GO) removeEventListener(type, release, true);
    };
    addEventListener("scroll", hold, { passive: true });
    addEventListener("scrollend", ended);
    for (const type of LET_GO) addEventListener(type, release, { capture: true, passive: true });
    requestAnimationFrame(() => requestAnimationFrame(() => {
      hold();
      put = true;
      performance.mark("pyodide-cells:place-kept");
    }));
  });

  const navigation = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType("navigation")[0]);
  const saved = keptAt(key);
  const done = () => {
    restoring = false;
    performance.mark("pyodide-cells:place-kept");
  };
  if (!saved || !["reload", "back_forward"].includes(navigation?.type || "")) {
    done();
    return;
  }
  const place = saved;
  let readerMoved = false;
  const moved = () => (readerMoved = true);
  for (const type of READER_MOVES) addEventListener(type, moved, { capture: true, passive: true, once: true });
  const putBack = () => readerMoved || goTo(place);
  putBack();
  // Again once fonts, images and the browser's own restoring have had their say, and
  // whenever the page's height changes until the reader moves: a graph drawn above the
  // place grew by 184 px, and the browser's scroll anchoring did not always make up for it.
  const last = () => requestAnimationFrame(() => {
    putBack();
    done();
    const article = document.querySelector("article");
    if (!article || !("ResizeObserver" in window)) return;
    const watch = new ResizeObserver(() => (readerMoved ? watch.disconnect() : putBack()));
    watch.observe(article);
  });
  if (document.readyState === "complete") last();
  else addEventListener("load", last, { once: true });
}
