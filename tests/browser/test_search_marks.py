"""A search result's page marks the words searched for, on every page (searchmarks.js).

Sphinx's sphinx_highlight.js threw a TypeError in the pictures' <title> and
<desc> (no getBBox), an error in the page, and stopped marking partway.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import TIMEOUT

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("name, word", [("online_softmax", "softmax"), ("online_softmax", "block"), ("paged_attention", "block")])
def test_a_search_result_marks_its_words_past_the_pictures(page, base_url, name, word):
    page.goto(f"{base_url}/{name}.html?highlight={word}")
    page.wait_for_function("document.querySelectorAll('span.highlighted').length > 0", timeout=TIMEOUT)
    page.wait_for_load_state("load")
    # Marked to the end of the page: the last paragraph that holds the word has its mark.
    last = page.evaluate(
        """(word) => {
      const holding = [...document.querySelectorAll('article p')].filter((p) => p.textContent.toLowerCase().includes(word));
      return holding.length ? holding[holding.length - 1].querySelectorAll('span.highlighted').length : -1;
    }""",
        word,
    )
    assert last > 0
    # The page's conftest fails the test on the TypeError (an uncaught error in the page).


def test_a_search_excerpt_shows_math_once(page, base_url):
    # KaTeX keeps a formula's text three times (MathML, its TeX annotation, the HTML shown):
    # the excerpt under a result read "709.78709.78709.78".
    page.goto(f"{base_url}/search.html?q=score+passes")
    excerpt = page.locator("#search-results li").filter(has=page.locator('a[href*="online_softmax"]')).locator("p.context")
    excerpt.first.wait_for(timeout=TIMEOUT)
    text = excerpt.first.inner_text()
    assert text.count("709.78") == 1 and "88.72" in text, text
