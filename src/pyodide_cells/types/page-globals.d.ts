// Names the page script reads from the page's global scope (see tsconfig.page.json).
interface Window {
  /** pages.py: the page's name, the names its checks use, the worker's versioned URL, the checks (labs.checks). */
  PYODIDE_CELLS_CONFIG?: { page?: string; checksUse?: string[]; checkCells?: number[]; worker?: string; blocks?: string[]; checks?: any[] };
  /** boot.js: the worker it started, and start() for the ones that replace it. */
  PYODIDE_CELLS_BOOT?: any;
  /** @viz-js/viz's viz-global.js (Graphviz in WASM), once graph.js has loaded it. */
  Viz?: { instance(): Promise<any> };
  /** cells.js: handles for benchmarks and tests. */
  pyodideCells?: any;
}
/** Sphinx's searchtools.js (the search page only): a top-level `const` of a classic script, not a property of window. */
declare const Search: { htmlToText: (html: string, anchor?: string) => string } | undefined;
