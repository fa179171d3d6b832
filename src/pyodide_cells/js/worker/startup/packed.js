// @ts-check
// Pyodide 0.26's memory snapshot, and the packed form in which the site's
// travels and this browser keeps its own (packSparse, unpackSparse, rebase).
// Pure functions of bytes: the worker (interpreter.js, index.js), the build
// (make_snapshot.mjs) and node's tests (tests/js/snapshot.test.mjs) use them.

// Pyodide 0.26's snapshot layout: four uint32 (magic, build id, offset of the
// memory, length of a JSON header), the header, then the wasm memory, whole
// 64 KiB pages. A snapshot that is not that shape would make the interpreter
// hang, not fail, so it is refused and Python starts afresh.
export const SNAPSHOT_MAGIC = 1886286592;
export const WASM_PAGE = 65536;
export const MIN_MEMORY = 320 * WASM_PAGE; // pyodide.asm.wasm declares 320 pages; less makes instantiation hang

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
