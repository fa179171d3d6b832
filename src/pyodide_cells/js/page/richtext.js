// @ts-check
// Markdown and LaTeX output (text/markdown, text/latex: IPython.display's
// Markdown, Latex and Math, or an object's _repr_markdown_ / _repr_latex_),
// rendered as the build renders them: markdown-it for the Markdown, KaTeX for
// the math (with the stylesheet and fonts the site already serves). Loaded in
// a chunk of its own, when the first such output arrives.
//
// Raw HTML in Markdown is shown as text, never run (markdown-it's html: false),
// and KaTeX runs untrusted (no \href to javascript:, no \htmlClass).

import MarkdownIt from "markdown-it";
import markdownItKatex from "@vscode/markdown-it-katex";
import katex from "katex";

// MathML beside the HTML, as the build renders it: screen readers read the MathML. An error
// shows in the text's own colour (KaTeX's red is unreadable on the dark theme), underlined by
// the stylesheet; "strict" warnings about LaTeX dialects are not the learner's business.
const KATEX = { throwOnError: false, trust: false, strict: /** @type {"ignore"} */ ("ignore"), errorColor: "currentColor" };
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });
markdown.use(/** @type {any} */ (markdownItKatex).default || markdownItKatex, KATEX);

/** HTML for Markdown text (with $…$ and $$…$$ math). @param {string} text */
export function renderMarkdown(text) {
  return markdown.render(text);
}

/**
 * HTML for LaTeX output. One equation ($…$, $$…$$, \[…\], or an environment
 * such as \begin{align}) is a display equation, as the build shows text/latex
 * output (myst-nb) and as IPython's Math gives it ($\displaystyle …$); \(…\) is
 * inline; anything else is text with its delimited math typeset.
 * @param {string} text
 */
export function renderLatex(text) {
  const source = text.trim();
  const inline = /^\\\(([\s\S]*)\\\)$/.exec(source);
  if (inline) return katex.renderToString(inline[1], { ...KATEX, displayMode: false });
  const one = /^\$\$([\s\S]+)\$\$$/.exec(source) || /^\$([^$]+)\$$/.exec(source) || /^\\\[([\s\S]*)\\\]$/.exec(source);
  if (one || /^\\begin\{/.test(source)) {
    return `<div class="math">${katex.renderToString(one ? one[1] : source, { ...KATEX, displayMode: true })}</div>`;
  }
  // As Jupyter typesets text/latex: the math in it, between delimiters; the rest is text.
  return markdown.render(source);
}
