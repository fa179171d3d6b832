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
// batched, by a token bucket: a run starts with LIMITS.streamEagerMessages
// messages to spend, and earns one more each LIMITS.streamFlushMs, up to that
// many. A write is sent when a message can be spent; otherwise it is held, and
// leaves with the next write that can spend one, when what is held reaches
// LIMITS.streamFlushChars, or on a flush (print(..., flush=True), the run's end,
// or `tick`, which the worker calls while Python runs). A loop that prints
// 100,000 lines thus sends about one message per streamFlushMs, as before the
// bucket: the page draws each message it gets, and a bucket refilled whole
// each window (32 messages every 50 ms) sent it ten to twenty times as many,
// which it fell far behind drawing.

/** @typedef {"stdout" | "stderr"} StreamName */
/**
 * @typedef {{streamFlushChars: number, streamFlushMs: number, streamEagerMessages: number}} StreamLimits
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
    this.tokens = limits.streamEagerMessages; // messages that may go at once
    this.earnedAt = clock(); // when `tokens` was last brought up to date
  }

  /** A new run: its first writes are sent at once, whatever the last run printed. */
  reset() {
    this.name = null;
    this.text = "";
    this.tokens = this.limits.streamEagerMessages;
    this.earnedAt = this.clock();
  }

  /** Whether text is held, not yet sent. */
  get holding() {
    return this.text.length > 0;
  }

  /** A write to `name`: sent now, or held (see the module's comment). @param {StreamName} name @param {string} text */
  write(name, text) {
    if (!text) return;
    // One message carries one stream: a switch sends what the other stream held, so the order stays.
    if (this.name !== name) this.flush();
    this.name = name;
    this.text += text;
    if (this.text.length >= this.limits.streamFlushChars || this.earn() >= 1) this.flush();
  }

  /** Send whatever is held (Python flushed, the run ends, or it must not wait longer); spends a message. */
  flush() {
    if (this.text && this.name) {
      this.tokens = Math.max(0, this.earn() - 1);
      this.send(this.name, this.text);
    }
    this.name = null;
    this.text = "";
  }

  /**
   * Called now and then while Python runs (between writes too): sends what is held once a
   * message is earned, so the end of a print loop followed by a long computation shows during it.
   */
  tick() {
    if (this.text && this.earn() >= 1) this.flush();
  }

  /** The messages that may go now, counting those earned since last asked. */
  earn() {
    const now = this.clock();
    const { streamEagerMessages, streamFlushMs } = this.limits;
    this.tokens = Math.min(streamEagerMessages, this.tokens + (now - this.earnedAt) / streamFlushMs);
    this.earnedAt = now;
    return this.tokens;
  }
}
