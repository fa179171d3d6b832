// @ts-check
// A run's first output, shown in one piece. The worker sends a run's first
// writes at once (so that lines printed before a long computation show) and
// the rest of a print loop in batches (worker/streams.js); a quick cell that prints a
// few lines therefore arrives as several messages, and the page drew its
// output in steps: one line, then the next, then all of them. Its box
// changed height in between, so everything below it moved, and the browser
// walked and painted the page below again, for every cell that ran. Held for a moment here, the pieces of a quick run are drawn together.
//
// Only a run's first output waits, and at most LIMITS.streamFlushMs after it
// arrives (the worker's own batching interval): a long run's output flows as
// before, and a line printed before a long computation still shows at once,
// less that moment.

/**
 * Wraps a run's sink so that what the run shows in its first `ms` (from its
 * first output) is passed on together, in order, when that time is up or the
 * run ends, whichever comes first. `start` and `end` pass at once (`end`
 * after what was held).
 * @param {import("./scheduler.js").Sink} sink
 * @param {number} ms  how long the first output may wait, in milliseconds
 * @param {import("./scheduler.js").Timers} [timers]
 * @returns {import("./scheduler.js").Sink}
 */
export function holdFirstOutput(sink, ms, timers = globalThis) {
  /** @type {(() => void)[] | null} what waits (null: nothing is held, calls pass at once) */
  let held = null;
  /** @type {any} */
  let timer = null;
  let heldOnce = false; // the run's first output was held (and released): the rest passes

  const release = () => {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
    const calls = held || [];
    held = null;
    for (const call of calls) call();
  };

  /** @param {() => void} call */
  const show = (call) => {
    if (held) return void held.push(call);
    if (heldOnce) return call();
    heldOnce = true;
    held = [call];
    timer = timers.setTimeout(release, ms);
  };

  return {
    start: () => sink.start?.(), // one wrapper per run (cell.js makes it when the run is queued)
    end: () => {
      release();
      sink.end?.();
    },
    stream: (name, text) => show(() => sink.stream?.(name, text)),
    bundle: (data, kind, displayId, update) => show(() => sink.bundle?.(data, kind, displayId, update)),
    clear: (wait) => show(() => sink.clear?.(wait)),
    error: (msg) => show(() => sink.error?.(msg)),
  };
}
