// @ts-check
// A search result opens its page with the words searched for, and Sphinx's
// sphinx_highlight.js marks them once the page has parsed. In an SVG it puts
// a box behind a word from its parent's getBBox(), which the <title> and
// <desc> of the guide's pictures (their text for screen readers and
// tooltips) do not have: it threw a TypeError and stopped marking. That text
// is not shown, so it is left out (Sphinx's "nohighlight" class). Modules run
// before DOMContentLoaded, where Sphinx's marking starts.

/** Leaves the text of the pictures' <title> and <desc> out of Sphinx's search marks. @param {ParentNode} root */
export function keepSearchMarksOffPictureText(root) {
  for (const element of root.querySelectorAll("svg title, svg desc")) element.classList.add("nohighlight");
}
