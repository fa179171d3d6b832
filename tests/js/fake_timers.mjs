// Timers a test fires by hand (the scheduler's and hold.js's `timers` option).

export function fakeTimers() {
  const timers = new Map();
  let next = 1;
  return {
    setTimeout(fn, ms) { timers.set(next, { fn, ms }); return next++; },
    clearTimeout(id) { timers.delete(id); },
    /** Fire, shortest first, every timer set for `ms` or less. */
    fireUpTo(ms) {
      for (const [id, t] of [...timers].sort((a, b) => a[1].ms - b[1].ms)) {
        if (t.ms <= ms && timers.has(id)) { timers.delete(id); t.fn(); }
      }
    },
    get count() { return timers.size; },
    /** The delays of the timers set and not yet fired or cleared. */
    get pending() { return [...timers.values()].map((t) => t.ms); },
  };
}
