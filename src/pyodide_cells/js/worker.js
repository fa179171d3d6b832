// The Pyodide worker: boots Pyodide 0.26.2 from the site's own _static/pyodide/,
// installs the labs wheel and the cell runner, then runs cells one at a time.
//
// Messages in:  {type: "init", pyodideURL, wheelURL, runnerURL}
//               {type: "run", id, code}      (queued until the runtime is ready)
//               {type: "check", id, blocks}  (run the page's doctest blocks)
//               {type: "restart"}            (fresh namespace, same interpreter)
// Messages out: {type: "status", state: "loading"|"ready"|"error", step, steps, message}
//               {type: "start", id}          (the cell began to run)
//               {type: "stream"|"display"|"result"|"error", id, ...payload}
//               {type: "done", id, status, execution_count, ms}
//               {type: "checks", id, results: [{name, description, source, expected, got, status, setup}]}

let ready = null; // Promise<{pyodide, runner}> once init arrives
let queue = Promise.resolve(); // cells run strictly in arrival order
let currentId = null;
let interrupt = null; // Uint8Array on a SharedArrayBuffer, when the page is cross-origin isolated

const post = (msg) => self.postMessage(msg);
// `at` is an absolute time (ms since the epoch) so the page can place it on its own timeline.
const status = (state, step, steps, message) =>
  post({ type: "status", state, step, steps, message, at: performance.timeOrigin + performance.now() });

async function fetchBytes(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${what} from ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function boot({ pyodideURL, wheelURL, runnerURL, interruptBuffer }) {
  const steps = 4;
  status("loading", 1, steps, "Downloading the Python runtime (Pyodide 0.26.2)");
  // Start fetching the small files while the interpreter downloads and compiles.
  const wheel = wheelURL ? fetchBytes(wheelURL, "the labs wheel") : Promise.resolve(null);
  const runnerSource = fetch(runnerURL).then((r) => {
    if (!r.ok) throw new Error(`could not load the cell runner from ${runnerURL}: HTTP ${r.status}`);
    return r.text();
  });
  importScripts(pyodideURL + "pyodide.js");
  const pyodide = await self.loadPyodide({ indexURL: pyodideURL });
  // Stop: the page writes SIGINT (2) here; Python raises KeyboardInterrupt.
  if (interruptBuffer) {
    interrupt = new Uint8Array(interruptBuffer);
    pyodide.setInterruptBuffer(interrupt);
  }
  status("loading", 2, steps, "Installing the labs package");
  const wheelBytes = await wheel;
  if (wheelBytes) pyodide.unpackArchive(wheelBytes, "wheel");
  status("loading", 3, steps, "Starting the cell runner");
  pyodide.FS.writeFile("/home/pyodide/pyodide_cells_runner.py", await runnerSource);
  // Streams are batched: a print loop would otherwise post one message per write.
  const emit = (kind, payload) => {
    const msg = JSON.parse(payload);
    if (kind === "stream") return bufferStream(msg.name, msg.text);
    flushStreams();
    post({ type: kind, id: currentId, ...msg });
  };
  const runner = pyodide.runPython(
    "import importlib, sys\n" +
      "sys.path.insert(0, '/home/pyodide')\n" +
      "importlib.invalidate_caches()\n" +
      "import pyodide_cells_runner\n" +
      "pyodide_cells_runner.CellRunner",
  )(emit);
  status("ready", steps, steps, "Python ready");
  return { pyodide, runner };
}

let streamBuffer = { name: null, text: "" };
let lastFlush = 0;
const FLUSH_CHARS = 16_384;
const FLUSH_MS = 50;

function flushStreams() {
  if (streamBuffer.text) post({ type: "stream", id: currentId, name: streamBuffer.name, text: streamBuffer.text });
  streamBuffer = { name: null, text: "" };
  lastFlush = performance.now();
}

function bufferStream(name, text) {
  if (streamBuffer.name !== name) flushStreams();
  streamBuffer.name = name;
  streamBuffer.text += text;
  if (streamBuffer.text.length >= FLUSH_CHARS || performance.now() - lastFlush >= FLUSH_MS) flushStreams();
}

function isFatal(text) {
  return /fatal|already fatally failed|Maximum call stack size exceeded|memory access out of bounds|unreachable/i.test(text);
}

async function run({ id, code }) {
  const { runner } = await ready;
  currentId = id;
  if (interrupt) interrupt[0] = 0; // a Stop meant for an earlier cell must not hit this one
  post({ type: "start", id });
  const t0 = performance.now();
  let result;
  try {
    const proxy = runner.run(code);
    result = proxy.toJs({ dict_converter: Object.fromEntries });
    proxy.destroy();
  } catch (err) {
    // A JavaScript-level failure (e.g. a stack overflow inside the interpreter).
    // After a fatal error Pyodide cannot be used again: the page restarts us.
    const text = String(err && err.message ? err.message : err);
    post({ type: "error", id, ename: "RuntimeError", evalue: text, traceback: text });
    result = { status: "error", execution_count: null };
    if (isFatal(text)) {
      flushStreams();
      post({ type: "done", id, ms: performance.now() - t0, ...result });
      post({ type: "fatal", message: text.split("\n")[0].slice(0, 200) });
      currentId = null;
      return;
    }
  }
  flushStreams();
  post({ type: "done", id, ms: performance.now() - t0, ...result });
  currentId = null;
}

self.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    ready = boot(msg);
    ready.catch((err) => status("error", 0, 4, String(err && err.message ? err.message : err)));
  } else if (msg.type === "run") {
    queue = queue.then(() => run(msg)).catch(() => {});
  } else if (msg.type === "check") {
    queue = queue
      .then(async () => {
        const { runner } = await ready;
        const results = JSON.parse(runner.run_checks(msg.blocks));
        const warnings = JSON.parse(runner.provenance(msg.names || []));
        post({ type: "checks", id: msg.id, results, warnings });
      })
      .catch((err) => post({ type: "checks", id: msg.id, error: String(err) }));
  } else if (msg.type === "restart") {
    queue = queue.then(async () => {
      const { runner } = await ready;
      runner.reset();
      post({ type: "restarted" });
    });
  }
};
