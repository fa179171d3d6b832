// @ts-check
// A cell's output area: what a run prints, displays and raises, drawn as it
// arrives. Streams read as a terminal shows them (terminal.js) in a box of
// limited height that scrolls by itself and follows the end while the learner
// has not scrolled up; past the limits (protocol.LIMITS) output is cut, and a
// note below the box says how much.

import { showing, shown } from "./displays.js";
import { el, loadOnce } from "./util.js";
import { LIMITS } from "../protocol.js";
import { TerminalLine } from "./terminal.js";
import { graphsShown, loadViz, upgradeGraphs } from "./graph.js";

/** How close to its end (px) a scroll box counts as "at the end": it then follows new output. */
const FOLLOW_SLACK = 24;
/**
 * Fewer lines than this cannot fill a box (24rem high, cells.css; a line is
 * about 1.2rem, under 1.5rem even at a large minimum font size), so a box
 * holding fewer is not measured: a measurement made the browser lay out the
 * whole page there and then, twice per write.
 */
const FEWEST_TO_FILL = 12;

/** @param {string} text */
const lineCount = (text) => text.split("\n").length;

export class OutputArea {
  /** @param {HTMLElement} element  the cell's `.cell_output` */
  constructor(element) {
    this.element = element;
    /**
     * What the graphs of the last output that had any showed, for the next graphs shown here:
     * kept over runs without one (a run that failed), so the learner's view and zoom come back.
     * @type {import("./graph.js").GraphShown[]}
     */
    this.graphsBefore = [];
    // The counts of a run, declared for the checker: reset() sets them, here and as each run begins.
    /** @type {number} */ this.streamChars;
    /** @type {number} */ this.richChars;
    this.reset();
  }

  reset() {
    /** @type {{pre: HTMLElement, name: string, line: TerminalLine, open: Text, lines: number} | null} */
    this.stream = null;
    this.streamChars = 0; // shown or cut, of this run's streams
    this.richChars = 0;
    /** @type {HTMLElement | null} */
    this.cutNote = null;
    this.pendingClear = false; // clear_output(wait=True): clear when the next output arrives
    this.replacing = false; // the previous run's output, shown until this run's first output
  }

  /** The old output goes. */
  clear() {
    this.element.replaceChildren();
    this.element.classList.remove("pc-stale", "pc-replacing");
    this.reset();
  }

  /**
   * A run starts. Its first output replaces the old one, which stays until then
   * (dimmed if the run takes a while): a re-run that shows what it showed before
   * leaves the page as it was, where clearing at once made the page below the
   * cell move up and back, and the browser lay it all out and draw it again twice.
   */
  begin() {
    this.reset();
    this.replacing = true;
    this.element.classList.add("pc-replacing");
  }

  /**
   * The run ended: a previous run's output that nothing replaced goes. (What
   * the run itself showed stays, even after its clear_output(wait=True), as in Jupyter.)
   */
  end() {
    if (this.replacing) this.clear();
    this.element.style.minHeight = "";
  }

  /** Say, above the output, that it was not made by the code shown. @param {string} text */
  markStale(text) {
    this.element.classList.add("pc-stale");
    this.element.prepend(el("p", { class: "pc-stale-note", text }));
  }

  unmarkStale() {
    this.element.classList.remove("pc-stale");
    for (const note of this.element.querySelectorAll(":scope > .pc-stale-note")) note.remove();
  }

  /** @param {"stdout" | "stderr"} name @param {string} text */
  appendStream(name, text) {
    this.clearIfAsked();
    // Past LIMITS.outputChars a run's streams are cut: the write that crosses
    // the limit shows up to it, and the note counts every character left out.
    // Counted as shown: a progress bar that rewrites its line adds little.
    const room = LIMITS.outputChars - this.streamChars;
    if (!this.cutNote && text.length <= room) {
      this.streamChars += this.write(name, text);
      return;
    }
    this.streamChars += text.length;
    if (room > 0) this.write(name, text.slice(0, room));
    if (!this.cutNote) {
      this.cutNote = el("p", { class: "pc-truncated", role: "note" });
      this.element.append(this.cutNote);
    }
    this.cutNote.textContent = `… output cut: ${(this.streamChars - LIMITS.outputChars).toLocaleString()} more characters not shown`;
  }

  /** Append to the open stream box (a new one when the stream changes); returns the characters it added. */
  write(/** @type {"stdout" | "stderr"} */ name, /** @type {string} */ text) {
    if (!this.stream || this.stream.name !== name) {
      const pre = el("pre", { class: "pc-scroll" });
      const open = document.createTextNode("");
      pre.append(open);
      this.element.append(el("div", { class: `output stream pc-${name}` }, pre));
      this.stream = { pre, name, line: new TerminalLine(), open, lines: 1 };
    }
    const stream = this.stream;
    const { pre, line, open } = stream;
    const follow = stream.lines < FEWEST_TO_FILL || pre.scrollTop + pre.clientHeight >= pre.scrollHeight - FOLLOW_SLACK;
    const shownBefore = open.data.length;
    const { finished, open: shown } = line.feed(text);
    if (finished) {
      pre.insertBefore(document.createTextNode(finished), open);
      stream.lines += lineCount(finished) - 1;
    }
    open.data = shown;
    if (stream.lines >= FEWEST_TO_FILL) this.scrolled(pre, follow);
    // What this write added to what is shown: the open line's old text is in `finished` or `shown` again.
    return Math.max(0, finished.length + shown.length - shownBefore);
  }

  /** Keep a box that overflows at its end (unless the learner scrolled up) and reachable by keyboard. */
  scrolled(/** @type {HTMLElement} */ box, /** @type {boolean} */ follow) {
    if (box.scrollHeight <= box.clientHeight + 1) return;
    if (follow) box.scrollTop = box.scrollHeight;
    if (!box.hasAttribute("tabindex")) {
      box.setAttribute("tabindex", "0"); // a scroll box must be reachable by keyboard (WCAG 2.1.1)
      box.setAttribute("aria-label", "Output (scrolls)");
    }
  }

  /**
   * @param {import("../protocol.js").MimeBundle} data
   * @param {"display" | "result"} kind
   * @param {string} [displayId]  an output that can be replaced (IPython's display_id)
   * @param {boolean} [update]  replace the outputs shown with `displayId`, wherever they are on the page
   */
  appendBundle(data, kind, displayId, update = false) {
    if (update && displayId !== undefined) return this.updateBundle(data, kind, displayId);
    this.clearIfAsked();
    this.stream = null;
    const box = this.bundleBox(data, kind, 0);
    this.element.append(box);
    if (displayId !== undefined) shown(displayId, box);
  }

  /**
   * A display's new content in place of its old, in every cell that shows it (an id not shown:
   * nothing, as Jupyter). Not in this cell's previous output, still shown until this run's first
   * output: Jupyter has cleared that when the run started, and it goes when the run ends.
   */
  updateBundle(/** @type {import("../protocol.js").MimeBundle} */ data, /** @type {"display" | "result"} */ kind, /** @type {string} */ displayId) {
    for (const old of showing(displayId)) {
      if (this.replacing && this.element.contains(old)) continue;
      const box = this.bundleBox(data, kind, shownChars.get(old) ?? 0);
      old.replaceWith(box);
      shown(displayId, box, old);
    }
  }

  /**
   * A box showing `data`. Rich output cannot be cut: past the run's budget, its text form shows.
   * `replacing`: the rich characters of the output this one replaces (an update counts only what it adds).
   * @param {import("../protocol.js").MimeBundle} data @param {"display" | "result"} kind @param {number} replacing
   */
  bundleBox(data, kind, replacing) {
    const box = el("div", { class: `output pc-${kind}` });
    const rich = Object.entries(data).filter(([mime]) => mime !== "text/plain");
    const size = rich.reduce((sum, [, value]) => sum + String(value).length, 0);
    this.richChars += size - replacing;
    if (size && this.richChars > LIMITS.richCharsPerRun) {
      this.richChars -= size;
      const note = `\n… ${size.toLocaleString()} characters of rich output not shown: this run's outputs passed ${LIMITS.richCharsPerRun.toLocaleString()}`;
      renderBundle(box, { "text/plain": String(data["text/plain"] || "").slice(0, LIMITS.outputChars) + note });
      return box;
    }
    shownChars.set(box, size);
    renderBundle(box, data, this.graphsBefore);
    return box;
  }

  /** The run asked to clear its output (IPython's clear_output): now, or with `wait` when its next output arrives. */
  clearOutput(/** @type {boolean} */ wait) {
    if (wait) this.pendingClear = true;
    else this.clear();
  }

  clearIfAsked() {
    // The previous run's output keeps its height until this run ends: a cell that prints a
    // line, works on, then shows more would otherwise shrink and grow back, moving the page below.
    if (this.replacing) this.element.style.minHeight = `${this.element.getBoundingClientRect().height}px`;
    const graphs = this.pendingClear || this.replacing ? graphsShown(this.element) : [];
    if (this.pendingClear || this.replacing) this.clear();
    if (graphs.length) this.graphsBefore = graphs; // the new output's graphs keep their view, zoom and drawing (graph.js)
  }

  /** A traceback, or a note standing for one (Stop's restart). @param {{traceback?: string, ename?: string, evalue?: string}} msg */
  appendError(msg) {
    this.clearIfAsked();
    this.stream = null;
    let text = msg.traceback || `${msg.ename}: ${msg.evalue}`;
    if (text.length > LIMITS.outputChars) {
      text = `${text.slice(0, LIMITS.outputChars)}\n… traceback cut: ${(text.length - LIMITS.outputChars).toLocaleString()} more characters not shown`;
    }
    const pre = el("pre", { class: "pc-scroll", text });
    this.element.append(el("div", { class: "output traceback pc-error", role: "alert" }, pre));
    if (lineCount(text) >= FEWEST_TO_FILL) this.scrolled(pre, false);
  }
}

/** The rich characters each shown output holds, so that replacing it counts only the difference. @type {WeakMap<Element, number>} */
const shownChars = new WeakMap();

/**
 * @param {HTMLElement} box @param {import("../protocol.js").MimeBundle} data
 * @param {import("./graph.js").GraphShown[]} [graphsBefore]  for the graphs it holds (upgradeGraphs)
 */
function renderBundle(box, data, graphsBefore) {
  if (data["text/vnd.graphviz"]) {
    box.classList.add("pc-graph");
    box.textContent = "Drawing the graph…";
    loadViz()
      .then((viz) => box.replaceChildren(viz.renderSVGElement(data["text/vnd.graphviz"])))
      .catch((err) => box.replaceChildren(el("pre", { text: `${data["text/plain"] || ""}\n(could not draw the graph: ${err.message})` })));
  } else if (data["text/html"]) {
    box.classList.add("text_html");
    box.innerHTML = data["text/html"];
    upgradeGraphs(box, graphsBefore);
  } else if (data["image/svg+xml"]) {
    box.classList.add("image_svg");
    box.innerHTML = data["image/svg+xml"];
  } else if ("text/markdown" in data || "text/latex" in data) {
    // Rendered by richtext.js (markdown-it, KaTeX), in a bundle of its own; the text shows until it
    // loads. Rendering runs on the page's main thread: past a size it would hold the page (and its
    // Stop button) for seconds, so a longer text stays text, and says so.
    const markdown = "text/markdown" in data;
    const text = String(markdown ? data["text/markdown"] : data["text/latex"]);
    box.classList.add(markdown ? "text_markdown" : "text_latex");
    const pre = el("pre", { class: "pc-scroll", text });
    box.append(pre);
    if (text.length > LIMITS.renderedTextChars) {
      pre.textContent += `\n… shown as text: ${markdown ? "Markdown" : "LaTeX"} over ${LIMITS.renderedTextChars.toLocaleString()} characters is not rendered`;
      return;
    }
    if (!text.trim()) return; // nothing to render, as in Jupyter
    loadRichText()
      .then((rich) => {
        const html = markdown ? rich.renderMarkdown(text) : rich.renderLatex(text);
        if (html.trim()) box.innerHTML = html; // else (markdown-it's nesting limit) the text stays
      })
      .catch(() => {}); // offline before the bundle was kept: the text form stays
  } else {
    box.classList.add("text_plain");
    const pre = el("pre", { class: "pc-scroll", text: data["text/plain"] || "" });
    box.append(pre);
  }
}

// A bundle of its own beside this script (assets.bundle_js), loaded by URL.
/** @type {() => Promise<typeof import("./richtext.js")>} */
const loadRichText = loadOnce(() => import(/* webpackIgnore: true */ new URL("richtext.js", import.meta.url).href));
