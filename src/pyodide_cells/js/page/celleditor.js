// @ts-check
// A cell's editor, made on first use: CodeMirror (editor.js) is a chunk of its
// own, loaded when the first editor is made, and a page of ten editors made at
// once holds up the main thread while Python loads. Until a cell's editor is
// there, the highlighted code the page was built with shows; keys typed
// meanwhile are held (keyhold.js) and typed into the editor once it is. Apart
// from the cell (cell.js): when and how its editor comes is one job, the
// editor's state (editor, editorReady, editorFailed, hold) is the cell's.

import { loadOnce } from "./util.js";
import { KeyHold, offsetInText } from "./keyhold.js";
import { hangingColumns } from "./codelines.js";
import { cellName } from "../protocol.js";

/** @typedef {import("./cell.js").Cell} Cell @typedef {import("@codemirror/view").EditorView} EditorView */
/** @typedef {import("./keyhold.js").HeldEntry} HeldEntry */

// CodeMirror comes in its own chunk, when the first editor is made (editor.js).
/** @type {() => Promise<typeof import("./editor.js")>} */
export const loadEditor = loadOnce(() => import("./editor.js"));

/**
 * The ways a learner starts a cell's editor before the page does: a click on
 * its code, or Tab onto its Run button while its code is on the screen (as
 * cells.js makes them). A cell with no code shown gets its editor at once.
 * @param {Cell} cell
 */
export function makeOnUse(cell) {
  const pre = cell.pre;
  if (pre) {
    pre.title = "Click to edit";
    pre.addEventListener("pointerdown", () => loadEditor().catch(() => {}), { once: true }); // a head start
    pre.addEventListener("click", (event) => cell.clickedCode(pre, event));
  }
  // Tab onto Run makes the editor (the next Tab goes into it), if its code is on the screen.
  cell.runButton.addEventListener("focus", () => cell.page.afterStartup(() => {
    const box = cell.input.getBoundingClientRect();
    if (box.bottom > 0 && box.top < innerHeight) cell.ensureEditor().catch(() => {});
  }));
  if (!pre) cell.ensureEditor().catch(() => {});
}

/**
 * The editor takes the code's place: the cursor goes where the click was
 * (taken now, in the code's text: by the time the editor is there, the page
 * may have moved under the pointer), then what was typed meanwhile.
 * @param {Cell} cell @param {HTMLElement} pre @param {MouseEvent} event
 */
export async function clickedCode(cell, pre, event) {
  const offset = offsetInText(pre, event.clientX, event.clientY);
  if (cell.hold) {
    cell.hold.resume(offset); // a second click (a double-click) while it loads
    return;
  }
  const hold = (cell.hold = new KeyHold(cell.root, offset));
  const view = await cell.ensureEditor().catch(() => null);
  cell.hold = null;
  hold.stop();
  // Kept until an editor loads: the next click tries again (ensureEditor said why on the cell).
  cell.unapplied = [...cell.unapplied, ...hold.entries];
  if (!view) return;
  if (hold.offset != null) view.dispatch({ selection: { anchor: Math.min(hold.offset, view.state.doc.length) } });
  if (!hold.left) view.focus();
  const entries = cell.unapplied;
  cell.unapplied = [];
  await cell.replay(view, entries, !hold.left);
}

/**
 * Types what was held while the editor loaded into it; a Shift+Enter among
 * it runs this cell and goes on typing in the next one, which takes the
 * focus only if the learner has not gone elsewhere (`focus`).
 * @param {Cell} cell @param {EditorView} view @param {HeldEntry[]} entries @param {boolean} focus
 */
export async function replay(cell, view, entries, focus) {
  if (!entries.length) return;
  const { typeKeys } = await loadEditor();
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (!entry.run) {
      typeKeys(view, [entry]);
      continue;
    }
    if (entry.run === "run") cell.page.run(cell);
    else return cell.page.runNext(cell, { entries: entries.slice(i + 1), focus });
  }
}

/**
 * Resolves to the cell's CodeMirror view, made on first use. When CodeMirror
 * cannot load (the site went offline before it was ever loaded), the cell
 * says so, keeps showing its code, and the next use tries again.
 * @param {Cell} cell
 * @returns {Promise<EditorView>}
 */
export function ensureEditor(cell) {
  cell.editorReady ||= loadEditor()
    .then(({ createEditor }) => {
      if (cell.editorFailed) cell.statusText.textContent = "";
      cell.editorFailed = false;
      cell.editor = createEditor({
        doc: cell.code,
        parent: cell.mount,
        label: `Code of ${cellName(cell.index)}`,
        onRun: () => cell.page.run(cell),
        onRunNext: () => cell.page.runNext(cell),
        onChange: () => cell.persist(),
        topMargin: cell.page.topMargin,
        hangingColumns,
        complete: (code, cursor) => cell.complete(code, cursor),
      });
      if (cell.pre) cell.pre.closest(".highlight-ipython3, .highlight-python, div.highlight")?.setAttribute("hidden", "");
      return cell.editor;
    })
    .catch((err) => {
      // After the making too: a promise left rejected here would say "loading" and never try again.
      cell.editorReady = null;
      cell.editorFailed = true;
      cell.statusText.textContent = "The editor could not load; check the connection, then click the code again (what you typed is kept).";
      throw err;
    });
  return cell.editorReady;
}

/**
 * Where the cell's editor is: not asked for yet, loading, failed with no load
 * under way (the next use tries again), or shown.
 * @param {Cell} cell
 * @returns {"none" | "loading" | "failed" | "shown"}
 */
export function editorState(cell) {
  return cell.editor ? "shown" : cell.editorReady ? "loading" : cell.editorFailed ? "failed" : "none";
}
