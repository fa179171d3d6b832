// @ts-check
// The page's end of the transport: the worker boot.js started (and the ones
// that replace it), its message port and Stop's interrupt buffer. It checks
// every message against the protocol and hands it to the scheduler; it builds
// no message of its own (protocol.js does).

import * as protocol from "../protocol.js";

/**
 * @typedef {{worker: Worker, port: MessagePort, interrupt: Uint8Array | null, early: unknown[]}} Started
 * @typedef {{start: () => Started, first: Started | null}} Boot
 */

export class Kernel {
  /**
   * @param {(msg: protocol.WorkerMessage) => void} onMessage
   * @param {(message: string) => void} onWorkerError
   */
  constructor(onMessage, onWorkerError) {
    this.onMessage = onMessage;
    this.onWorkerError = onWorkerError;
    /** @type {Started | null} */
    this.current = null;
  }

  /** Adopt the worker boot.js made (replaying what it said meanwhile), or make one. */
  start() {
    const boot = /** @type {Boot} */ (/** @type {any} */ (window).PYODIDE_CELLS_BOOT);
    const started = boot.first || boot.start();
    boot.first = null;
    this.current = started;
    const { worker, port } = started;
    const receive = (/** @type {unknown} */ data) => {
      if (this.current !== started) return; // a replaced worker's last words
      const msg = protocol.asWorkerMessage(data);
      if (msg) this.onMessage(msg);
    };
    port.onmessage = (event) => receive(event.data);
    // Anything posted on the Worker itself comes from code in a cell
    // (js.self.postMessage): never the runtime's, so never trusted.
    worker.onmessage = () => {};
    worker.onerror = (event) => {
      event.preventDefault();
      if (this.current === started) this.onWorkerError(event.message || "the worker script did not load");
    };
    for (const data of started.early.splice(0)) receive(data);
  }

  get canInterrupt() {
    return Boolean(this.current && this.current.interrupt);
  }

  /** @param {protocol.Request} request */
  send(request) {
    this.current?.port.postMessage(request);
  }

  interrupt() {
    if (this.current?.interrupt) this.current.interrupt[protocol.SIGNAL] = protocol.SIGINT;
  }

  signalPending() {
    return Boolean(this.current?.interrupt && this.current.interrupt[protocol.SIGNAL] !== protocol.NO_SIGNAL);
  }

  replace() {
    this.current?.worker.terminate();
    this.current?.port.close();
    this.start();
  }
}
