// @ts-check
// Page <-> service worker: the messages a page (offline/offline.js) and the
// guide's service worker (offline/sw.js) send each other with postMessage, the
// check the worker holds what it receives to, and the names both sides must
// agree on (the caches' prefix, the address parameter that removes the worker).
// Built here only: both sides import this module.

/**
 * The address parameter that removes the service worker and its caches (`?unregister-sw`, docs/publish.md):
 * sw.js answers such an address itself; offline/offline.js does the same on a page the worker did not answer.
 */
export const UNREGISTER_SW = "unregister-sw";

/** Every cache the guide keeps is named this and its version (sw.js); a page that removes the worker deletes them by it. */
export const CACHE_PREFIX = "lab-guide-";

/**
 * @typedef {{type: "skip-waiting"}} SkipWaitingRequest
 *   Page -> a waiting worker: take over now (the learner pressed Reload under "A newer version is ready").
 * @typedef {{type: "version"}} VersionRequest
 *   Page -> worker: which version of the site do you keep? Answered with a VersionAnswer to the sender.
 * @typedef {SkipWaitingRequest | VersionRequest} ServiceWorkerRequest
 * @typedef {{type: "version", version: string}} VersionAnswer
 *   Worker -> page: the version the worker keeps (publish.py's digest of the site's files, SW_VERSION).
 */

/** @returns {SkipWaitingRequest} */
export const skipWaiting = () => ({ type: "skip-waiting" });
/** @returns {VersionRequest} */
export const versionRequest = () => ({ type: "version" });
/** @returns {VersionAnswer} */
export const versionAnswer = (/** @type {string} */ version) => ({ type: "version", version });

/**
 * The message if it is a request the service worker takes, else null (it ignores anything else:
 * any script of the origin can post to it).
 * @param {unknown} data
 * @returns {ServiceWorkerRequest | null}
 */
export function asServiceWorkerRequest(data) {
  const msg = /** @type {any} */ (data);
  if (!msg || typeof msg !== "object") return null;
  return msg.type === "skip-waiting" || msg.type === "version" ? { type: msg.type } : null;
}
