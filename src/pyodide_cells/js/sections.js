// @ts-check
// Inlined in the <head> of every page that has cells (pages.py), before the
// page is first laid out: on a plain visit, the page's sections below the first
// screen wait to be laid out until they come near it (cells.css), or until the
// page's first runs are done (cells.js). A lab page holds 20,000-28,000
// elements, and laying them all out took the main thread while Python
// started, holding up the first output.
//
// Not on a reload or Back/Forward: the browser puts the reader back where they
// were by pixels from the top, and with guessed sizes for the sections not yet
// laid out that is somewhere else (2,000 px off on the online softmax lab).
// Nor with a place in the page named (#...): cells.css lays the page out whole
// for that, as for a link followed later. Kept in plain ES5: inlined as it is.
(function () {
  var visit = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : undefined;
  var type = visit ? /** @type {PerformanceNavigationTiming} */ (visit).type : "navigate";
  if (type === "navigate" && !location.hash) document.documentElement.setAttribute("data-pc-lazy-sections", "");
})();
