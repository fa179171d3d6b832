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
// It is kept packed (packSparse below, as the site's travels): about 12 MB of
// the browser's storage rather than 21 (the site's, kept as it came, 8.8 MB),
// and less to write and read.
//
// Why OPFS and not Cache Storage: the snapshot is read with a synchronous
// access handle, one plain file read on the worker's thread (30-70 ms for
// 21 MB unpacked). A Cache Storage body arrives in chunks through the thread's event
// loop, which pyodide.asm.js's 100-200 ms of compiling blocks: the same read
// took 300-450 ms on a 2-core machine.

// Pyodide 0.26's snapshot layout: four uint32 (magic, build id, offset of the
// memory, length of a JSON header), the header, then the wasm memory, whole
// 64 KiB pages. A snapshot that is not that shape would make the interpreter
// hang, not fail, so it is refused and Python starts afresh.
const SNAPSHOT_MAGIC = 1886286592;
const WASM_PAGE = 65536;
const MIN_MEMORY = 320 * WASM_PAGE; // pyodide.asm.wasm declares 320 pages; less makes instantiation hang

// The site's snapshot travels without its long runs of zeros (about 9 of its
// 21 MB: memory Python has not used yet), which cost the browser time to
// decode and pass to the worker even though they compress to nothing. And its
// first 4.6 MB, the interpreter's static data, are 97 % the bytes
// pyodide.asm.wasm's data segment puts there when it is instantiated, which the
// browser has already: they travel XORed with those bytes ("based"), zeros
// where Python changed nothing, and `rebase` puts them back once the memory is
// instantiated (3.1 MB as Brotli before, 2.1 MB after). The format:
// "pcs2", the whole length, how many bytes of the memory are based (0: none),
// the count of kept segments, each segment's offset and length (uint32,
// little-endian), then the segments' bytes.
const SPARSE_MAGIC = 0x32736370; // "pcs2"
const SPARSE_HEADER = 16;
const ZERO_RUN = 65536; // shorter runs of zeros are kept: a segment costs 8 bytes and a copy

/**
 * XORs `source` into `target` (as long as `source`), a 32-bit word at a time where both allow it.
 * @param {Uint8Array} target
 * @param {Uint8Array} source
 */
function xorInto(target, source) {
  const n = source.length;
  let k = 0;
  if (target.byteOffset % 4 === 0 && source.byteOffset % 4 === 0) {
    const t = new Uint32Array(target.buffer, target.byteOffset, n >> 2);
    const s = new Uint32Array(source.buffer, source.byteOffset, n >> 2);
    for (; k < t.length; k++) t[k] ^= s[k];
    k <<= 2;
  }
  for (; k < n; k++) target[k] ^= source[k];
}

/** The snapshot's memory: Pyodide's header says where it starts. @param {Uint8Array} snapshot */
const memoryOf = (snapshot) => snapshot.subarray(new DataView(snapshot.buffer, snapshot.byteOffset).getUint32(8, true));

/**
 * A Pyodide memory snapshot without its runs of at least 64 KiB of zeros (see unpackSparse).
 * @param {Uint8Array} bytes  the snapshot (Pyodide's makeMemorySnapshot)
 * @param {Uint8Array} [instantiated]  the interpreter's memory as WebAssembly instantiated
 *   it, from address 0 to its last non-zero byte (the data segment): the snapshot's memory
 *   travels XORed with it, and with its magic number cleared, so that Pyodide refuses it
 *   until `rebase` has put both back
 * @returns {Uint8Array}
 */
export function packSparse(bytes, instantiated) {
  const based = instantiated ? instantiated.length : 0;
  if (instantiated) {
    bytes = bytes.slice();
    xorInto(memoryOf(bytes), instantiated);
    new DataView(bytes.buffer).setUint32(0, 0, true);
  }
  /** @type {[number, number][]} */
  const segments = [];
  let start = 0;
  // Scanned a 32-bit word at a time (30 ms in all for 21 MB in Node, where by byte it took 55):
  // runs start and end on word boundaries, and the last 0-3 bytes stay in the last segment.
  const src = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const words = new Uint32Array(src.buffer, src.byteOffset, src.length >> 2);
  const runWords = ZERO_RUN / 4;
  let w = 0;
  while (w < words.length) {
    if (words[w] !== 0) {
      w++;
      continue;
    }
    let end = w;
    while (end < words.length && words[end] === 0) end++;
    if (end - w >= runWords) {
      if (4 * w > start) segments.push([start, 4 * w - start]);
      start = 4 * end;
    }
    w = end;
  }
  if (bytes.length > start) segments.push([start, bytes.length - start]);
  const headerBytes = SPARSE_HEADER + 8 * segments.length;
  const out = new Uint8Array(headerBytes + segments.reduce((n, [, length]) => n + length, 0));
  const view = new DataView(out.buffer);
  view.setUint32(0, SPARSE_MAGIC, true);
  view.setUint32(4, bytes.length, true);
  view.setUint32(8, based, true);
  view.setUint32(12, segments.length, true);
  let at = headerBytes;
  segments.forEach(([offset, length], k) => {
    view.setUint32(SPARSE_HEADER + 8 * k, offset, true);
    view.setUint32(SPARSE_HEADER + 4 + 8 * k, length, true);
    out.set(bytes.subarray(offset, offset + length), at);
    at += length;
  });
  return out;
}

/**
 * The snapshot packSparse packed: zeros where it left runs out.
 * @param {Uint8Array} packed
 * @returns {{snapshot: Uint8Array, based: number}}  `based`: how many bytes of its memory
 *   are still XORed with the memory as instantiated (0: none; see rebase)
 * @throws {Error} when `packed` is not in that format or is cut short
 */
export function unpackSparse(packed) {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  if (packed.byteLength < SPARSE_HEADER || view.getUint32(0, true) !== SPARSE_MAGIC) throw new Error(`not a packed snapshot (${packed.byteLength} bytes)`);
  const snapshot = new Uint8Array(view.getUint32(4, true));
  const based = view.getUint32(8, true);
  const count = view.getUint32(12, true);
  let at = SPARSE_HEADER + 8 * count;
  for (let k = 0; k < count; k++) {
    const offset = view.getUint32(SPARSE_HEADER + 8 * k, true);
    const length = view.getUint32(SPARSE_HEADER + 4 + 8 * k, true);
    if (at + length > packed.byteLength || offset + length > snapshot.length) throw new Error(`packed snapshot cut short (${packed.byteLength} bytes)`);
    snapshot.set(packed.subarray(at, at + length), offset);
    at += length;
  }
  return { snapshot, based };
}

/**
 * Puts back what packSparse based on the memory as instantiated, in place:
 * called with the interpreter's memory right after WebAssembly instantiated it
 * (the worker's instantiateStreaming), before Pyodide restores the snapshot.
 * @param {Uint8Array} snapshot  as unpackSparse gave it
 * @param {number} based  as unpackSparse gave it
 * @param {Uint8Array} memory  the new instance's memory, nothing written into it yet
 * @throws {Error} when the memory is shorter than what is based on it
 */
export function rebase(snapshot, based, memory) {
  if (memory.length < based) throw new Error(`the snapshot is based on ${based} bytes of memory; the interpreter has ${memory.length}`);
  xorInto(memoryOf(snapshot), memory.subarray(0, based));
  new DataView(snapshot.buffer, snapshot.byteOffset).setUint32(0, SNAPSHOT_MAGIC, true);
}

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
    this.available = Boolean(this.name && self.navigator?.storage?.getDirectory && file?.prototype.createSyncAccessHandle);
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
      const handle = await partial.createSyncAccessHandle();
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
   * tab is still writing stays, since its open access handle makes removing it fail.
   */
  async sweep() {
    try {
      const folder = /** @type {any} */ (await navigator.storage.getDirectory()); // keys(): not in TypeScript's DOM types
      const names = [];
      for await (const name of folder.keys()) names.push(name);
      for (const name of names) {
        const older = name.startsWith(this.prefix) && !name.startsWith(this.name);
        const unfinished = name.startsWith(`${this.name}.`) && name.endsWith(".partial");
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
