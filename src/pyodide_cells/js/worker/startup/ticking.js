// @ts-check
// The interrupt buffer Python is given: Stop's signal, and a tick while Python
// runs. Python runs synchronously on the worker's thread, so no timer fires
// while it runs, but CPython's Emscripten signal check (which
// pyodide.setInterruptBuffer turns on) reads the buffer's signal every few
// dozen bytecodes of Python code. Reading this stand-in's signal calls `tick`
// first, which lets the worker send the output it holds during a long
// computation (../streams.js). Sleeps and long calls into C read it only when
// they end. tests/js/ticking.test.mjs holds this against Pyodide itself, so an
// upgrade that reads the buffer otherwise fails there.

import * as protocol from "../../protocol.js";

/**
 * What to give pyodide.setInterruptBuffer, on every host: its signal (element protocol.SIGNAL)
 * is the page's shared byte, or always NO_SIGNAL where the page is not isolated.
 * @param {Uint8Array | null} interrupt  Stop's buffer, shared with the page
 * @param {() => void} tick  called on each read of the signal
 * @returns {{[protocol.SIGNAL]: number}}
 */
export function tickingSignal(interrupt, tick) {
  return {
    get [protocol.SIGNAL]() {
      tick();
      return interrupt ? interrupt[protocol.SIGNAL] : protocol.NO_SIGNAL;
    },
    set [protocol.SIGNAL](/** @type {number} */ value) {
      if (interrupt) interrupt[protocol.SIGNAL] = value;
    },
  };
}
