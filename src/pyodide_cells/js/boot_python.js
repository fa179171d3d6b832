// @ts-check
// What the worker does to a fresh or restored Pyodide before the first cell:
// the files the cell runner needs (the labs wheel, the runner, the IPython
// stand-in) and the Python of worker_boot.py. Shared by the worker and by the
// build's snapshot maker (make_snapshot.mjs), so that the interpreter a
// build-time snapshot holds is exactly the one a page would start.
//
// A memory snapshot holds the interpreter's memory, not its file system
// (Emscripten keeps that in JavaScript): after a restore the files are written
// again, the labs bytecode excepted (every labs module is imported already).

/**
 * The texts the worker carries (bundled by esbuild) or the build reads from disk.
 * @typedef {{boot: string, runner: string, ipythonInit: string, ipythonDisplay: string}} PythonFiles
 */

/** A Python literal for a JS string or boolean (JSON's string escapes are Python's). @param {string | boolean} value */
const py = (value) => (typeof value === "boolean" ? (value ? "True" : "False") : JSON.stringify(value));

/**
 * Writes the runner's files into Pyodide's file system and runs worker_boot.py's `boot`.
 * @param {any} pyodide  a loaded (or restored) Pyodide
 * @param {PythonFiles} files
 * @param {{wheel: Uint8Array | null, bytecode: Uint8Array | null, restored: boolean, sourcesURL: string}} how
 *   `wheel`: the labs wheel (null: a site built without one); `bytecode`: the labs
 *   modules' .pyc files, unpacked over it (ignored when restored); `sourcesURL`:
 *   where the standard library's sources are served (see worker_boot.serve_stdlib_sources),
 *   relative to the worker's URL so that a snapshot made elsewhere still finds them.
 */
export function bootPython(pyodide, files, { wheel, bytecode, restored, sourcesURL }) {
  if (wheel) pyodide.unpackArchive(wheel, "wheel");
  if (wheel && bytecode && !restored) pyodide.unpackArchive(bytecode, "zip");
  pyodide.FS.writeFile("/home/pyodide/pyodide_cells_runner.py", files.runner);
  pyodide.FS.mkdirTree("/home/pyodide/IPython");
  pyodide.FS.writeFile("/home/pyodide/IPython/__init__.py", files.ipythonInit);
  pyodide.FS.writeFile("/home/pyodide/IPython/display.py", files.ipythonDisplay);
  pyodide.runPython(`${files.boot}\nboot(${py(restored)}, ${py(restored ? "" : sourcesURL)}, False)\n`);
}

/**
 * Imports every labs module: a snapshot taken right after holds them all, so a
 * lab's first cell imports nothing. Call only before any JavaScript object
 * enters Python (a snapshot cannot hold one).
 * @param {any} pyodide
 */
export function importLabs(pyodide) {
  pyodide.runPython("import_labs()");
}
