// @ts-check
// Starting the interpreter the fast way: from this browser's kept snapshot if
// there is one, else from the site's when fetching it should beat starting
// CPython (snapshot.js siteSnapshotPays), else afresh, able to make a snapshot.
// A snapshot that fails to load costs a warning and a fresh start.

import * as protocol from "../../protocol.js";
import { ASM_JS_URL, PYODIDE_URL, SITE_SNAPSHOT_SIZE, SITE_SNAPSHOT_SRI, SITE_SNAPSHOT_URL, STDLIB_URL } from "./config.js";
import { beforeRestore } from "./early.js";
import { rebase, unpackSparse } from "./packed.js";
import { SnapshotStore, checkIntegrity, siteSnapshotPays } from "./snapshot.js";

const OWN_DIGEST = Boolean(self.crypto?.subtle);

/**
 * The resource timing entry of `url`, a file that has arrived whole (the
 * browser may record it a moment later), or undefined if none is recorded
 * within `waitMs`: a browser that keeps no such record must not keep Python
 * from starting.
 * @param {string} url
 * @param {number} waitMs
 * @returns {Promise<PerformanceResourceTiming | undefined>}
 */
function arrival(url, waitMs) {
  const find = () => /** @type {PerformanceResourceTiming | undefined} */ (performance.getEntriesByName(url, "resource")[0]);
  const seen = find();
  if (seen || typeof PerformanceObserver !== "function") return Promise.resolve(seen);
  return new Promise((resolve) => {
    const observer = new PerformanceObserver(() => {
      const entry = find();
      if (entry) done(entry);
    });
    const timer = setTimeout(() => done(undefined), waitMs);
    /** @param {PerformanceResourceTiming | undefined} entry */
    const done = (entry) => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(entry);
    };
    observer.observe({ type: "resource" });
  });
}

/** Pyodide from the site's files; `how`: restore a snapshot, or be able to make one. @param {object} how */
function loadPython(how) {
  return /** @type {any} */ (self).loadPyodide({ indexURL: PYODIDE_URL, stdLibURL: STDLIB_URL, ...how });
}

/**
 * A fresh start of Pyodide, making a snapshot possible where this browser can keep one.
 * @param {SnapshotStore} snapshots
 */
export const startAfresh = (snapshots) => loadPython({ _makeSnapshot: snapshots.available });

/**
 * Starts Pyodide: restores a snapshot (this browser's, else the site's where it pays) or starts afresh.
 * @param {SnapshotStore} snapshots
 * @param {Promise<(() => Uint8Array) | null>} opening  snapshots.open(), started early
 * @param {Promise<protocol.InitMessage>} init
 * @returns {Promise<{pyodide: any, restored: protocol.SnapshotSource, fetched: Uint8Array | null}>}
 *   `fetched`: the site's snapshot as it came (packed: packed.js packSparse), for this browser to keep
 */
export async function startInterpreter(snapshots, opening, init) {
  const read = await opening;
  const { siteSnapshot } = await init;
  const budget = protocol.LIMITS.siteSnapshotBudgetMs;
  // pyodide.asm.js has arrived (importScripts): its record is due at once.
  const asmJs = !read && SITE_SNAPSHOT_URL && siteSnapshot === "auto" ? await arrival(ASM_JS_URL, 100) : undefined;
  const pays = !read && SITE_SNAPSHOT_URL && (siteSnapshot === "always" || siteSnapshotPays(asmJs, SITE_SNAPSHOT_SIZE, budget));
  /** @type {protocol.SnapshotSource} */
  const source = read ? "browser" : pays ? "site" : "";
  if (source) {
    try {
      // Kept and served the same way: without their long runs of zeros.
      const packed = read ? read() : await fetchSiteSnapshot(asmJs, budget);
      if (packed) {
        const { snapshot, based } = unpackSparse(packed);
        SnapshotStore.checked(snapshot, based);
        // Based on the memory as instantiated (the site's): put back when it is (early.js),
        // before Pyodide restores it; Pyodide refuses it (magic number) if that never happens.
        beforeRestore(based ? (memory) => rebase(snapshot, based, new Uint8Array(memory.buffer)) : null);
        const pyodide = await loadPython({ _loadSnapshot: snapshot });
        return { pyodide, restored: source, fetched: source === "site" ? packed : null };
      }
    } catch (err) {
      beforeRestore(null);
      console.warn(`pyodide-cells: the ${source === "site" ? "site's" : "kept"} start-up snapshot did not load; starting afresh:`, err);
      if (source === "browser") await snapshots.drop();
    }
  }
  return { pyodide: await startAfresh(snapshots), restored: "", fetched: null };
}

/**
 * Fetches the site's start-up snapshot (packed, as packed.js packSparse writes it) and checks its digest.
 * With `asmJs` (the choice was measured), a response that is not compressed
 * where pyodide.asm.js was is judged again by its whole size, and dropped
 * unread when it would not pay (null: Python starts afresh); and one that has
 * not arrived by three times the budget is given up (it throws), since a
 * fresh start would have been quicker by then.
 * @param {PerformanceResourceTiming | undefined} asmJs
 * @param {number} budget
 * @returns {Promise<Uint8Array | null>}
 */
async function fetchSiteSnapshot(asmJs, budget) {
  const controller = new AbortController();
  const giveUp = asmJs ? setTimeout(() => controller.abort(new Error(`it took over ${3 * budget} ms`)), 3 * budget) : undefined;
  try {
    const response = await fetch(SITE_SNAPSHOT_URL, { signal: controller.signal, integrity: (!OWN_DIGEST && SITE_SNAPSHOT_SRI) || undefined });
    if (!response.ok) throw new Error(`could not load the site's start-up snapshot from ${SITE_SNAPSHOT_URL}: HTTP ${response.status}`);
    if (asmJs && !response.headers.get("Content-Encoding") && !siteSnapshotPays(asmJs, SITE_SNAPSHOT_SIZE, budget, true)) {
      controller.abort();
      return null;
    }
    const packed = new Uint8Array(await response.arrayBuffer());
    if (OWN_DIGEST) await checkIntegrity(packed, SITE_SNAPSHOT_SRI);
    return packed;
  } finally {
    clearTimeout(giveUp);
  }
}

/**
 * Gives cells the worker's real global scope as `js`. A start that can make a
 * snapshot (`_makeSnapshot`) registers `js` as a proxy that records the paths
 * Python takes into it, and the getters of the browser's objects refuse that
 * proxy as `this`: `js.navigator.userAgent` or `js.location.href` raised
 * "TypeError: Illegal invocation". Once the snapshot is taken, `js` is the
 * real thing; modules imported before keep what they took.
 * @param {any} pyodide
 */
export function seeRealGlobals(pyodide) {
  pyodide.registerJsModule("js", self);
  pyodide.runPython("import sys\nsys.modules.pop('js', None)");
}
