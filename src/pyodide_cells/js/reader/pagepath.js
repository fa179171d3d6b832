// @ts-check
// One key per page for what this browser keeps: the learner's progress
// (progress.js) and edits (page/storage.js). In reader/, not page/, because
// reader/ may not import the cell runtime (README.md).

/**
 * What names a page in this browser's storage: its path, the same whether a host serves it as
 * `/lab.html`, `/lab` or `/lab/` (static hosts and the service worker answer all three).
 * @param {string} pathname
 */
export function pagePath(pathname) {
  return pathname.replace(/\/index\.html$|\/$/, "/index").replace(/\.html$/, "");
}
