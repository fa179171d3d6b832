// The site's start-up snapshot: its sparse packing, and the worker's choice to fetch it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { packSparse, rebase, unpackSparse } from "../../src/pyodide_cells/js/worker/startup/packed.js";
import { checkIntegrity, siteSnapshotPays, SnapshotStore, STORE_SLICE, SWEEP_AFTER_MS } from "../../src/pyodide_cells/js/worker/startup/snapshot.js";

const KIB = 1024;

/** Bytes with a long run of zeros in the middle and at the end, a short run kept, and data at both edges. */
function memoryLike() {
  const bytes = new Uint8Array(400 * KIB);
  for (let i = 0; i < 100 * KIB; i++) bytes[i] = (i * 7 + 3) % 251 || 1;
  // 100..110 KiB: 10 KiB of zeros, shorter than a run worth leaving out
  for (let i = 110 * KIB; i < 150 * KIB; i++) bytes[i] = i % 13;
  // 150..300 KiB: zeros (150 KiB, left out), then data, then zeros to the end (left out)
  bytes.fill(9, 300 * KIB, 320 * KIB);
  return bytes;
}

test("packSparse leaves out runs of 64 KiB of zeros and unpackSparse puts every byte back", () => {
  const bytes = memoryLike();
  const packed = packSparse(bytes);
  assert.ok(packed.length < bytes.length - 200 * KIB, `packed ${packed.length} of ${bytes.length}`);
  assert.deepEqual(unpackSparse(packed), { snapshot: bytes, based: 0 });
});

test("a memory with no zeros, and one of zeros only, round-trip", () => {
  const full = new Uint8Array(70 * KIB).fill(5);
  assert.deepEqual(unpackSparse(packSparse(full)).snapshot, full);
  const empty = new Uint8Array(320 * KIB);
  const packed = packSparse(empty);
  assert.equal(packed.length, 16); // the header alone: no segment kept
  assert.deepEqual(unpackSparse(packed).snapshot, empty);
});

test("unpackSparse refuses bytes that are not a packed snapshot, or are cut short", () => {
  assert.throws(() => unpackSparse(new Uint8Array(16)), /not a packed snapshot \(16 bytes\)/);
  const packed = packSparse(memoryLike());
  assert.throws(() => unpackSparse(packed.subarray(0, packed.length - 1)), /cut short/);
});

const PYODIDE_MAGIC = 1886286592;

/**
 * A Pyodide-shaped snapshot (magic, build id, where the memory starts, header length; the memory)
 * and the memory as instantiated: a data segment at 1 KiB, of which the snapshot changed a few
 * bytes, then the heap Python filled, then zeros.
 * @param {number} memoryBytes
 */
function pyodideLike(memoryBytes) {
  const offset = 24;
  const snapshot = new Uint8Array(offset + memoryBytes);
  new Uint32Array(snapshot.buffer, 0, 4).set([PYODIDE_MAGIC, 7, offset, 2]);
  const instantiated = new Uint8Array(1024 + 150 * KIB);
  for (let i = 1024; i < instantiated.length; i++) instantiated[i] = (i * 31 + 5) % 241 || 3;
  const memory = snapshot.subarray(offset);
  memory.set(instantiated);
  for (let i = 2048; i < instantiated.length; i += 4099) memory[i] ^= 0x5a; // a few statics changed
  for (let i = instantiated.length; i < instantiated.length + 100 * KIB; i++) memory[i] = (i * 13) % 256; // the heap
  return { snapshot, instantiated };
}

test("packSparse based on the memory as instantiated sends only what changed, and rebase puts it back", () => {
  const { snapshot, instantiated } = pyodideLike(400 * KIB);
  const plain = packSparse(snapshot);
  const packed = packSparse(snapshot, instantiated);
  // Same length (the XOR keeps the bytes), but the static data is zeros where unchanged: it compresses to nothing.
  assert.equal(packed.length, plain.length);
  const zeros = (bytes) => bytes.reduce((n, b) => n + (b === 0), 0);
  assert.ok(zeros(packed) - zeros(plain) > 140 * KIB, `${zeros(packed)} zeros, ${zeros(plain)} unbased`);
  assert.equal(new Uint32Array(snapshot.buffer, 0, 1)[0], PYODIDE_MAGIC, "packing changed the caller's snapshot");
  const { snapshot: unpacked, based } = unpackSparse(packed);
  assert.equal(based, instantiated.length);
  // Until rebased, Pyodide's magic number is cleared (Pyodide refuses to restore it) and the statics are not the snapshot's.
  assert.equal(new Uint32Array(unpacked.buffer, 0, 1)[0], 0);
  assert.notDeepEqual(unpacked, snapshot);
  // The new instance's memory: the data segment, zeros after.
  const memory = new Uint8Array(400 * KIB);
  memory.set(instantiated);
  rebase(unpacked, based, memory);
  assert.deepEqual(unpacked, snapshot);
  assert.throws(() => rebase(unpackSparse(packed).snapshot, based, memory.subarray(0, based - 1)), /based on 154624 bytes of memory; the interpreter has 154623/);
});

test("SnapshotStore.checked: a based snapshot has its magic number cleared, an unbased one has it", () => {
  const { snapshot, instantiated } = pyodideLike(320 * 64 * KIB);
  assert.equal(SnapshotStore.checked(snapshot), snapshot);
  assert.throws(() => SnapshotStore.checked(snapshot, instantiated.length), /not a Pyodide memory snapshot/);
  const { snapshot: based, based: length } = unpackSparse(packSparse(snapshot, instantiated));
  assert.equal(SnapshotStore.checked(based, length), based);
  assert.throws(() => SnapshotStore.checked(based), /not a Pyodide memory snapshot/);
  assert.throws(() => SnapshotStore.checked(based, based.length), /not a Pyodide memory snapshot/); // based on more than its memory
});

test("siteSnapshotPays: one round trip plus the snapshot at the measured file's rate, within the budget", () => {
  // 1.2 MB decoded from first to last byte in 10 ms, 1 ms to the first byte: 12 MB take 1 + 100 ms.
  const file = { requestStart: 50, responseStart: 51, responseEnd: 61, encodedBodySize: 1_200_000, decodedBodySize: 1_200_000 };
  assert.equal(siteSnapshotPays(file, 12_000_000, 101), true);
  assert.equal(siteSnapshotPays(file, 12_000_000, 100), false);
  // The same file over a 20 ms round trip and ten times slower: no.
  assert.equal(siteSnapshotPays({ requestStart: 50, responseStart: 70, responseEnd: 170, encodedBodySize: 1_200_000, decodedBodySize: 1_200_000 },
    12_000_000, 400), false);
});

test("siteSnapshotPays, asked again for a snapshot sent as it is: per byte on the wire, where the file came compressed", () => {
  // pyodide.asm.js came as 200 kB of Brotli (1.2 MB decoded) in 10 ms: 12 MB decoded at that rate take 100 ms,
  // but 12 MB on the wire take 600 ms.
  const file = { requestStart: 50, responseStart: 51, responseEnd: 61, encodedBodySize: 200_000, decodedBodySize: 1_200_000 };
  assert.equal(siteSnapshotPays(file, 12_000_000, 400), true);
  assert.equal(siteSnapshotPays(file, 12_000_000, 400, true), false);
  assert.equal(siteSnapshotPays(file, 12_000_000, 601, true), true);
  // A host that compresses nothing: the file's rate per byte is its rate on the wire already.
  const plain = { ...file, encodedBodySize: 1_200_000 };
  assert.equal(siteSnapshotPays(plain, 12_000_000, 400, true), siteSnapshotPays(plain, 12_000_000, 400));
});

test("siteSnapshotPays: nothing measured, or nothing to fetch, means no", () => {
  assert.equal(siteSnapshotPays(undefined, 12_000_000, 400), false);
  assert.equal(siteSnapshotPays({ requestStart: 0, responseStart: 0, responseEnd: 0, encodedBodySize: 0, decodedBodySize: 0 }, 12_000_000, 400), false);
  assert.equal(siteSnapshotPays({ requestStart: 1, responseStart: 2, responseEnd: 3, encodedBodySize: 1000, decodedBodySize: 1000 }, 0, 400), false);
});

/** A fake origin private file system holding one folder of files, for SnapshotStore in Node. */
function fakeOPFS() {
  /** @type {Map<string, Uint8Array>} */
  const files = new Map();
  const events = [];
  /** @type {Set<string>} files with an open access handle: OPFS refuses to remove them */
  const locked = new Set();
  /** @type {Map<string, number>} when a file was made (Date.now()); those set directly are old */
  const made = new Map();
  /** @type {string[]} the names whose next createSyncAccessHandle is refused, as while another tab holds their lock */
  const busy = [];
  const fileHandle = (name) => ({
    async getFile() { return { lastModified: made.get(name) ?? 0 }; },
    async createSyncAccessHandle() {
      const refused = busy.findIndex((prefix) => name.startsWith(prefix));
      if (refused >= 0) {
        busy.splice(refused, 1);
        throw new DOMException("Access Handles cannot be created if there is another open Access Handle", "NoModificationAllowedError");
      }
      events.push("open");
      locked.add(name);
      let data = files.get(name) || new Uint8Array(0);
      return {
        truncate(size) { data = data.slice(0, size); },
        write(slice, { at }) {
          const grown = new Uint8Array(Math.max(data.length, at + slice.length));
          grown.set(data);
          grown.set(slice, at);
          data = grown;
          events.push(`write ${at}`);
        },
        flush() { files.set(name, data); },
        close() { files.set(name, data); locked.delete(name); },
      };
    },
    async move(newName) { files.set(newName, files.get(name)); files.delete(name); },
  });
  const folder = {
    async *keys() { yield* [...files.keys()]; },
    async getFileHandle(name, { create = false } = {}) {
      if (!files.has(name) && !create) throw new DOMException("not found", "NotFoundError");
      if (!files.has(name)) {
        files.set(name, new Uint8Array(0));
        made.set(name, Date.now());
      }
      return fileHandle(name);
    },
    async removeEntry(name) {
      if (locked.has(name)) throw new DOMException("locked", "NoModificationAllowedError");
      if (!files.delete(name)) throw new DOMException("not found", "NotFoundError");
    },
  };
  return { files, events, folder, locked, made, busy };
}

/**
 * Runs `body` with `folder` as the origin private file system of a worker (`navigator`, `self`),
 * as SnapshotStore finds it, and puts Node's globals back after.
 * @param {object} folder  fakeOPFS's folder
 * @param {() => Promise<void>} body
 */
async function inWorkerWith(folder, body) {
  const navigator = { storage: { getDirectory: async () => folder } };
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: navigator, configurable: true, writable: true });
  globalThis.self = /** @type {any} */ ({ navigator, FileSystemFileHandle: { prototype: { createSyncAccessHandle() {} } } });
  try {
    await body();
  } finally {
    delete globalThis.self;
    if (saved) Object.defineProperty(globalThis, "navigator", saved);
    else delete globalThis.navigator;
  }
}

test("SnapshotStore.store packs once the file is open, writes a slice at a time, and a request is answered between slices", async () => {
  const { files, events, folder } = fakeOPFS();
  await inWorkerWith(folder, async () => {
    const store = new SnapshotStore("http://127.0.0.1:8000/_static/pyodide_cells/", "0123456789abcdef");
    assert.equal(store.available, true);
    const bytes = new Uint8Array(3 * STORE_SLICE + 5).map((_, i) => i % 253);
    // Packed only once the file is open: what OPFS's round trips take first, a request can use.
    const storing = store.store(() => (events.push("pack"), bytes));
    setTimeout(() => events.push("request"), 0); // a learner's run, posted while the snapshot is kept
    await storing;
    assert.deepEqual(events.filter((e) => e !== "request"), ["open", "pack", ...[0, 1, 2, 3].map((k) => `write ${k * STORE_SLICE}`)]);
    assert.ok(events.indexOf("request") < events.length - 1, `the request waited for the whole file: ${events}`);
    assert.deepEqual([...files.keys()], [store.name]); // renamed from its partial name once whole
    assert.deepEqual(files.get(store.name), bytes);
  });
});

test("packSparse on memory that does not start on a 4-byte boundary, or whose length is not a multiple of 4", () => {
  const memory = memoryLike();
  for (const [from, to] of [[1, memory.length], [0, memory.length - 3], [3, memory.length - 1]]) {
    const view = memory.subarray(from, to);
    const packed = packSparse(view);
    assert.ok(packed.length < view.length / 2);
    assert.deepEqual(unpackSparse(packed).snapshot, view);
  }
});

test("SnapshotStore sweeps older builds' snapshots and the partial files of writes that never finished, not a live tab's", async () => {
  const { files, folder, locked } = fakeOPFS();
  await inWorkerWith(folder, async () => {
    const store = new SnapshotStore("http://127.0.0.1:8000/_static/pyodide_cells/", "0123456789abcdef");
    const other = new SnapshotStore("http://127.0.0.1:8000/other/_static/pyodide_cells/", "0123456789abcdef");
    const kept = new Uint8Array([1, 2, 3]);
    files.set(store.name, kept); // this build's, kept by an earlier visit
    files.set(`${store.prefix}fedcba9876543210.bin`, new Uint8Array(9)); // an older build's
    files.set(`${store.name}.dead0001.partial`, new Uint8Array(5)); // a tab closed while it wrote
    files.set(`${store.name}.live0002.partial`, new Uint8Array(5)); // a tab writing now
    locked.add(`${store.name}.live0002.partial`);
    files.set(other.name, new Uint8Array(4)); // another copy of the guide on this origin
    files.set("unrelated.txt", new Uint8Array(1));
    await store.sweep();
    assert.deepEqual([...files.keys()].sort(), [store.name, `${store.name}.live0002.partial`, other.name, "unrelated.txt"].sort());
    assert.deepEqual(files.get(store.name), kept);
    // A write sweeps first: the dead tab's partial file does not outlive the next snapshot kept.
    files.set(`${store.name}.dead0003.partial`, new Uint8Array(5));
    files.delete(store.name);
    await store.store(new Uint8Array([7, 7]));
    assert.deepEqual([...files.keys()].sort(), [store.name, `${store.name}.live0002.partial`, other.name, "unrelated.txt"].sort());
    assert.deepEqual(files.get(store.name), new Uint8Array([7, 7]));
  });
});

test("checkIntegrity accepts the bytes whose SHA-256 the value gives, and names both digests otherwise", async () => {
  const bytes = memoryLike();
  // The value as assets.py writes it, computed by another implementation (Node's, not WebCrypto's).
  const integrity = `sha256-${createHash("sha256").update(bytes).digest("base64")}`;
  await checkIntegrity(bytes, integrity);
  await checkIntegrity(bytes, ""); // nothing to check
  const damaged = bytes.slice();
  damaged[200 * KIB] ^= 0xff;
  const other = `sha256-${createHash("sha256").update(damaged).digest("base64")}`;
  await assert.rejects(checkIntegrity(damaged, integrity), (err) => {
    assert.ok(err.message.includes(`its SHA-256 is ${other}`), err.message);
    assert.ok(err.message.includes(`where the site's is ${integrity}`), err.message);
    return true;
  });
});

test("checkIntegrity refuses a value it cannot read, and says when there is no crypto.subtle to check with", async () => {
  const bytes = new Uint8Array([1, 2, 3]);
  await assert.rejects(checkIntegrity(bytes, "sha384-abc"), /unexpected integrity value "sha384-abc": expected sha256-/);
  const integrity = `sha256-${createHash("sha256").update(bytes).digest("base64")}`;
  await assert.rejects(checkIntegrity(bytes, integrity, null), /no crypto.subtle here/);
});

test("Two tabs keeping their snapshots at once: a partial file just made is not swept, and a refused access handle is asked for again", async () => {
  // Seen under load: one tab's sweep removed (and so locked) the other's partial file between its
  // creation and its open, and the other warned "could not keep the start-up snapshot".
  const { files, folder, made, busy } = fakeOPFS();
  await inWorkerWith(folder, async () => {
    const store = new SnapshotStore("http://127.0.0.1:8000/_static/pyodide_cells/", "0123456789abcdef");
    const young = `${store.name}.young001.partial`;
    files.set(young, new Uint8Array(5));
    made.set(young, Date.now()); // another tab made it a moment ago, and has not opened it yet
    await store.sweep();
    assert.ok(files.has(young), "the other tab's write just begun was swept");
    made.set(young, Date.now() - SWEEP_AFTER_MS - 1); // a tab that closed while it wrote, a while ago
    await store.sweep();
    assert.ok(!files.has(young));

    const warnings = [];
    const warn = console.warn;
    console.warn = (...args) => warnings.push(args.join(" "));
    try {
      busy.push(`${store.name}.`, `${store.name}.`); // its partial file's lock is held, twice
      await store.store(new Uint8Array([4, 2]));
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(warnings, []);
    assert.deepEqual(files.get(store.name), new Uint8Array([4, 2]));
  });
});
