// @ts-check
// Why a run ended without an answer from Python (cancelled, interrupted, or failed before it
// ran), as codes, and the words each code is shown with: here and nowhere else. The scheduler
// sets a run's `cause` (a code) and its `reason` (the words, looked up here); the views show the
// words and compare only the codes, so rewording a message changes no behaviour.

/**
 * The codes of a run's `cause`.
 * @typedef {typeof REASON[keyof typeof REASON]} Reason
 */
export const REASON = Object.freeze({
  /** the run ended as Python answered it, or Python ran it and it raised: no reason of the runtime's */
  none: "none",
  /** Stop was pressed while it ran, and Python raised KeyboardInterrupt in it */
  stopped: "stopped",
  /** Stop was pressed while it waited */
  stoppedBeforeRun: "stopped-before-run",
  /** Stop was pressed on a page without an interrupt buffer: the worker was replaced */
  stopReplaced: "stop-replaced",
  /** Stop was pressed and Python did not answer within the grace period: the worker was replaced */
  stopUnanswered: "stop-unanswered",
  /** Restart was pressed while Python was busy or loading: the worker was replaced */
  restarted: "restarted",
  /** Restart was pressed after Python failed to start: the start is tried again */
  retried: "retried",
  /** the worker died (`fatal`): it was replaced; the detail is what it said */
  crashed: "crashed",
  /** Python failed to start, so nothing can run; the detail is the failed step's message */
  unavailable: "unavailable",
});

/** @type {Record<Reason, (detail: string) => string>} */
const WORDS = {
  none: () => "",
  stopped: () => "Stop was pressed",
  "stopped-before-run": () => "Stop was pressed before it ran",
  "stop-replaced": () => "Python was stopped and restarted: the namespace was reset (earlier cells re-run when needed)",
  "stop-unanswered": () => "Python did not respond to Stop, so it was restarted: the namespace was reset",
  restarted: () => "Python was restarted: the namespace is empty",
  retried: () => "Python was restarted",
  crashed: (detail) => `Python crashed (${detail}) and was restarted: the namespace was reset`,
  unavailable: (detail) => `Python is not available: ${detail}`,
};

/**
 * The words a run's cause is shown with (a cell's status line, the assertion console).
 * @param {Reason} cause
 * @param {string} [detail]  what the worker said, for `crashed` and `unavailable`
 * @returns {string}  "" for `none`
 *
 * @example
 * reasonText(REASON.stoppedBeforeRun)            // "Stop was pressed before it ran"
 * reasonText(REASON.unavailable, "no network")   // "Python is not available: no network"
 */
export function reasonText(cause, detail = "") {
  return WORDS[cause](detail);
}

/**
 * What the status bar says while a replaced worker starts: why it was replaced. A start tried
 * again after a failure needs no word (the bar says it restarts).
 * @param {Reason} cause @param {string} [detail]
 */
export function replacedNote(cause, detail = "") {
  return cause === REASON.retried ? "" : reasonText(cause, detail);
}

/** What the status bar says once Restart emptied the namespace of the same interpreter. */
export const RESET_NOTE = "Python restarted: the namespace is empty (imported modules and patched built-ins stay: reload the page for a fresh interpreter)";
