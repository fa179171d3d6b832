// The learner's downloads (download.js) and the progress record (progress.js): pure functions, no DOM.
import { test } from "node:test";
import assert from "node:assert/strict";
import { downloadFile, fileCells, notebook, percentScript } from "../../src/pyodide_cells/js/page/download.js";
import { parseProgress, progressKey, progressText } from "../../src/pyodide_cells/js/reader/progress.js";

/** @type {import("../../src/pyodide_cells/js/page/download.js").Download} */
const DOWNLOAD = {
  name: "lab",
  parts: [
    { kind: "markdown", text: "# Lab\n\nFrom {page_url}.\n" },
    { kind: "code", text: "import math\n" },
    { kind: "exercise", index: 1 },
    { kind: "exercise", index: 0 },
    { kind: "code", text: "__test__ = {}\nprint('py')\n", only: "py" },
    { kind: "code", text: "print('nb')\n", only: "ipynb" },
  ],
};

test("the parts become cells: exercises get the learner's code, {page_url} the address, `only` picks the format", () => {
  const cells = fileCells(DOWNLOAD, "py", ["first = 1", "second = 2\n\n"], "http://x/lab.html");
  assert.deepEqual(cells.map((c) => [c.kind, c.text]), [
    ["markdown", "# Lab\n\nFrom http://x/lab.html.\n"],
    ["code", "import math\n"],
    ["code", "second = 2\n\n"],
    ["code", "first = 1"],
    ["code", "__test__ = {}\nprint('py')\n"],
  ]);
  assert.deepEqual(fileCells(DOWNLOAD, "ipynb", ["a", "b"], "u").map((c) => c.text).slice(-1), ["print('nb')\n"]);
});

test("a part naming an exercise the page does not have is an error, not an empty cell", () => {
  assert.throws(() => fileCells(DOWNLOAD, "py", ["only one"], "u"), { name: "RangeError", message: /exercise 2, but the page has 1/ });
});

test("the script is in the percent format: `# %%` cells, Markdown as comments, one newline at the end of each cell", () => {
  const text = percentScript([
    { kind: "markdown", text: "# Title\n\nText\n" },
    { kind: "code", text: "x = 1\n\n\n" },
    { kind: "code", text: "def f():\n    return 2" },
  ]);
  assert.equal(text, "# %% [markdown]\n# # Title\n#\n# Text\n\n\n# %%\nx = 1\n\n\n# %%\ndef f():\n    return 2\n");
});

test("the notebook is nbformat 4.5: ids, empty outputs, sources as lines", () => {
  const nb = JSON.parse(notebook([{ kind: "markdown", text: "# T\n" }, { kind: "code", text: "a = 1\nb = 2\n" }]));
  assert.equal(nb.nbformat, 4);
  assert.equal(nb.nbformat_minor, 5);
  assert.equal(nb.metadata.kernelspec.name, "python3");
  assert.deepEqual(nb.cells[0], { cell_type: "markdown", id: "cell-1", metadata: {}, source: ["# T"] });
  assert.deepEqual(nb.cells[1], { cell_type: "code", execution_count: null, id: "cell-2", metadata: {}, outputs: [], source: ["a = 1\n", "b = 2"] });
});

test("the files are named after the page", () => {
  assert.equal(downloadFile(DOWNLOAD, "py", ["a", "b"], "u").filename, "lab.py");
  const nb = downloadFile(DOWNLOAD, "ipynb", ["a", "b"], "u");
  assert.equal(nb.filename, "lab.ipynb");
  assert.equal(nb.type, "application/x-ipynb+json");
});

test("a page's progress key is the same for /lab.html, /lab and /lab/index.html hosts", () => {
  assert.equal(progressKey("/guide/micrograd.html"), progressKey("/guide/micrograd"));
  assert.equal(progressKey("/guide/micrograd/"), progressKey("/guide/micrograd/index.html"));
  assert.equal(progressKey("/"), progressKey("/index.html"));
  assert.notEqual(progressKey("/a/micrograd.html"), progressKey("/b/micrograd.html"));
});

test("only a well-formed progress record is read; anything else is no progress", () => {
  assert.deepEqual(parseProgress('{"passed": 8, "total": 10, "at": "t"}'), { passed: 8, total: 10, at: "t" });
  for (const bad of [null, "", "{", "[]", '{"passed": 11, "total": 10}', '{"passed": -1, "total": 3}', '{"passed": 1.5, "total": 3}', '{"passed": 0, "total": 0}']) {
    assert.equal(parseProgress(bad), null, String(bad));
  }
  assert.equal(progressText({ passed: 3, total: 10, at: "" }), "3 / 10");
});

test("a reset exercise forgets the page's progress, at every address of the page, and says so to the badges", async () => {
  const { forgetProgress, readProgress, recordProgress } = await import("../../src/pyodide_cells/js/reader/progress.js");
  const items = new Map();
  const events = [];
  const fake = {
    localStorage: {
      getItem: (k) => (items.has(k) ? items.get(k) : null),
      setItem: (k, v) => items.set(k, String(v)),
      removeItem: (k) => items.delete(k),
    },
    dispatchEvent: (e) => events.push(e.type),
  };
  const saved = globalThis.window;
  globalThis.window = fake;
  try {
    recordProgress("/guide/micrograd.html", 24, 24);
    recordProgress("/guide/paged_attention.html", 3, 28);
    forgetProgress("/guide/micrograd"); // the same page, as a host may serve it
    assert.equal(readProgress("/guide/micrograd.html"), null);
    assert.equal(readProgress("/guide/paged_attention.html")?.passed, 3); // another lab's is kept
    assert.deepEqual(events, ["pyodide-cells:progress", "pyodide-cells:progress", "pyodide-cells:progress"]);
    forgetProgress("/guide/micrograd.html"); // nothing to forget: no redraw
    assert.equal(events.length, 3);
  } finally {
    globalThis.window = saved;
  }
});
