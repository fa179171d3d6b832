// @ts-check
// The output limits, from ../../limits.json, the one file the Python cell
// runner (python/runner.py) reads too: what the page shows, what the runner
// sends, and how long Stop waits are decided in one place.

import LIMITS_JSON from "../../limits.json" with { type: "json" };

/**
 * Output limits, shared with the cell runner (runner.py reads the same file).
 * @type {{outputChars: number, richCharsPerOutput: number, richCharsPerRun: number, renderedTextChars: number,
 *   streamFlushChars: number, streamFlushMs: number, streamEagerMessages: number, stopGraceMs: number, stopResendMs: number,
 *   siteSnapshotBudgetMs: number}}
 */
export const LIMITS = /* @__PURE__ */ Object.freeze({ ...LIMITS_JSON });
