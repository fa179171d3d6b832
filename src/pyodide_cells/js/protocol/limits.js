// @ts-check
// The output limits, from ../../limits.json, the one file the Python cell
// runner (python/runner.py) reads too: what the page shows, what the runner
// sends, and how long Stop waits are decided in one place. Both calls below are
// marked pure: esbuild cannot prove a spread free of effects, and kept the limits
// in every bundle that uses none of them (boot.js, nav.js, sw.js).

import LIMITS_JSON from "../../limits.json" with { type: "json" };

/**
 * Output limits, shared with the cell runner (runner.py reads the same file).
 * @type {{outputChars: number, richCharsPerOutput: number, richCharsPerRun: number, renderedTextChars: number,
 *   streamFlushChars: number, streamFlushMs: number, streamEagerMessages: number, stopGraceMs: number, stopResendMs: number,
 *   siteSnapshotBudgetMs: number}}
 */
export const LIMITS = /* @__PURE__ */ Object.freeze(/* @__PURE__ */ Object.assign({}, LIMITS_JSON));
