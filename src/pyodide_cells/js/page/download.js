// @ts-check
// The learner's exercise cells as files: a percent-format script (`# %%`
// cells, read by Jupytext, VS Code and Spyder) and an nbformat 4 notebook.
// The build made everything that does not depend on the learner's code
// (downloads.py: title, the support cell, the checks); this fills in the
// exercise cells as they are now. No DOM here: node --test runs it.

/**
 * @typedef {{kind: "markdown" | "code", text: string, only?: "py" | "ipynb"}
 *   | {kind: "exercise", index: number, only?: undefined}} Part
 * @typedef {{name: string, parts: Part[]}} Download  the page's config.download (downloads.py)
 * @typedef {{kind: "markdown" | "code", text: string}} FileCell
 */

/**
 * The cells of the file, for `format`: the build's parts, with each exercise's current code.
 * @param {Download} download
 * @param {"py" | "ipynb"} format
 * @param {string[]} exercises  the page's exercise cells' code, in page order
 * @param {string} pageUrl
 * @returns {FileCell[]}
 */
export function fileCells(download, format, exercises, pageUrl) {
  /** @type {FileCell[]} */
  const cells = [];
  for (const part of download.parts) {
    if (part.only && part.only !== format) continue;
    if (part.kind === "exercise") {
      const code = exercises[part.index];
      if (code === undefined) throw new RangeError(`the download names exercise ${part.index + 1}, but the page has ${exercises.length}`);
      cells.push({ kind: "code", text: code });
    } else cells.push({ kind: part.kind, text: part.text.split("{page_url}").join(pageUrl) });
  }
  return cells;
}

/** @param {string} text */
const trimEnd = (text) => text.replace(/\s+$/, "");

/**
 * A percent-format script: `# %%` before each code cell, `# %% [markdown]`
 * before each Markdown cell, whose lines become comments.
 * @param {FileCell[]} cells
 * @returns {string}
 */
export function percentScript(cells) {
  const chunks = cells.map((cell) => {
    if (cell.kind === "code") return `# %%\n${trimEnd(cell.text)}\n`;
    const lines = trimEnd(cell.text).split("\n").map((line) => (line ? `# ${line}` : "#"));
    return `# %% [markdown]\n${lines.join("\n")}\n`;
  });
  return chunks.join("\n\n");
}

/**
 * An nbformat 4.5 notebook (cell ids required), as the JSON Jupyter writes: one-space indent.
 * @param {FileCell[]} cells
 * @returns {string}
 */
export function notebook(cells) {
  /** @param {string} text */
  const source = (text) => {
    const lines = trimEnd(text).split("\n");
    return lines.map((line, i) => (i < lines.length - 1 ? `${line}\n` : line));
  };
  const nb = {
    cells: cells.map((cell, i) => cell.kind === "code"
      ? { cell_type: "code", execution_count: null, id: `cell-${i + 1}`, metadata: {}, outputs: [], source: source(cell.text) }
      : { cell_type: "markdown", id: `cell-${i + 1}`, metadata: {}, source: source(cell.text) }),
    metadata: {
      kernelspec: { display_name: "Python 3", language: "python", name: "python3" },
      language_info: { name: "python" },
    },
    nbformat: 4,
    nbformat_minor: 5,
  };
  return `${JSON.stringify(nb, null, 1)}\n`;
}

/**
 * The file for `format`, with its name and type.
 * @param {Download} download
 * @param {"py" | "ipynb"} format
 * @param {string[]} exercises
 * @param {string} pageUrl
 * @returns {{filename: string, type: string, text: string}}
 */
export function downloadFile(download, format, exercises, pageUrl) {
  const cells = fileCells(download, format, exercises, pageUrl);
  return format === "py"
    ? { filename: `${download.name}.py`, type: "text/x-python", text: percentScript(cells) }
    : { filename: `${download.name}.ipynb`, type: "application/x-ipynb+json", text: notebook(cells) };
}
