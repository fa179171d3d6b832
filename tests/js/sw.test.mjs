// The service worker (sw.js), run in a context of its own with fake caches and a fake network:
// it answers and keeps the guide's files only, passes every other request by, and removes itself;
// it takes the page's messages as the protocol builds them, and nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { buildSync } from "esbuild";
import * as protocol from "../../src/pyodide_cells/js/protocol.js";

// Bundled as publish.py bundles it (it imports the protocol), with its constants left as globals.
const SOURCE = buildSync({
  entryPoints: [fileURLToPath(new URL("../../src/pyodide_cells/js/offline/sw.js", import.meta.url))],
  bundle: true,
  format: "iife",
  target: "es2020",
  write: false,
  logLevel: "warning",
}).outputFiles[0].text;
const ORIGIN = "http://127.0.0.1:8000";
const FILES = ["index.html", "micrograd.html", "deeper/index.html", "_static/pyodide/pyodide.asm.wasm"];

class FakeCache {
  constructor() {
    /** @type {Map<string, Response>} */
    this.entries = new Map();
  }
  /** @param {Request | string} request @param {{ignoreSearch?: boolean}} [options] */
  async match(request, options) {
    const url = new URL(typeof request === "string" ? request : request.url);
    if (options?.ignoreSearch) url.search = "";
    return this.entries.get(url.href)?.clone();
  }
  /** @param {Request | string} request @param {Response} response */
  async put(request, response) {
    this.entries.set(typeof request === "string" ? request : request.url, response);
  }
  /** @param {Request[]} requests */
  async addAll(requests) {
    for (const request of requests) await this.put(request, await this.network(request));
  }
}

/** sw.js loaded as the browser would, its handlers caught; `network` records what went out. */
async function worker({ base = `${ORIGIN}/` } = {}) {
  /** @type {Record<string, Function>} */
  const handlers = {};
  /** @type {Map<string, FakeCache>} */
  const stores = new Map();
  const network = [];
  let unregistered = false;
  let skippedWaiting = 0;
  const fetch = async (/** @type {Request | {url: string}} */ request) => {
    network.push(request.url);
    const response = new Response(`network: ${new URL(request.url).pathname}`, { status: 200, headers: { "Content-Type": "text/html" } });
    Object.defineProperty(response, "type", { value: "basic" });
    return response;
  };
  const caches = {
    async open(/** @type {string} */ name) {
      if (!stores.has(name)) stores.set(name, Object.assign(new FakeCache(), { network: fetch }));
      return stores.get(name);
    },
    async keys() {
      return [...stores.keys()];
    },
    async delete(/** @type {string} */ name) {
      return stores.delete(name);
    },
  };
  const self = {
    location: new URL("sw.js", base),
    addEventListener: (/** @type {string} */ type, /** @type {Function} */ fn) => (handlers[type] = fn),
    registration: { unregister: async () => (unregistered = true) },
    clients: { claim: async () => {} },
    skipWaiting: () => (skippedWaiting += 1),
  };
  const context = vm.createContext({
    self, caches, fetch, URL, Request, Response, Headers, console,
    SW_VERSION: "v1", SW_FILES: FILES, SW_HEADERS: { "Cross-Origin-Embedder-Policy": "require-corp" },
  });
  vm.runInContext(SOURCE, context);
  const install = [];
  handlers.install({ waitUntil: (/** @type {Promise<unknown>} */ p) => install.push(p) });
  await Promise.all(install);
  network.length = 0;
  /** The worker's answer to a GET of `path`, or null when it lets the request go by. */
  const get = async (/** @type {string} */ path, mode = "cors") => {
    let answer = null;
    handlers.fetch({ request: { url: new URL(path, ORIGIN).href, method: "GET", mode }, respondWith: (/** @type {Promise<Response>} */ p) => (answer = p) });
    return answer && (await answer);
  };
  /** What the worker posts back to a page that sends it `data`. */
  const message = (/** @type {unknown} */ data) => {
    const answers = [];
    handlers.message({ data, source: { postMessage: (/** @type {unknown} */ answer) => answers.push(answer) } });
    return answers;
  };
  return {
    get, message, network, stores, unregistered: () => unregistered, skippedWaiting: () => skippedWaiting,
    keys: () => [...stores.values()].flatMap((s) => [...s.entries.keys()]),
  };
}

test("the guide's files are answered from the cache, with the isolation headers, whatever their ?v=", async () => {
  const sw = await worker();
  const wasm = await sw.get("/_static/pyodide/pyodide.asm.wasm?v=123");
  assert.equal(await wasm?.text(), "network: /_static/pyodide/pyodide.asm.wasm"); // the copy kept at install
  assert.equal(wasm?.headers.get("Cross-Origin-Embedder-Policy"), "require-corp");
  for (const [path, file] of [["/", "/index.html"], ["/micrograd", "/micrograd.html"], ["/deeper/", "/deeper/index.html"], ["/micrograd.html?highlight=x", "/micrograd.html"]]) {
    assert.equal(await (await sw.get(path, "navigate"))?.text(), `network: ${file}`, path);
  }
  assert.deepEqual(sw.network, []);
});

test("any other request on the same origin goes to the network untouched and is never kept", async () => {
  const sw = await worker();
  const before = sw.keys().sort();
  for (const [path, mode] of [["/api/items", "cors"], ["/app.js", "no-cors"], ["/admin", "navigate"], ["/other/", "navigate"],
    ["/micrograd", "cors"], ["/_static/pyodide_cells/startup-0123abcd.bin", "cors"], ["/index.htmlx", "navigate"]]) {
    assert.equal(await sw.get(path, mode), null, path); // no respondWith: the browser fetches it as without a worker
  }
  assert.deepEqual(sw.keys().sort(), before);
});

test("a file of the guide the cache lost is fetched and kept under its own address, without the query", async () => {
  const sw = await worker();
  const [cache] = sw.stores.values();
  cache.entries.delete(`${ORIGIN}/micrograd.html`);
  assert.equal(await (await sw.get("/micrograd?highlight=loss", "navigate"))?.text(), "network: /micrograd");
  assert.deepEqual(sw.network, [`${ORIGIN}/micrograd?highlight=loss`]);
  assert.ok(cache.entries.has(`${ORIGIN}/micrograd.html`));
  assert.deepEqual([...cache.entries.keys()].filter((k) => k.includes("?")), []);
});

test("?unregister-sw removes the worker and every cache of the guide, and says so", async () => {
  const sw = await worker();
  const page = await sw.get("/anything/at/all?unregister-sw", "navigate");
  assert.match((await page?.text()) ?? "", /offline copy is removed/);
  assert.equal(page?.headers.get("Cache-Control"), "no-store");
  assert.ok(sw.unregistered());
  assert.deepEqual([...sw.stores.keys()], []);
  assert.deepEqual(sw.network, []);
});

test("under a project's folder (GitHub Pages: /repo/), the files are the folder's and nothing above it is answered", async () => {
  const sw = await worker({ base: `${ORIGIN}/guide/` });
  assert.equal(await (await sw.get("/guide/micrograd", "navigate"))?.text(), "network: /guide/micrograd.html");
  assert.equal(await sw.get("/micrograd.html", "navigate"), null);
  assert.equal(await sw.get("/?unregister-sw", "navigate"), null); // another scope's address: not this worker's to act on
  assert.equal(sw.unregistered(), false);
});

test("the page's messages, built by the protocol: skip-waiting lets the new version take over, version is answered", async () => {
  const sw = await worker();
  assert.deepEqual(sw.message(protocol.skipWaiting()), []);
  assert.equal(sw.skippedWaiting(), 1);
  // structuredClone: postMessage's copy (and out of the worker's realm, whose objects are not this one's)
  assert.deepEqual(structuredClone(sw.message(protocol.versionRequest())), [protocol.versionAnswer("v1")]);
  assert.deepEqual(protocol.versionAnswer("v1"), { type: "version", version: "v1" });
  for (const bad of [null, "skip-waiting", {}, { type: "skipWaiting" }, { type: "run", id: 1, code: "" }, protocol.versionAnswer("v0").version]) {
    assert.deepEqual(sw.message(bad), [], JSON.stringify(bad));
  }
  assert.equal(sw.skippedWaiting(), 1, "only the protocol's skip-waiting makes the worker take over");
  assert.equal(protocol.asServiceWorkerRequest({ type: "version", version: "v0" })?.type, "version");
  assert.ok(sw.keys().length && [...sw.stores.keys()].every((name) => name.startsWith(protocol.CACHE_PREFIX)));
});
