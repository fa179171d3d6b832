// @ts-check
// What the worker does to a fresh or restored Pyodide before the first cell:
// the files the cell runner needs (the labs wheel, the runner, the IPython
// stand-in) and the Python of worker_boot.py. Shared by the worker (index.js) and by the
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

/**
 * The Python files, read by name from the package's python/ folder (the build's scripts).
 * @param {(name: string) => string} read
 * @returns {PythonFiles}
 */
export function pythonFiles(read) {
  return { boot: read("worker_boot.py"), runner: read("runner.py"), ipythonInit: read("ipython/__init__.py"), ipythonDisplay: read("ipython/display.py") };
}

/** A Python literal for a JS string or boolean (JSON's string escapes are Python's). @param {string | boolean} value */
const py = (value) => (typeof value === "boolean" ? (value ? "True" : "False") : JSON.stringify(value));

/**
 * @typedef {{wheel: Uint8Array | null, bytecode: Uint8Array | null, restored: boolean, sourcesURL: string, restURL: string}} BootOptions
 *   `wheel`: the labs wheel (null: a site built without one); `bytecode`: the labs
 *   modules' .pyc files, unpacked over it (ignored when restored; null: none); `sourcesURL`:
 *   where the standard library's sources are served (see worker_boot.serve_stdlib_sources),
 *   and `restURL`, the rest of the standard library (worker_boot.StdlibRest); both "" for
 *   none, and relative to the worker's URL so that a snapshot made elsewhere still finds them.
 */

/**
 * Writes the runner's files into Pyodide's file system (fillFileSystem) and runs
 * worker_boot.py's `boot` (bootWorker): the worker's two stages, in one call for the build's scripts.
 * @param {any} pyodide  a loaded (or restored) Pyodide
 * @param {PythonFiles} files
 * @param {BootOptions} how
 */
export function bootPython(pyodide, files, how) {
  fillFileSystem(pyodide, files, how);
  bootWorker(pyodide, files, how);
}

/**
 * Writes into Pyodide's file system what the cell runner needs: the labs wheel (and its
 * bytecode, on a fresh start), the runner and the IPython stand-in.
 * @param {any} pyodide
 * @param {PythonFiles} files
 * @param {{wheel: Uint8Array | null, bytecode: Uint8Array | null, restored: boolean}} how
 */
export function fillFileSystem(pyodide, files, { wheel, bytecode, restored }) {
  if (wheel) pyodide.unpackArchive(wheel, "wheel");
  if (wheel && bytecode && !restored) pyodide.unpackArchive(bytecode, "zip");
  pyodide.FS.writeFile("/home/pyodide/pyodide_cells_runner.py", files.runner);
  pyodide.FS.mkdirTree("/home/pyodide/IPython");
  pyodide.FS.writeFile("/home/pyodide/IPython/__init__.py", files.ipythonInit);
  pyodide.FS.writeFile("/home/pyodide/IPython/display.py", files.ipythonDisplay);
}

/**
 * Runs worker_boot.py's `boot`: the cell runner imported (a restored interpreter's clock,
 * seeds and locale set from this browser first).
 * @param {any} pyodide
 * @param {PythonFiles} files
 * @param {{restored: boolean, sourcesURL: string, restURL: string}} how
 */
export function bootWorker(pyodide, files, { restored, sourcesURL, restURL }) {
  if (restored) setTimeZone(pyodide._module);
  const [sources, rest] = restored ? ["", ""] : [sourcesURL, restURL]; // a restored interpreter has both
  // A restored interpreter holds worker_boot.py's functions and classes from the
  // start that made the snapshot (the same build: the snapshot's key covers the
  // worker): its own `boot` is called rather than the file run again, which
  // would compile it once more and make a second copy of every class in it.
  const source = restored ? "" : files.boot;
  pyodide.runPython(`${source}\nboot(${py(restored)}, ${py(sources)}, ${py(rest)}, False)\n`);
}

/**
 * Gives the C library this browser's time zone, as Emscripten's tzset does
 * (Pyodide 0.26, `__tzset_js`): it does so once per process, so a restored
 * interpreter holds the zone of the process that made the snapshot (for the
 * site's, the build machine's), and `time.strftime("%Z")`, `tm_zone` and
 * `datetime.now().astimezone()` would name it. worker_boot.local_time_zone
 * then sets the `time` module's own copies from these.
 * @param {any} module  Pyodide's Emscripten module (`pyodide._module`)
 */
function setTimeZone(module) {
  const year = new Date().getFullYear();
  const winter = new Date(year, 0, 1);
  const summer = new Date(year, 6, 1);
  const name = (/** @type {Date} */ day) => day.toLocaleTimeString(undefined, { hour12: false, timeZoneName: "short" }).split(" ")[1];
  // Minutes west of UTC; the standard time is the one further west.
  const [west, westInSummer] = [winter.getTimezoneOffset(), summer.getTimezoneOffset()];
  module.HEAP32[module._timezone >> 2] = Math.max(west, westInSummer) * 60;
  module.HEAP32[module._daylight >> 2] = Number(west !== westInSummer);
  const [standard, daylight] = westInSummer < west ? [winter, summer] : [summer, winter];
  const names = module._tzname >> 2; // char *tzname[2], each a buffer of 17 bytes
  module.stringToUTF8(name(standard), module.HEAPU32[names], 17);
  module.stringToUTF8(name(daylight), module.HEAPU32[names + 1], 17);
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
