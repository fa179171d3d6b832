// @ts-check
// The page's side of the service worker (sw.js, at the site's root): it is
// registered once the page has nothing more urgent to do, and the page says
// when a newer version of the guide is ready. The state is on <html>
// (data-offline) for whoever needs to know:
//   "unsupported"  no service workers here (an old browser, a file:// page, blocked)
//   "installing"   keeping the site for offline use
//   "ready"        this version of the site works offline
//   "update-ready" a newer version is kept and waits for a reload
//   "failed"       it could not be kept (the page still works online)
//   "removed"      the address had `?unregister-sw`: the worker and its caches are gone
//                  (sw.js does the same when it answers that address; this is for a page it did not)

import { CACHE_PREFIX, PYODIDE_STATE_ASK, PYODIDE_STATE_EVENT, UNREGISTER_SW, asPyodideState, skipWaiting } from "../protocol.js";

/** @param {string} state */
const setState = (state) => {
  document.documentElement.dataset.offline = state;
};

/** How long the learner must leave a lab page alone (no key, click or run) before its offline copy is made. */
const QUIET_MS = 2000;

/**
 * Resolves once a lab page's Python has started (or failed to), nothing runs,
 * and the learner has not pressed a key or a pointer for QUIET_MS; at once on
 * other pages. Keeping the site downloads every file of the guide again: on a
 * 2-core machine that doubled the time a learner's first keys took to show,
 * and their first run waited behind it.
 */
function pageSettled() {
  return new Promise((resolve) => {
    if (!document.querySelector("div.cell")) return resolve(undefined);
    // The runtime says when its Python's state changes (protocol/pagestate.js), and says it again
    // when asked, should it have started before this module.
    /** @type {import("../protocol.js").PyodideState | null} */
    let state = null;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const events = ["keydown", "pointerdown", "input"];
    const settled = () => {
      document.removeEventListener(PYODIDE_STATE_EVENT, changed);
      for (const type of events) window.removeEventListener(type, check, true);
      resolve(undefined);
    };
    const check = () => {
      clearTimeout(timer);
      if (state === "ready" || state === "error") timer = setTimeout(settled, QUIET_MS);
    };
    const changed = (/** @type {Event} */ event) => {
      state = asPyodideState(event) ?? state;
      check();
    };
    document.addEventListener(PYODIDE_STATE_EVENT, changed);
    for (const type of events) window.addEventListener(type, check, { capture: true, passive: true });
    document.dispatchEvent(new Event(PYODIDE_STATE_ASK));
  });
}

/** This tab asked the newer version to take over: its controllerchange is the cue to reload. */
let reloading = false;

/**
 * The note that offers the newer version: Reload lets the waiting worker take over, then
 * reloads; once another tab has done that (`waiting` null), Reload only reloads.
 * @param {ServiceWorker | null} waiting
 * @param {string} message
 */
function offerReload(waiting, message) {
  let note = /** @type {HTMLElement | null} */ (document.querySelector(".pc-update"));
  if (!note) {
    note = document.createElement("div");
    note.className = "pc-update";
    note.setAttribute("role", "status");
    document.body.append(note);
  }
  const text = document.createElement("span");
  text.textContent = message;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "pc-update-reload";
  button.textContent = "Reload";
  button.addEventListener("click", () => {
    if (!waiting || waiting.state === "activated" || waiting.state === "redundant") return location.reload();
    reloading = true;
    navigator.serviceWorker.addEventListener("controllerchange", () => location.reload(), { once: true });
    waiting.postMessage(skipWaiting());
  });
  note.replaceChildren(text, " ", button);
}

/** @param {ServiceWorkerRegistration} registration */
function watch(registration) {
  const update = () => {
    const waiting = registration.waiting;
    if (waiting && navigator.serviceWorker.controller) {
      setState("update-ready");
      offerReload(waiting, "A newer version of this guide is ready.");
    } else if (registration.active && !registration.installing) setState("ready");
    else setState("installing");
  };
  const follow = (/** @type {ServiceWorker | null} */ worker) => {
    worker?.addEventListener("statechange", () => {
      if (worker.state === "redundant" && !registration.active) setState("failed");
      else update();
    });
  };
  follow(registration.installing);
  // Another tab let the newer version take over: this page is of the older one, whose files are
  // gone from the cache, so it says so (a first install's takeover, from no worker, is not that).
  let controlled = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener("controllerchange", () => {
    if (controlled && !reloading) {
      setState("update-ready");
      offerReload(null, "This guide was updated in another tab: reload this page to use the new version (your edits are kept).");
    }
    controlled = true;
  });
  registration.addEventListener("updatefound", () => {
    follow(registration.installing);
    update();
  });
  update();
}

/**
 * Register the guide's service worker, found at `root`.
 * @param {URL} root  the site's root folder
 */
export async function keepOffline(root) {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return setState("unsupported");
  if (new URLSearchParams(location.search).has(UNREGISTER_SW)) {
    await (await navigator.serviceWorker.getRegistration(root.href))?.unregister();
    for (const name of await caches.keys()) if (name.startsWith(CACHE_PREFIX)) await caches.delete(name);
    return setState("removed");
  }
  await pageSettled();
  try {
    const registration = await navigator.serviceWorker.register(new URL("sw.js", root), { scope: root.pathname });
    watch(registration);
  } catch {
    setState("unsupported"); // blocked (a browser setting, a test harness): the page works online as before
  }
}
