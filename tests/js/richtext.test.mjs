// Markdown and LaTeX output (richtext.js): rendered, and never a way to run HTML or script.
import { test } from "node:test";
import assert from "node:assert/strict";
import { renderLatex, renderMarkdown } from "../../src/pyodide_cells/js/page/richtext.js";

test("Markdown renders, with its math through KaTeX", () => {
  const html = renderMarkdown("**bold** and $\\alpha^2$");
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /class="katex"/);
  assert.match(html, /<annotation encoding="application\/x-tex">\\alpha\^2<\/annotation>/); // MathML for screen readers
});

test("raw HTML in Markdown is text, and a javascript: link is not a link", () => {
  const html = renderMarkdown('<img src=x onerror="alert(1)"> <script>alert(2)</script> [go](javascript:alert(3))');
  assert.doesNotMatch(html, /<img|<script|href="javascript/i);
  assert.match(html, /&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;/);
});

test("one equation is a display equation, as the build shows text/latex; \\(…\\) stays inline; plain text stays text", () => {
  for (const text of ["$\\displaystyle x^2$", "$$x^2$$", "\\[x^2\\]", "\\begin{align}x^2\\end{align}"]) {
    assert.match(renderLatex(text), /^<div class="math"><span class="katex-display">/, text);
  }
  assert.match(renderLatex("\\(x^2\\)"), /^<span class="katex">/);
  assert.match(renderLatex("the value $x$ and $y$"), /^<p>the value <span class="katex">/);
  assert.equal(renderLatex("Plain sentence, no math."), "<p>Plain sentence, no math.</p>\n");
});

test("KaTeX runs untrusted: \\href to javascript: and bad LaTeX render as errors, not links or exceptions", () => {
  assert.doesNotMatch(renderLatex("\\href{javascript:alert(1)}{x}"), /href="javascript/);
  const error = renderLatex("$\\frac{$");
  assert.match(error, /katex-error/);
  assert.match(error, /color:currentColor/); // readable on both themes
});
