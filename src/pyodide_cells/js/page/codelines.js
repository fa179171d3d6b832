// @ts-check
// A cell's code shown as its editor shows it: numbered lines, each a block
// that wraps under its own indentation. The build writes the page's code this
// way (code_lines.py) and cells.css draws it in the editor's geometry, so the
// page does not move when an editor takes the code's place; this module holds
// the rule the editor and the page share, and shows code that is not the
// page's (a saved edit, another tab's) the same way until the editor is made.

/**
 * The column a wrapped part of a line starts at: the line's leading
 * whitespace (a tab counting `tabSize` columns), 0 for none or all of it.
 * code_lines.hanging_columns is the same rule for the build.
 * @param {string} text  one line, without its newline
 * @param {number} tabSize
 * @returns {number}
 */
export function hangingColumns(text, tabSize) {
  const lead = /^[ \t]*/.exec(text)?.[0] ?? "";
  const columns = lead.length + (tabSize - 1) * (lead.split("\t").length - 1);
  return columns < text.length ? columns : 0;
}

// Python's indent (PEP 8), the editor's tab size and code_lines.TAB_SIZE.
const TAB_SIZE = 4;

/**
 * Shows `text` in a cell's `<pre>` as lines (without highlighting).
 * @param {HTMLElement} pre
 * @param {string} text
 */
export function showLines(pre, text) {
  const lines = text.split("\n");
  pre.classList.add("pc-lines");
  pre.style.setProperty("--pc-digits", String(String(lines.length).length));
  pre.replaceChildren(...lines.map((line) => {
    const span = document.createElement("span");
    span.className = "pc-line";
    const columns = hangingColumns(line, TAB_SIZE);
    if (columns) span.style.setProperty("--pc-indent", String(columns));
    span.textContent = `${line}\n`;
    return span;
  }));
}
