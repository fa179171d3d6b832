// @ts-check
// How the page starts the worker and reaches it: the one `init` message, Stop's
// interrupt buffer, and the plain-start switch that travels in the worker's address.
//
// page/boot.js makes the worker and a MessageChannel, and sends the worker one
// `init` message on the worker itself, handing over `port` and Stop's buffer
// (`interruptBuffer`). From then on both sides speak only on that port. Code in
// a cell can reach the worker's global scope (`js.self.postMessage(...)`), but
// not the port, which lives in the worker script's closure: whatever a cell
// posts arrives on the Worker object, which the page ignores, so a cell cannot
// forge a result.

/** The interrupt buffer: a SharedArrayBuffer of INTERRUPT_BYTES bytes, only when the page is cross-origin isolated. */
export const INTERRUPT_BYTES = 1;
/** Byte 0 is the signal Pyodide reads between bytecodes (pyodide.setInterruptBuffer). */
export const SIGNAL = 0;
/** Written to byte 0 by Stop: Python raises KeyboardInterrupt. The worker writes NO_SIGNAL before each request. */
export const SIGINT = 2;
export const NO_SIGNAL = 0;

/**
 * Stop's interrupt buffer (a view of INTERRUPT_BYTES shared bytes), or null where the page
 * cannot share memory with its worker (not cross-origin isolated: Stop then replaces the worker).
 * @param {boolean} isolated  `crossOriginIsolated` and SharedArrayBuffer exists
 * @returns {Uint8Array | null}
 */
export const interruptBuffer = (isolated) => (isolated ? new Uint8Array(new SharedArrayBuffer(INTERRUPT_BYTES)) : null);

/**
 * The page-address parameter that starts Python with stock `loadPyodide` and none of the
 * start-up speed work (no snapshot, the stock standard library, no early fetch or compile):
 * `?plain-start`. page/boot.js reads it once and hands it to the worker in the worker's own address
 * (`workerURL`), since the worker starts before the `init` message arrives (worker/worker.js).
 */
export const PLAIN_START = "plain-start";

/**
 * The worker's address: `script` (its versioned URL), with PLAIN_START added when asked.
 * @param {URL} script
 * @param {boolean} plainStart
 * @returns {URL}
 */
export function workerURL(script, plainStart) {
  const url = new URL(script.href);
  if (plainStart) url.searchParams.set(PLAIN_START, "");
  return url;
}

/** Whether the worker at `address` (its own `self.location`) was asked for a plain start. @param {string} address */
export const isPlainStart = (address) => new URL(address).searchParams.has(PLAIN_START);

/**
 * @typedef {{type: "init", port: MessagePort, interruptBuffer: SharedArrayBuffer | null,
 *   siteSnapshot: "auto" | "always" | "never"}} InitMessage
 *   Sent once, on the Worker itself; everything else goes over `port`. `siteSnapshot`: whether a
 *   start with no snapshot kept in this browser restores the site's ("auto": when the link is fast
 *   enough, worker/startup/snapshot.js siteSnapshotPays), from the page's `?site-snapshot=` (page/boot.js).
 */

/**
 * @param {MessagePort} port  the worker's end of the page's MessageChannel
 * @param {Uint8Array | null} interrupt  Stop's buffer (`interruptBuffer`), shared with the worker
 * @param {InitMessage["siteSnapshot"]} [siteSnapshot]
 * @returns {InitMessage}
 */
export const init = (port, interrupt, siteSnapshot = "auto") => ({
  type: "init",
  port,
  interruptBuffer: interrupt ? /** @type {SharedArrayBuffer} */ (interrupt.buffer) : null,
  siteSnapshot,
});

/**
 * The message if it is a well-formed `init`, else null: the worker takes the first one only.
 * @param {unknown} data
 * @returns {InitMessage | null}
 */
export function asInit(data) {
  const msg = /** @type {any} */ (data);
  if (!msg || msg.type !== "init" || !(msg.port instanceof MessagePort)) return null;
  const shared = typeof SharedArrayBuffer === "function" && msg.interruptBuffer instanceof SharedArrayBuffer;
  if (msg.interruptBuffer !== null && !shared) return null;
  return msg;
}
