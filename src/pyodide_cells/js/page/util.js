// @ts-check
// Small DOM helpers shared by the page modules.

/**
 * A new element: `attrs` are attributes ("class", "text" for its text, "on…" for listeners); `children` are appended.
 * @param {string} tag
 * @param {{[name: string]: any}} [attrs]
 * @param {...(Node | string | null | undefined)} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

export const STATIC = new URL("../", import.meta.url); // .../_static/

/**
 * A loader of something fetched on first use (a chunk, a bundle): ``load`` runs once and its
 * promise is kept; a load that failed is forgotten, so the next call tries again.
 * @template T
 * @param {() => Promise<T>} load
 * @returns {() => Promise<T>}
 */
export function loadOnce(load) {
  /** @type {Promise<T> | null} */
  let loading = null;
  return () => {
    loading ||= load().catch((err) => {
      loading = null;
      throw err;
    });
    return loading;
  };
}

/**
 * A section's own heading as the learner reads it (without Sphinx's "#" permalink); "" if it has none.
 * @param {Element | null | undefined} section
 */
export function headingText(section) {
  const heading = section?.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4");
  if (!heading) return "";
  const copy = /** @type {HTMLElement} */ (heading.cloneNode(true));
  copy.querySelectorAll(".headerlink").forEach((link) => link.remove());
  return (copy.textContent || "").trim();
}
