// @ts-check
// The guide's service worker, at the site's root (publish.py writes it after
// every build, with SW_VERSION and SW_FILES compiled in).
//
// - Offline: on install it keeps every page and the runtime (Pyodide, the
//   standard library, the wheels, CodeMirror, Graphviz, KaTeX) in a cache of
//   its own version, and answers from that cache first, so a page opens and
//   runs its cells with the network gone. What it does not hold it fetches
//   and keeps; a page it cannot get says that it needs the network once.
// - One version at a time: a rebuilt site is a new version (a new cache),
//   filled completely before it takes over; the page offers a reload
//   (nav.js), and the old cache is dropped when the new worker activates.
// - Cross-origin isolation on any host: every response it gives carries
//   COOP/COEP/CORP, so from the second visit the page has SharedArrayBuffer
//   and Stop interrupts Python without a restart, even where the host sends
//   no headers (GitHub Pages).

/// <reference lib="webworker" />
const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

/* global SW_VERSION, SW_FILES, SW_HEADERS */
/** @type {string} */
const VERSION = SW_VERSION;
/** @type {string[]} paths relative to this file's folder */
const FILES = SW_FILES;
/** @type {Record<string, string>} the isolation headers (serve.py's policy) */
const HEADERS = SW_HEADERS;
const PREFIX = "lab-guide-";
const CACHE = `${PREFIX}${VERSION}`;
const BASE = new URL("./", sw.location.href);

sw.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // All or nothing: a failed file fails the install, and the version in use stays.
      await cache.addAll(FILES.map((path) => new Request(new URL(path, BASE).href, { cache: "no-cache" })));
    })(),
  );
});

sw.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener("message", (event) => {
  if (event.data?.type === "skip-waiting") sw.skipWaiting(); // the learner pressed Reload
  if (event.data?.type === "version") event.source?.postMessage({ type: "version", version: VERSION });
});

/** The response, with the isolation headers added. @param {Response} response */
function isolated(response) {
  if (response.status === 0) return response; // opaque: cannot be rebuilt
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(HEADERS)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * What the cache holds for a request: the URL itself (the cache holds one
 * version of the site, so a ?v= adds nothing), or for a page, the file a host
 * serves for it (`/` is `/index.html`, `/lab` is `/lab.html`).
 * @param {Cache} cache @param {Request} request
 */
async function cached(cache, request) {
  const found = await cache.match(request, { ignoreSearch: true });
  if (found || request.mode !== "navigate") return found;
  const url = new URL(request.url);
  url.search = "";
  url.pathname = url.pathname.endsWith("/") ? `${url.pathname}index.html` : `${url.pathname}.html`;
  return cache.match(url.href);
}

/** @param {Request} request */
async function answer(request) {
  const cache = await caches.open(CACHE);
  const hit = await cached(cache, request);
  if (hit) return isolated(hit);
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic") await cache.put(request, response.clone());
    return isolated(response);
  } catch (err) {
    if (request.mode !== "navigate") throw err;
    return isolated(offline(request.url));
  }
}

/** Offline, a page the cache does not hold: one of the site's not kept yet, or no page at all. @param {string} url */
function offline(url) {
  const path = new URL(url).pathname;
  const rel = path.startsWith(BASE.pathname) ? path.slice(BASE.pathname.length) : path;
  const known = FILES.includes(rel) || FILES.includes(`${rel}.html`) || FILES.includes(`${rel}index.html`);
  const name = (rel || "index.html").replace(/[<>&"]/g, "");
  const [title, text] = known
    ? ["This page needs the network once", `You are offline, and <code>${name}</code> is not kept in this browser yet. Pages of the guide you have opened before work offline; this one will too after one visit online.`]
    : ["There is no such page", `The guide has no page at <code>${name}</code>. You are offline, so this is its copy kept in this browser answering.`];
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title} · AI-Systems Lab Guide</title><link rel="icon" href="data:,">
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem">
<h1>${title}</h1>
<p>${text}</p>
<p><a href="${BASE.href}">Go to the guide's first page</a></p></body></html>`;
  // 200, not 503 or 404: an error status is logged as a failed load in the page's console, and the page is an answer.
  return new Response(html, { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" } });
}

// The site's start-up snapshot (assets.make_snapshot, 20 MB) goes to the network
// untouched: a browser that restores it keeps it in OPFS, and it is not kept for
// offline use (publish.py), so the cache would only hold it twice.
const NOT_KEPT = /\/_static\/pyodide_cells\/startup-[0-9a-f]+\.bin$/;

sw.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== sw.location.origin || NOT_KEPT.test(url.pathname)) return;
  event.respondWith(answer(request));
});
