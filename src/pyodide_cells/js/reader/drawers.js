// @ts-check
// Furo's drawers on a narrow screen (the site's navigation, the page's
// contents) are open while a checkbox is checked. The browser gave a page
// back its checkboxes as they were on Back and after a reload (its saved form
// state, restored once the page has parsed, or the whole page from the
// back/forward cache), so the drawer the reader left through covered the page
// again on Back. And a link in the contents drawer to a section of the same
// page scrolled the page behind the drawer, which stayed open over it.
// Here a drawer closes once the reader has followed a link in it, and a page
// never comes back with one open.

const DRAWERS = ["__navigation", "__toc"];

/** @returns {HTMLInputElement[]} Furo's drawer toggles on this page */
function toggles() {
  return DRAWERS.map((id) => document.getElementById(id)).filter((el) => el instanceof HTMLInputElement);
}

function closeDrawers() {
  for (const toggle of toggles()) toggle.checked = false;
}

/** Closes the drawers when a link in them is followed, and keeps them out of what the browser gives back. */
export function closeDrawersOnLeaving() {
  // Not kept with the page's form state when it is left, so not given back.
  for (const toggle of toggles()) toggle.autocomplete = "off";
  // Closed before the back/forward cache keeps the page: shown again, it is shown closed, not closing.
  addEventListener("pagehide", closeDrawers);
  addEventListener("hashchange", closeDrawers); // Back/Forward between sections of the page, too
  for (const drawer of document.querySelectorAll(".sidebar-drawer, .toc-drawer")) {
    drawer.addEventListener("click", (event) => {
      if (event.target instanceof Element && event.target.closest("a[href]")) closeDrawers();
    });
  }
}
