// @ts-check
// Furo's drawers on a narrow screen (the site's navigation, the page's
// contents) are open while a checkbox is checked. The browser gives a page
// back its checkboxes as they were on Back and after a reload (its saved form
// state, restored once the page has parsed, or the whole page from the
// back/forward cache), so the drawer the reader left through, by a link in
// it, covered the page again on Back. A page comes back with them closed.

const DRAWERS = ["__navigation", "__toc"];

/** @returns {HTMLInputElement[]} Furo's drawer toggles on this page */
function toggles() {
  return DRAWERS.map((id) => document.getElementById(id)).filter((el) => el instanceof HTMLInputElement);
}

/** Keeps the drawers out of what the browser gives back to a page it shows again. */
export function closeDrawersOnReturn() {
  // Not kept with the page's form state when it is left, so not given back.
  for (const toggle of toggles()) toggle.autocomplete = "off";
  addEventListener("pageshow", (event) => {
    if (!event.persisted) return;
    for (const toggle of toggles()) toggle.checked = false;
  });
}
