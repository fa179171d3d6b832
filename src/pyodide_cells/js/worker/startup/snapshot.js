// @ts-check
// The start-up snapshot store of the worker: a memory snapshot of the
// interpreter right after start-up (runner and labs imported, no cell run
// yet), kept in the origin private file system (OPFS), so that a second visit
// restores it instead of starting CPython again. Pyodide 0.26 calls this API
// experimental (loadPyodide's _makeSnapshot / _loadSnapshot), so every failure
// falls back to a normal start. Its name carries a key that changes with the
// interpreter, the standard library, the worker, the runner and the wheel
// (assets.snapshot_inputs).
//
// It is kept packed (packed.js packSparse, as the site's travels): about 12 MB of
// the browser's storage rather than 21 (the site's, kept as it came, 8.8 MB),
// and less to write and read.
//
// Why OPFS and not Cache Storage: the snapshot is read with a synchronous
// access handle, one plain file read on the worker's thread (30-70 ms for
// 21 MB unpacked). A Cache Storage body arrives in chunks through the thread's event
// loop, which pyodide.asm.js's 100-200 ms of compiling blocks: the same read
// took 300-450 ms on a 2-core machine.

import { MIN_MEMORY, SNAPSHOT_MAGIC, WASM_PAGE } from "./packed.js";

/**
 * Whether the site's start-up snapshot (made at build time, `bytes` long)
 * should arrive within `budgetMs` (limits.json `siteSnapshotBudgetMs`, under
 * what restoring saves over starting CPython), judged by how a file the worker
 * just loaded from the same server arrived: one round trip (request to first
 * byte) plus the snapshot's bytes at that file's rate (first to last byte, per
 * byte once decoded; the file, pyodide.asm.js, compresses about as well).
 * Files that travel beside it share the link, so the rate is if anything too
 * low: a slow or unmeasured link fetches nothing more and starts afresh.
 *
 * Asked again with `sentAsIs` once the snapshot's response says it is not
 * compressed (a host that compresses scripts but not `.bin` files) while the
 * file was: then every byte travels, timed per byte as the file travelled.
 * @param {{requestStart: number, responseStart: number, responseEnd: number, encodedBodySize: number,
 *   decodedBodySize: number} | undefined} file  the file's resource timing entry
 * @param {number} bytes  the snapshot's size
 * @param {number} budgetMs
 * @param {boolean} [sentAsIs]
 */
export function siteSnapshotPays(file, bytes, budgetMs, sentAsIs = false) {
  if (!file || !(bytes > 0) || !(file.responseEnd > 0) || !(file.decodedBodySize > 0)) return false;
  const roundTrip = Math.max(0, file.responseStart - file.requestStart);
  const compressed = file.encodedBodySize > 0 && file.encodedBodySize < file.decodedBodySize;
  const perBytes = sentAsIs && compressed ? file.encodedBodySize : file.decodedBodySize;
  const msPerByte = Math.max(0, file.responseEnd - file.responseStart) / perBytes;
  return roundTrip + bytes * msPerByte <= budgetMs;
}

/**
 * Checks `bytes` against a Subresource Integrity value, `sha256-<base64>`
 * (assets.py gives the site's snapshot one), with the worker's own digest
 * rather than fetch's `integrity` option: where that refuses a body, Chromium
 * logs two errors to the console and the fetch fails as "Failed to fetch",
 * even for a 404, which then never says so.
 * @param {Uint8Array<ArrayBuffer>} bytes
 * @param {string} integrity  "" when there is nothing to check
 * @param {SubtleCrypto | null} [subtle]  crypto.subtle (a secure context's; null where there is none)
 * @returns {Promise<void>}
 * @throws {Error} naming both digests when they differ, or the value when it is not sha256-<base64>
 */
export async function checkIntegrity(bytes, integrity, subtle = globalThis.crypto?.subtle) {
  if (!integrity) return;
  const match = /^sha256-([A-Za-z0-9+/]{43}=)$/.exec(integrity);
  if (!match) throw new Error(`unexpected integrity value ${JSON.stringify(integrity)}: expected sha256- and 44 characters of base64`);
  if (!subtle) throw new Error("no crypto.subtle here (not a secure context) to check the SHA-256 with");
  const digest = new Uint8Array(await subtle.digest("SHA-256", bytes));
  const actual = btoa(String.fromCharCode(...digest));
  if (actual !== match[1]) throw new Error(`its SHA-256 is sha256-${actual}, where the site's is ${integrity}: damaged on the way`);
}

/** Bytes written to OPFS between two turns of the worker's event loop (SnapshotStore.store). */
export const STORE_SLICE = 1 << 20;

/** A partial file younger than this may be a write another tab has just begun. */
export const SWEEP_AFTER_MS = 60_000;

/**
 * Whether a partial file is a write no tab will finish: older than SWEEP_AFTER_MS (one
 * that cannot be read counts as live).
 * @param {any} folder @param {string} name
 */
async function abandoned(folder, name) {
  try {
    const file = await (await folder.getFileHandle(name)).getFile();
    return Date.now() - file.lastModified > SWEEP_AFTER_MS;
  } catch {
    return false;
  }
}

/**
 * The file's access handle. OPFS refuses one (NoModificationAllowedError) while another
 * operation holds the file's lock for a moment (another tab's sweep or move): tried again
 * a few times before the error counts.
 * @param {any} file  a FileSystemFileHandle
 */
async function accessHandle(file) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await file.createSyncAccessHandle();
    } catch (err) {
      if (attempt >= 5 || /** @type {any} */ (err)?.name !== "NoModificationAllowedError") throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

export class SnapshotStore {
  /**
   * One file at the top of OPFS, named after the site's folder and the key:
   * each copy of the guide on an origin keeps its own, and opening it takes
   * only three round trips to the browser (20-60 ms each on a busy 2-core machine).
   * @param {string} siteURL  the folder of the worker script
   * @param {string} key  the snapshot key compiled into the worker ("" = no snapshots)
   */
  constructor(siteURL, key) {
    const folder = siteURL.replace(/[^A-Za-z0-9.-]/g, "_").slice(-180);
    this.prefix = `pyodide-cells-snapshot-${folder}-`;
    this.name = key ? `${this.prefix}${key}.bin` : "";
    const file = /** @type {any} */ (self).FileSystemFileHandle;
    this.available = Boolean(this.name && /** @type {Partial<StorageManager> | undefined} OPFS is newer than storage */ (self.navigator?.storage)?.getDirectory && file?.prototype.createSyncAccessHandle);
  }

  /**
   * Opens the kept snapshot; resolves to a function that reads it whole (packed:
   * unpackSparse gives the snapshot), or to null when there is none (or no OPFS). A synchronous access handle is
   * exclusive: while another tab of the guide reads the file with one, this
   * one reads it the slower, shared way.
   * @returns {Promise<(() => Uint8Array) | null>}
   */
  async open() {
    if (!this.available) return null;
    /** @type {any} */
    let file;
    try {
      file = await (await navigator.storage.getDirectory()).getFileHandle(this.name);
    } catch {
      return null; // none kept yet
    }
    try {
      const handle = await file.createSyncAccessHandle();
      return () => {
        try {
          const bytes = new Uint8Array(handle.getSize());
          handle.read(bytes, { at: 0 });
          return bytes;
        } finally {
          handle.close();
        }
      };
    } catch {
      try {
        const bytes = new Uint8Array(await (await file.getFile()).arrayBuffer());
        return () => bytes;
      } catch {
        return null;
      }
    }
  }

  /**
   * `bytes` if they have the shape of a Pyodide 0.26 memory snapshot.
   * @param {Uint8Array} bytes
   * @param {number} [based]  as unpackSparse gave it: the magic number is cleared until rebase
   * @throws {Error} naming the size, when they do not
   */
  static checked(bytes, based = 0) {
    const words = bytes.byteLength >= 16 ? new Uint32Array(bytes.buffer, 0, 4) : null;
    const memory = words ? bytes.byteLength - words[2] : 0;
    if (!words || words[0] !== (based ? 0 : SNAPSHOT_MAGIC) || words[2] < 16 || memory < MIN_MEMORY || memory % WASM_PAGE !== 0 || based > memory) {
      throw new Error(`not a Pyodide memory snapshot (${bytes.byteLength} bytes)`);
    }
    return bytes;
  }

  /**
   * Written under a temporary name of this tab's own, then renamed: a visit
   * never reads half a file, and two tabs that start together do not write
   * into one file. If the other tab's copy is in place first, this one is dropped.
   * @param {Uint8Array | (() => Uint8Array)} content  the bytes, or what makes them: called
   *   only once the file is open, so that a request that came meanwhile is answered first
   */
  async store(content) {
    /** @type {any} */
    let folder = null;
    const partialName = `${this.name}.${Math.random().toString(36).slice(2, 10)}.partial`;
    try {
      folder = await navigator.storage.getDirectory();
      await this.sweep();
      const partial = await folder.getFileHandle(partialName, { create: true });
      const handle = await accessHandle(partial);
      try {
        handle.truncate(0);
        const bytes = typeof content === "function" ? content() : content;
        // A slice at a time, the worker free between slices: writing 21 MB took
        // 220 ms at once, and a learner's run that came meanwhile waited for all of it.
        for (let at = 0; at < bytes.byteLength; at += STORE_SLICE) {
          handle.write(bytes.subarray(at, at + STORE_SLICE), { at });
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
        handle.flush();
      } finally {
        handle.close();
      }
      await partial.move(this.name);
    } catch (err) {
      if (folder && (await this.kept(folder))) await folder.removeEntry(partialName).catch(() => {});
      else console.warn("pyodide-cells: could not keep the start-up snapshot:", err);
    }
  }

  /**
   * Removes what is of no more use: older builds' snapshots, and the partial
   * files of writes that never finished (a tab closed while it kept its
   * snapshot: 12 MB of the learner's storage each). A partial file that a live
   * tab is still writing stays: its open access handle makes removing it fail, and
   * one younger than SWEEP_AFTER_MS is left alone (another tab may have just made it,
   * and not opened it yet: removing it then took the lock its open needed).
   */
  async sweep() {
    try {
      const folder = /** @type {any} */ (await navigator.storage.getDirectory()); // keys(): not in TypeScript's DOM types
      const names = [];
      for await (const name of folder.keys()) names.push(name);
      for (const name of names) {
        const older = name.startsWith(this.prefix) && !name.startsWith(this.name);
        const unfinished = name.startsWith(`${this.name}.`) && name.endsWith(".partial") && (await abandoned(folder, name));
        if (older || unfinished) await folder.removeEntry(name).catch(() => {});
      }
    } catch {
      /* nothing to sweep */
    }
  }

  /** Whether the snapshot is in place (another tab kept it). @param {any} folder */
  async kept(folder) {
    try {
      await folder.getFileHandle(this.name);
      return true;
    } catch {
      return false;
    }
  }

  async drop() {
    try {
      await (await navigator.storage.getDirectory()).removeEntry(this.name);
    } catch {
      /* nothing to drop */
    }
  }
}
