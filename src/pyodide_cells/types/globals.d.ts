// Names the worker's bundle gets from outside its own source (see tsconfig.worker.json).

// esbuild --define (assets.bundle_js): file names and the snapshot key, "" when absent.
declare const SNAPSHOT_KEY: string;
declare const LABS_WHEEL: string;
declare const STDLIB_ZIP: string;
declare const STDLIB_REST_ZIP: string;
declare const LABS_BYTECODE: string;
declare const SITE_SNAPSHOT: string;
// The site's start-up snapshot's size in bytes (0 when absent).
declare const SITE_SNAPSHOT_BYTES: number;
// Its Subresource Integrity digest ("sha256-<base64>"), "" when absent.
declare const SITE_SNAPSHOT_INTEGRITY: string;

// importScripts(".../pyodide.js") defines loadPyodide on the worker's global scope.
declare var loadPyodide: typeof import("pyodide").loadPyodide;

// `import TEXT from "../python/x.py"`: esbuild's text loader gives the file's source.
declare module "*.py" {
  const text: string;
  export default text;
}
