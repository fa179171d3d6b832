// The runtime's folders (src/pyodide_cells/js/*/README.md): every relative import of every file,
// static, dynamic or a JSDoc type, reaches only its own folder or what its folder's README allows
// on its `May import:` line. The READMEs are the one place the rules are written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const JS = fileURLToPath(new URL("../../src/pyodide_cells/js/", import.meta.url));
const posix = (path) => path.split(sep).join("/");

/** Every folder under js/ (js/ itself as ""), relative to js/. */
function folders(dir = "") {
  const below = readdirSync(join(JS, dir)).filter((name) => statSync(join(JS, dir, name)).isDirectory());
  return [dir, ...below.flatMap((name) => folders(posix(join(dir, name))))];
}

/** What a folder's README allows: the backticked paths on its `May import:` line. */
function allowed(folder) {
  const line = readFileSync(join(JS, folder, "README.md"), "utf8").split("\n").find((l) => l.startsWith("May import:"));
  assert.ok(line, `${folder || "js"}/README.md has no "May import:" line`);
  return [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

const FOLDERS = folders().filter((folder) => readdirSync(join(JS, folder)).some((name) => name.endsWith(".js")));
const RULES = new Map(FOLDERS.map((folder) => [folder, allowed(folder)]));
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

test("every folder of js files says what it holds and may import", () => {
  assert.ok(FOLDERS.length >= 5, `found only ${FOLDERS}`);
  for (const [folder, rules] of RULES) {
    for (const rule of rules) assert.ok(existsSync(join(JS, rule)), `${folder || "js"}/README.md allows ${rule}, which does not exist`);
  }
});

// Issue 36: a file a newcomer reads in one sitting, with one job. Past this, split it by job.
const MAX_LINES = 300;

test(`no file is over ${MAX_LINES} lines`, () => {
  const long = FOLDERS.flatMap((folder) => readdirSync(join(JS, folder)).filter((n) => n.endsWith(".js")).map((n) => posix(join(folder, n))))
    .map((file) => [file, readFileSync(join(JS, file), "utf8").split("\n").length])
    .filter(([, lines]) => lines > MAX_LINES);
  assert.deepEqual(long, []);
});

test("each file imports only its folder and what its README allows", () => {
  const wrong = [];
  let seen = 0;
  for (const [folder, rules] of RULES) {
    for (const name of readdirSync(join(JS, folder)).filter((n) => n.endsWith(".js"))) {
      const file = posix(join(folder, name));
      for (const [, spec] of readFileSync(join(JS, file), "utf8").matchAll(IMPORT)) {
        seen += 1;
        const target = posix(normalize(join(dirname(file), spec)));
        if (target.startsWith("../")) continue; // outside js/: npm's or the Python's, not a part's
        const own = posix(dirname(target)) === (folder || ".");
        const ok = own || rules.some((rule) => (rule.endsWith("/") ? target.startsWith(rule) : target === rule));
        if (!ok) wrong.push(`${file} imports ${spec}`);
      }
    }
  }
  assert.ok(seen > 50, `read only ${seen} imports: is the pattern still right?`);
  assert.deepEqual(wrong, []);
});
