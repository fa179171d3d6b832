// @ts-check
// The guide's service worker, at the site's root (publish.py writes it after
// every build, with SW_VERSION and SW_FILES compiled in).
//
// - Offline: on install it keeps every page and the runtime (Pyodide, the
//   standard library, the wheels, CodeMirror, Graphviz, KaTeX) in a cache of
//   its own version, and answers from that cache first, so a page opens and
//   runs its cells with the network gone.
// - The guide's files only: it answers, and keeps, only the files the build
//   listed (SW_FILES) and the pages' addresses without `.html`. Every other
//   request, on this origin too, goes to the network as if it were not here:
//   another app served later at the same address and port is never answered
//   with the guide, and nothing of it is kept.
// - Removable: opening any address under its scope with `?unregister-sw`
//   unregisters it and deletes its caches (docs/publish.md), whatever the
//   server now serves there.
// - One version at a time: a rebuilt site is a new version (a new cache),
//   filled completely before it takes over; the page offers a reload
//   (offline.js), and the old cache is dropped when the new worker activates.
// - Cross-origin isolation on any host: every response it gives carries
//   COOP/COEP/CORP, so from the second visit the page has SharedArrayBuffer
//   and Stop interrupts Python without a restart, even where the host sends
//   no headers (GitHub Pages).

/// <reference lib="webworker" />
import { CACHE_PREFIX, UNREGISTER_SW, asServiceWorkerRequest, versionAnswer } from "../protocol.js";

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

/* global SW_VERSION, SW_FILES, SW_HEADERS */
/** @type {string} */
const VERSION = SW_VERSION;
/** @type {string[]} paths relative to this file's folder */
const FILES = SW_FILES;
/** @type {Record<string, string>} the isolation headers (serve.py's policy) */
const HEADERS = SW_HEADERS;
const CACHE = `${CACHE_PREFIX}${VERSION}`;
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
      for (const name of await caches.keys()) if (name.startsWith(CACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener("message", (event) => {
  const request = asServiceWorkerRequest(event.data);
  if (request?.type === "skip-waiting") sw.skipWaiting(); // the learner pressed Reload
  if (request?.type === "version") event.source?.postMessage(versionAnswer(VERSION));
});

/** The response, with the isolation headers added. @param {Response} response */
function isolated(response) {
  if (response.status === 0) return response; // opaque: cannot be rebuilt
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(HEADERS)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** The guide's files, as absolute paths (`/_static/x.js`): the only URLs answered and kept. */
const OWN = new Set(FILES.map((path) => new URL(path, BASE).pathname));

/**
 * The cache's key for a request of one of the guide's files, or null for any other request.
 * The key is the file's URL without its query (the cache holds one version of the site, so a
 * ?v= adds nothing); a page's address is its file's as a host serves it (`/` is
 * `/index.html`, `/lab` is `/lab.html`).
 * @param {Request} request
 */
function ownKey(request) {
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== BASE.origin) return null;
  url.search = "";
  url.hash = "";
  if (OWN.has(url.pathname)) return url.href;
  if (request.mode !== "navigate") return null;
  url.pathname = url.pathname.endsWith("/") ? `${url.pathname}index.html` : `${url.pathname}.html`;
  return OWN.has(url.pathname) ? url.href : null;
}

/** @param {Request} request @param {string} key */
async function answer(request, key) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(key);
  if (hit) return isolated(hit);
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic") await cache.put(key, response.clone());
    return isolated(response);
  } catch (err) {
    if (request.mode !== "navigate") throw err;
    return isolated(offline(key));
  }
}

/** Offline, a page of the guide the cache does not hold (evicted by the browser). @param {string} key */
function offline(key) {
  const path = new URL(key).pathname;
  const name = path.slice(BASE.pathname.length).replace(/[<>&"]/g, "");
  return page(
    "This page needs the network once",
    `You are offline, and <code>${name}</code> is not kept in this browser yet. Pages of the guide you have opened before work offline; this one will too after one visit online.`,
  );
}

/** A page of the worker's own, never stored. @param {string} title @param {string} text */
function page(title, text) {
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title} · AI-Systems Lab Guide</title><link rel="icon" href="data:,">
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem">
<h1>${title}</h1>
<p>${text}</p>
<p><a href="${BASE.href}">Go to the guide's first page</a></p></body></html>`;
  // 200, not 503 or 404: an error status is logged as a failed load in the page's console, and the page is an answer.
  return new Response(html, { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" } });
}

/** `?unregister-sw`: the worker removes itself and every cache of the guide, and says so. */
async function unregister() {
  await sw.registration.unregister();
  for (const name of await caches.keys()) if (name.startsWith(CACHE_PREFIX)) await caches.delete(name);
  return page(
    "The guide's offline copy is removed",
    "This browser no longer keeps the guide, and its service worker no longer answers at this address. Opening a page of the guide again keeps it again once its Python has started.",
  );
}

sw.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.mode === "navigate" && url.origin === BASE.origin && url.pathname.startsWith(BASE.pathname) && url.searchParams.has(UNREGISTER_SW)) {
    event.respondWith(unregister());
    return;
  }
  // The site's start-up snapshot (assets.make_snapshot) is not among the files either: a
  // browser that restores it keeps it in OPFS, so the cache would only hold it twice.
  const key = ownKey(request);
  if (key) event.respondWith(answer(request, key));
});
