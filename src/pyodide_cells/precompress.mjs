// @ts-check
// Brotli copies of the site's files, written beside them (`x.wasm` -> `x.wasm.br`)
// for the guide's server to send where the browser accepts `br` (serve.py).
// Quality 11 with a 16 MB window: a third smaller than gzip -6 on Pyodide's
// WebAssembly, but slow to make, so each result is kept in a cache folder under
// its content's SHA-256 and made once per machine, not once per build.
//
//   node precompress.mjs CACHE_DIR FILE...
//
// Prints one JSON line per file: {"file", "bytes", "br"}.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import zlib from "node:zlib";

const [cache, ...files] = process.argv.slice(2);
if (!cache) {
  console.error("usage: node precompress.mjs CACHE_DIR FILE...");
  process.exit(2);
}
mkdirSync(cache, { recursive: true });
const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_LGWIN, BROTLI_PARAM_SIZE_HINT } = zlib.constants;

for (const file of files) {
  const data = readFileSync(file);
  const kept = join(cache, `${createHash("sha256").update(data).digest("hex")}.br`);
  let br;
  if (existsSync(kept)) br = readFileSync(kept);
  else {
    br = zlib.brotliCompressSync(data, {
      params: { [BROTLI_PARAM_QUALITY]: 11, [BROTLI_PARAM_LGWIN]: 24, [BROTLI_PARAM_SIZE_HINT]: data.length },
    });
    // Whole or not at all: two processes (of a build, or of two builds) may share the cache.
    writeFileSync(`${kept}.${process.pid}.part`, br);
    renameSync(`${kept}.${process.pid}.part`, kept);
  }
  // Whole or not at all: a copy cut short would look fresh to the next build and be served.
  writeFileSync(`${file}.br.${process.pid}.part`, br);
  renameSync(`${file}.br.${process.pid}.part`, `${file}.br`);
  console.log(JSON.stringify({ file, bytes: data.length, br: br.length }));
}
