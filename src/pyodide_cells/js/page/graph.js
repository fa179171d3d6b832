// @ts-check
// Draw computation graphs (labs.graph_view.GraphView outputs) with Graphviz in WASM.
//
// A GraphView's HTML is a <figure class="lab-graph"> holding a node table and
// the DOT source of three views in data-dot-data / -grad / -both. Here it gains
// a view switch, zoom buttons and the SVG drawing; the table stays, folded.
// Graphviz (1.3 MB) loads only when a graph comes near the viewport.
// A re-run's figure keeps the view, zoom and drawing of the one it replaces
// until its own is drawn (output.js passes them on).

import { el, STATIC } from "./util.js";

/** @type {Promise<any> | null} */
let vizPromise = null;
/** Graphviz in WASM, loaded on first use. @returns {Promise<any>} */
export function loadViz() {
  if (!vizPromise) {
    vizPromise = new Promise((resolve, reject) => {
      const script = el("script", { src: new URL("viz/viz-global.js", STATIC).href });
      script.onload = () => /** @type {NonNullable<typeof window.Viz>} the script defines it */ (window.Viz).instance().then(resolve, reject);
      script.onerror = () => reject(new Error("could not load Graphviz (viz-global.js)"));
      document.head.append(script);
    });
  }
  return vizPromise;
}

const VIEWS = [
  ["data", "Forward: data"],
  ["grad", "Backward: gradients"],
  ["both", "Both"],
];
let groupCounter = 0;

/** A graph's labels are drawn at least this big when it opens (CSS px): smaller, they are not read. */
const READABLE_TEXT_PX = 11;

/**
 * The zoom a graph opens at: the whole graph in its frame, never enlarged, and never so small that its
 * labels fall under READABLE_TEXT_PX (a graph too big for that opens at that size, and scrolls).
 * @param {HTMLElement} frame @param {SVGSVGElement} svg
 */
export function openingZoom(frame, svg) {
  const style = getComputedStyle(frame);
  const padX = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  const padY = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
  const width = frame.clientWidth - padX;
  const height = (parseFloat(style.maxHeight) || Infinity) - padY;
  const fit = Math.min(1, width / parseFloat(svg.dataset.naturalWidth || "1"), height / parseFloat(svg.dataset.naturalHeight || "1"));
  // Graphviz writes font sizes in pt, as its sizes: the labels' size at 100 %, in px.
  const textPx = (parseFloat(svg.querySelector("text")?.getAttribute("font-size") || "") || 14) * 4 / 3;
  return Math.max(fit, Math.min(1, READABLE_TEXT_PX / textPx));
}

/**
 * @param {HTMLElement} figure @param {HTMLElement} frame @param {string} view
 * @param {{value: number | "fit" | "open", opened?: () => void}} zoom  "open": the zoom the graph opens at (openingZoom), once drawn
 */
function draw(figure, frame, view, zoom) {
  const dot = figure.dataset[`dot${view[0].toUpperCase()}${view.slice(1)}`];
  if (!dot) return;
  frame.dataset.state = "drawing";
  loadViz()
    .then((viz) => {
      const svg = viz.renderSVGElement(dot);
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", `${figure.dataset.summary || "graph"}, showing ${view}`);
      const width = parseFloat(svg.getAttribute("width")) || 600;
      svg.dataset.naturalWidth = String(width * 4 / 3); // Graphviz sizes are in pt
      svg.dataset.naturalHeight = String((parseFloat(svg.getAttribute("height")) || 400) * 4 / 3);
      svg.removeAttribute("height");
      const bottom = frame.getBoundingClientRect().bottom;
      frame.replaceChildren(svg);
      if (zoom.value === "open") {
        zoom.value = openingZoom(frame, svg);
        zoom.opened?.();
      }
      applyZoom(frame, zoom.value);
      // Drawn above the screen (the reader scrolling up towards it), the graph grew
      // by its height and pushed what the reader was reading down, which the browser's
      // scroll anchoring did not make up for: the page scrolls by what its bottom moved.
      if (bottom <= 0) {
        const moved = frame.getBoundingClientRect().bottom - bottom;
        if (Math.abs(moved) >= 1) window.scrollBy({ top: moved, behavior: "instant" });
      }
      frame.dataset.state = "drawn";
    })
    .catch((err) => {
      frame.replaceChildren(el("p", { class: "lab-graph-note", text: `Could not draw the graph: ${err.message}` }));
      frame.dataset.state = "error";
    });
}

/** @param {number | "fit" | "open"} value */
const zoomText = (value) => (value === "fit" ? "whole graph" : value === "open" ? "" : `${Math.round(value * 100)} %`);

/** @param {HTMLElement} frame @param {number | "fit" | "open"} scale */
function applyZoom(frame, scale) {
  const svg = frame.querySelector("svg");
  if (!svg || scale === "open") return;
  if (scale === "fit") {
    svg.style.width = "100%";
    svg.style.maxWidth = `${svg.dataset.naturalWidth}px`;
  } else {
    svg.style.maxWidth = "none";
    svg.style.width = `${parseFloat(/** @type {string} draw() set it on every drawing */ (svg.dataset.naturalWidth)) * scale}px`;
  }
}

/**
 * What a figure shows: its view, zoom and frame. A re-run's figure takes them
 * over from the one it replaces (GraphShown).
 * @typedef {{view: string, zoom: {value: number | "fit" | "open", opened?: () => void}, frame: HTMLElement}} GraphShown
 */

/** Figures already given their controls, and what each shows. @type {WeakMap<HTMLElement, GraphShown>} */
const upgraded = new WeakMap();

/**
 * What the graphs under `root` show, in page order: for the figures a re-run's output brings (upgradeGraphs).
 * @param {ParentNode} root @returns {GraphShown[]}
 */
export function graphsShown(root) {
  return [...root.querySelectorAll("figure.lab-graph")].flatMap((figure) => upgraded.get(/** @type {HTMLElement} */ (figure)) || []);
}

/**
 * Gives a figure its view switch, zoom and drawing. With `before` (what the
 * figure it replaces showed: the cell's graph runs again after every run), it
 * keeps the learner's view and zoom, and shows the old drawing until the new
 * one is drawn: the frame emptied for a moment and everything below it moved
 * up by the graph's height and back.
 * @param {HTMLElement} figure @param {GraphShown} [before]
 */
export function upgradeGraph(figure, before) {
  if (upgraded.has(figure) || !figure.dataset.dotBoth) return;
  const name = `lab-graph-view-${++groupCounter}`;
  // The learner's zoom after a re-run; else the whole graph if its labels stay readable
  // (openingZoom): at 100 % micrograd's graph ran off its frame, and "fit" made a big one unreadable.
  /** @type {{value: number | "fit" | "open", opened?: () => void}} */
  const zoom = { value: before ? before.zoom.value : "open" };
  const frame = el("div", { class: "lab-graph-frame", role: "region", tabindex: "0", "aria-label": "Graph drawing; scroll to pan" });
  const oldDrawing = before?.frame.querySelector(":scope > svg");
  if (oldDrawing) frame.append(oldDrawing);
  const shown = { view: before ? before.view : "both", zoom, frame };
  upgraded.set(figure, shown);
  const radios = el("fieldset", { class: "lab-graph-views" }, el("legend", { class: "pc-visually-hidden", text: "Show" }));
  for (const [value, label] of VIEWS) {
    const input = el("input", { type: "radio", name, value, checked: value === shown.view, onchange: () => { shown.view = value; draw(figure, frame, value, zoom); } });
    radios.append(el("label", {}, input, ` ${label}`));
  }
  const setZoom = (/** @type {number | "fit"} */ value) => { zoom.value = value; applyZoom(frame, value); zoomLabel.textContent = zoomText(value); };
  const current = () => (zoom.value === "open" ? 1 : zoom.value === "fit" ? (frame.querySelector("svg")?.getBoundingClientRect().width || 1) / (parseFloat(frame.querySelector("svg")?.dataset.naturalWidth || "") || 1) : zoom.value);
  const zoomLabel = el("span", { class: "lab-graph-zoom", "aria-live": "polite", text: zoomText(zoom.value) });
  zoom.opened = () => (zoomLabel.textContent = zoomText(zoom.value));
  const tools = el(
    "div",
    { class: "lab-graph-tools" },
    radios,
    el("span", { class: "lab-graph-zoombar" },
      el("button", { type: "button", class: "pc-button", "aria-label": "Zoom out", text: "−", onclick: () => setZoom(Math.max(0.25, current() / 1.25)) }),
      zoomLabel,
      el("button", { type: "button", class: "pc-button", "aria-label": "Zoom in", text: "+", onclick: () => setZoom(Math.min(4, current() * 1.25)) }),
      el("button", { type: "button", class: "pc-button", text: "Fit", "aria-label": "Fit the whole graph", onclick: () => setZoom("fit") })),
  );
  const caption = figure.querySelector("figcaption");
  /** @type {ChildNode} a GraphView's figure holds its table */ (caption || figure.firstChild).after(tools, frame);
  const table = figure.querySelector(".lab-graph-table");
  if (table) {
    const details = el("details", { class: "lab-graph-details" }, el("summary", { text: "Nodes as a table" }));
    table.replaceWith(details);
    details.append(table);
  }
  const start = () => draw(figure, frame, shown.view, zoom);
  if ("IntersectionObserver" in window) {
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) { io.disconnect(); start(); }
    }, { rootMargin: "400px" });
    io.observe(figure);
  } else start();
}

/**
 * @param {ParentNode} [root]
 * @param {GraphShown[]} [before]  what the figures replaced showed, in order (graphsShown); used up
 */
export function upgradeGraphs(root = document, before = []) {
  root.querySelectorAll("figure.lab-graph").forEach((figure) => upgradeGraph(/** @type {HTMLElement} */ (figure), before.shift()));
}
