// @ts-check
// When the worker sends what Python writes to stdout and stderr: a pure
// decision, no worker or DOM (tested with node --test, tests/js/streams.test.mjs).
//
// Python runs synchronously on the worker's thread, so no timer can fire while
// it runs: whatever is held when a write returns stays held until Python
// writes again, or the run ends. A learner who prints four lines and then
// computes for a minute must see the four lines for that minute, and keep them
// when Stop replaces the worker (a host without cross-origin isolation), so a
// write is sent at once unless writes come fast. Only a print loop is
// batched: each window of LIMITS.streamFlushMs sends its first
// LIMITS.streamEagerWrites writes as they come and holds the rest, which leave
// with the next write after the window, when they reach
// LIMITS.streamFlushChars, or on a flush (print(..., flush=True), the run's
// end, or `tick`, which the worker calls while Python runs). A loop that prints
// 100,000 lines thus sends a bounded number of messages per window, not one
// per write: the page draws each message, so their count is its work.

/** @typedef {"stdout" | "stderr"} StreamName */
/**
 * @typedef {{streamFlushChars: number, streamFlushMs: number, streamEagerWrites: number}} StreamLimits
 *   the LIMITS (protocol.js) this module reads
 */

export class StreamBatcher {
  /**
   * @param {(name: StreamName, text: string) => void} send  posts one stream message
   * @param {StreamLimits} limits
   * @param {() => number} clock  milliseconds, monotonic (performance.now in the worker)
   */
  constructor(send, limits, clock) {
    this.send = send;
    this.limits = limits;
    this.clock = clock;
    /** @type {StreamName | null} */
    this.name = null;
    this.text = "";
    this.windowStart = -Infinity; // when the current window's first message was sent
    this.sentInWindow = 0;
  }

  /** A new run: its first writes are sent at once, whatever the last run printed. */
  reset() {
    this.name = null;
    this.text = "";
    this.windowStart = -Infinity;
    this.sentInWindow = 0;
  }

  /** Whether text is held, not yet sent. */
  get holding() {
    return this.text.length > 0;
  }

  /** A write to `name`: sent now, or held (see the module's comment). @param {StreamName} name @param {string} text */
  write(name, text) {
    if (!text) return;
    // One message carries one stream: a switch sends what the other stream holds, so the order stays.
    if (this.name !== name) this.flush();
    this.name = name;
    this.text += text;
    if (this.text.length >= this.limits.streamFlushChars || this.hasRoom()) this.flush();
  }

  /** Send whatever is held (Python flushed, the run ends, or it must not wait longer). */
  flush() {
    if (this.text && this.name) {
      const now = this.clock();
      if (now - this.windowStart >= this.limits.streamFlushMs) {
        this.windowStart = now;
        this.sentInWindow = 0;
      }
      this.sentInWindow += 1;
      this.send(this.name, this.text);
    }
    this.name = null;
    this.text = "";
  }

  /**
   * Called now and then while Python runs (between writes too): sends what is held once its
   * window is over, so the end of a print loop followed by a long computation shows during it.
   */
  tick() {
    if (this.text && this.clock() - this.windowStart >= this.limits.streamFlushMs) this.flush();
  }

  /** Whether one more message may go now: the window is over, or it has not sent its share yet. */
  hasRoom() {
    return this.clock() - this.windowStart >= this.limits.streamFlushMs || this.sentInWindow < this.limits.streamEagerWrites;
  }
}
