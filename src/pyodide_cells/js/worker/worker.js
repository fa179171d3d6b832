// @ts-check
// The Pyodide worker: the transport to the page, Python's output streams
// (sent as streams.js decides), and the dispatch of the page's requests, answered one at a
// time. How Python starts (Pyodide 0.26.2 from the site's own _static/pyodide/,
// the labs wheel, the cell runner) is startup/index.js, its one entry point
// startPython. Every message it sends or accepts, and every kind the cell
// runner emits, is defined in protocol.js; they go over the MessagePort of the
// page's `init` message.
//
// It starts loading as soon as its script runs: every URL it needs is relative
// to its own, and the wheel's name and the snapshot key are compiled in by
// assets.py (esbuild --define). Waiting for the page's first message instead
// cost 100-200 ms on a lab page, whose main thread is busy parsing and laying
// out the document and only then passes the message on.

import * as protocol from "../protocol.js";
import { startPython } from "./startup/index.js";
import { StreamBatcher } from "./streams.js";

// ------------------------------------------------------------------ transport

/** @type {((msg: protocol.WorkerMessage) => void) | null} */
let toPage = null;
/** @type {protocol.WorkerMessage[]} what was said before the page's port arrived */
const outbox = [];
/** @type {(msg: protocol.InitMessage) => void} */
let receiveInit = () => {};
/** @type {Promise<protocol.InitMessage>} */
const init = new Promise((resolve) => (receiveInit = resolve));

/** @param {protocol.WorkerMessage} msg */
function post(msg) {
  if (toPage) toPage(msg);
  else outbox.push(msg);
}

const now = () => performance.timeOrigin + performance.now();

// The page's one message on the Worker itself. Anything later on it (code in a
// cell can post to its own worker) is ignored: requests come over the port,
// which no cell can reach, and replies are sent with the port's postMessage as
// it was at start-up.
self.onmessage = (event) => {
  const msg = protocol.asInit(event.data);
  if (toPage || !msg) return;
  const port = msg.port;
  const send = MessagePort.prototype.postMessage;
  toPage = (reply) => send.call(port, reply);
  port.onmessage = (e) => onRequest(e.data);
  for (const early of outbox.splice(0)) toPage(early);
  receiveInit(msg);
};

// ------------------------------------------------------------------- requests

/** @type {number | null} the request whose output Python is writing */
let currentId = null;
// When Python's writes are sent: streams.js.
const streams = new StreamBatcher(
  (name, text) => {
    if (currentId !== null) post(protocol.stream(currentId, name, text));
  },
  protocol.LIMITS,
  () => performance.now(),
);
const flushStreams = () => streams.flush();

/**
 * The runner's one callback (runner.py `emit`): a kind protocol.js declares and its JSON payload.
 * @param {protocol.RunnerKind} kind
 * @param {string} payload
 */
function emit(kind, payload) {
  if (currentId === null) return;
  if (kind === "flush") return flushStreams();
  const event = JSON.parse(payload);
  if (kind === "stream") return streams.write(event.name, event.text);
  flushStreams();
  const msg = protocol.runnerMessage(currentId, kind, event);
  if (msg) post(msg);
}

/** After one of these, Pyodide cannot be used again: the page replaces the worker. @param {string} text */
function isFatal(text) {
  return /fatal|already fatally failed|Maximum call stack size exceeded|memory access out of bounds|unreachable|Aborted\(/i.test(text);
}

/** @type {Promise<import("./startup/index.js").Started> | null} the runner, once Python has started */
let ready = null;
let requests = Promise.resolve();

/** @param {unknown} data */
function onRequest(data) {
  const request = protocol.asRequest(data);
  if (request) requests = requests.then(() => answer(request));
}

/** Answer one request: its output, then exactly one `done` (or `fatal`). Never throws. @param {protocol.Request} request */
async function answer(request) {
  const { id } = request;
  let started;
  try {
    started = await /** @type {Promise<import("./startup/index.js").Started>} set as the worker starts, before any request */ (ready);
  } catch (err) {
    post(protocol.error(id, "RuntimeError", "Python failed to start", `Python failed to start: ${messageOf(err)}`));
    post(protocol.done(id, "error", 0, null));
    return;
  }
  const { runner, interrupt } = started;
  currentId = id;
  streams.reset();
  if (interrupt) interrupt[protocol.SIGNAL] = protocol.NO_SIGNAL; // a Stop meant for an earlier request must not hit this one
  const t0 = performance.now();
  try {
    if (request.type === "run") {
      const proxy = runner.run(request.code, request.name ?? null);
      const result = proxy.toJs({ dict_converter: Object.fromEntries });
      proxy.destroy();
      flushStreams();
      post(protocol.done(id, result.status, performance.now() - t0, result.execution_count));
    } else if (request.type === "check") {
      const result = JSON.parse(runner.check(JSON.stringify(request.blocks), JSON.stringify(request.names)));
      flushStreams();
      post(protocol.done(id, result.status, performance.now() - t0, null, { results: result.results, warnings: result.warnings }));
    } else if (request.type === "complete") {
      const completions = JSON.parse(runner.complete(request.code, request.cursor));
      post(protocol.done(id, "ok", performance.now() - t0, null, { completions }));
    } else {
      runner.reset();
      post(protocol.done(id, "ok", performance.now() - t0, null));
    }
  } catch (err) {
    // A JavaScript-level failure (e.g. a stack overflow inside the interpreter).
    const text = messageOf(err);
    flushStreams();
    post(protocol.error(id, "RuntimeError", text, text));
    if (isFatal(text)) post(protocol.fatal(id, text.split("\n")[0].slice(0, 200)));
    else post(protocol.done(id, "error", performance.now() - t0, null));
  } finally {
    currentId = null;
    started.answered();
  }
}

/** @param {unknown} err */
const messageOf = (err) => String(err && /** @type {any} */ (err).message ? /** @type {any} */ (err).message : err);

ready = startPython(init, post, emit, () => streams.tick());
ready.catch((err) => post(protocol.status("error", 0, messageOf(err), now())));
