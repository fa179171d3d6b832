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
// Why OPFS and not Cache Storage: the snapshot is read with a synchronous
// access handle, one plain file read on the worker's thread (30-70 ms for
// 21 MB). A Cache Storage body arrives in chunks through the thread's event
// loop, which pyodide.asm.js's 100-200 ms of compiling blocks: the same read
// took 300-450 ms on a 2-core machine.

// Pyodide 0.26's snapshot layout: four uint32 (magic, build id, offset of the
// memory, length of a JSON header), the header, then the wasm memory, whole
// 64 KiB pages. A snapshot that is not that shape would make the interpreter
// hang, not fail, so it is refused and Python starts afresh.
const SNAPSHOT_MAGIC = 1886286592;
const WASM_PAGE = 65536;
const MIN_MEMORY = 320 * WASM_PAGE; // pyodide.asm.wasm declares 320 pages; less makes instantiation hang

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
   * Opens the kept snapshot; resolves to a function that reads it whole, or to
   * null when there is none (or no OPFS). A synchronous access handle is
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
   * @throws {Error} naming the size, when they do not
   */
  static checked(bytes) {
    const words = bytes.byteLength >= 16 ? new Uint32Array(bytes.buffer, 0, 4) : null;
    const memory = words ? bytes.byteLength - words[2] : 0;
    if (!words || words[0] !== SNAPSHOT_MAGIC || words[2] < 16 || memory < MIN_MEMORY || memory % WASM_PAGE !== 0) {
      throw new Error(`not a Pyodide memory snapshot (${bytes.byteLength} bytes)`);
    }
    return bytes;
  }

  /** Written under a temporary name, then renamed: a visit never reads half a file. @param {Uint8Array} bytes */
  async store(bytes) {
    try {
      const folder = /** @type {any} */ (await navigator.storage.getDirectory());
      for await (const name of folder.keys()) {
        if (name.startsWith(this.prefix) && name !== this.name) await folder.removeEntry(name); // older builds'
      }
      const partial = await folder.getFileHandle(`${this.name}.partial`, { create: true });
      const handle = await partial.createSyncAccessHandle();
      try {
        handle.truncate(0);
        handle.write(bytes, { at: 0 });
        handle.flush();
      } finally {
        handle.close();
      }
      await partial.move(this.name);
    } catch (err) {
      console.warn("pyodide-cells: could not keep the start-up snapshot:", err);
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
