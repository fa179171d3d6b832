// @ts-check
// The start-up's replacements of the worker's `fetch` and of
// `WebAssembly.instantiateStreaming`: Pyodide 0.26 has no option to start its
// downloads early or to compile its WebAssembly while its JavaScript loads, so
// its own calls are answered with what was started here. None of this runs on
// a plain start (index.js).
//
// ORDER (installEarly): fetchEarly first, then compileEarly. Each replaces
// `self.fetch` with a wrapper around the one it found. compileEarly's wrapper
// answers Pyodide's request for the wasm and then puts back the fetch it
// found; fetchEarly's stays for the whole start. Installed the other way round,
// fetchEarly's early requests would go through compileEarly's wrapper, and
// compileEarly, putting back the fetch it found, would drop fetchEarly's answers.

import { fetchBytes } from "./config.js";

/**
 * What the next instantiation of the interpreter does to its memory first (packed.js rebase), once.
 * @type {((memory: WebAssembly.Memory) => void) | null}
 */
let onInstantiation = null;

/**
 * Sets (or clears, with null) what the next instantiation of the interpreter does to its
 * memory before Pyodide writes into it: a snapshot based on the memory as instantiated is put
 * back then (packed.js rebase), before Pyodide restores it.
 * @param {((memory: WebAssembly.Memory) => void) | null} hook
 */
export function beforeRestore(hook) {
  onInstantiation = hook;
}

/** Runs the hook on a new instance's imported memory, once. @param {any} imports */
function instantiated(imports) {
  const [hook, memory] = [onInstantiation, imports?.env?.memory];
  onInstantiation = null;
  if (hook && memory instanceof WebAssembly.Memory) hook(memory);
}

// Request the files loadPyodide fetches itself (the standard library and the
// package lock file) now, beside the WebAssembly, rather than after
// pyodide.asm.js has downloaded and run: on a slow network that is a second or
// more in which they did not travel. loadPyodide's own request for each gets
// this response, once; later requests go to the network as usual.
/** @param {string[]} urls */
function fetchEarly(urls) {
  const realFetch = self.fetch;
  /** @type {Map<string, Promise<Response>>} */
  const early = new Map(urls.map((url) => {
    const response = realFetch(url);
    response.catch(() => {}); // a failure reaches loadPyodide, which reports it
    return [new URL(url, self.location.href).href, response];
  }));
  self.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), self.location.href).href;
    const response = early.get(url);
    if (!response) return realFetch(input, init);
    early.delete(url);
    return response;
  };
}

// Compile the interpreter's WebAssembly while pyodide.asm.js downloads and runs
// (about 0.3 s of JavaScript), instead of after it as loadPyodide does: its one
// call to instantiateStreaming is answered with the module compiled here. Its
// own fetch of the same file is answered with an empty body, never sent: a
// second request, dropped unread, made Chromium discard the file from its HTTP
// cache where the host sends no cache headers, and the service worker then
// downloaded all 10 MB again.
//
// Returns a promise that rejects when the file cannot be downloaded (it never
// resolves otherwise): Pyodide's own path then aborts inside Emscripten and
// loadPyodide never settles, so the start races it against this.
/** @param {string} wasmURL @returns {Promise<never>} */
function compileEarly(wasmURL) {
  const original = WebAssembly.instantiateStreaming;
  const realFetch = self.fetch;
  const href = new URL(wasmURL, self.location.href).href;
  self.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (new URL(url, self.location.href).href !== href) return realFetch(input, init);
    self.fetch = realFetch;
    return Promise.resolve(new Response(null, { headers: { "Content-Type": "application/wasm" } }));
  };
  const response = realFetch(wasmURL).then((r) => {
    if (!r.ok) throw new Error(`could not load the Python runtime from ${wasmURL}: HTTP ${r.status}`);
    return r;
  });
  const compiled = WebAssembly.compileStreaming(response);
  compiled.catch(() => {}); // a failure is handled below, by Pyodide's own path
  WebAssembly.instantiateStreaming = async (source, imports) => {
    WebAssembly.instantiateStreaming = original;
    let module;
    try {
      module = await compiled;
    } catch (err) {
      // Compiled from its bytes, not streamed: streaming refuses a file served without the
      // application/wasm type, and so would Pyodide's own path (Python then never started).
      console.warn("pyodide-cells: early compile failed, compiling from the file's bytes instead:", err);
      // `source` is the empty answer above; Pyodide's own request for the file has used it up.
      const result = await WebAssembly.instantiate(await fetchBytes(wasmURL, "the Python runtime"), imports);
      instantiated(imports);
      return result;
    }
    Promise.resolve(source).then((r) => r.body && r.body.cancel()).catch(() => {});
    const instance = await WebAssembly.instantiate(module, imports);
    instantiated(imports);
    return { module, instance };
  };
  return response.then(
    () => new Promise(() => {}),
    (err) => {
      throw new Error(err instanceof TypeError ? `could not load the Python runtime from ${wasmURL}: ${err.message}` : err.message);
    },
  );
}

/**
 * Starts the downloads loadPyodide would start late (`files`) and the interpreter's
 * WebAssembly (`wasmURL`), compiling it as it arrives; in the order the header says.
 * @param {string[]} files  the standard library zip and the package lock file
 * @param {string} wasmURL
 * @returns {Promise<never>}  rejects when the WebAssembly cannot be downloaded (race it with loadPyodide)
 */
export function installEarly(files, wasmURL) {
  fetchEarly(files);
  const wasmFailed = compileEarly(wasmURL);
  wasmFailed.catch(() => {}); // raced by the caller
  return wasmFailed;
}
