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

/**
 * Sphinx's search page shows, under each result, an excerpt of the page's text around the words
 * found (searchtools.js `Search.htmlToText`, the `textContent` of the page's main part). A formula
 * rendered by KaTeX holds its text three times: the MathML for screen readers, the TeX source in
 * its <annotation>, and the HTML that is shown, so an excerpt read "709.78709.78709.78". The
 * excerpt keeps the text shown (`.katex-html`): the MathML, with its annotation, is left out of it.
 * Sphinx looks `Search.htmlToText` up each time it makes an excerpt, after this module has run.
 * @param {{htmlToText: (html: string, anchor?: string) => string}} search  searchtools.js's `Search`
 */
export function showMathOnceInSearchExcerpts(search) {
  const toText = search.htmlToText;
  search.htmlToText = (html, anchor) => {
    const page = new DOMParser().parseFromString(html, "text/html");
    for (const element of page.querySelectorAll(".katex-mathml")) element.remove();
    return toText(page.documentElement.outerHTML, anchor);
  };
}
