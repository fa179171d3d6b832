// @ts-check
// Text as a terminal shows it, for a cell's streams: pure functions, no DOM
// (tested with node --test, tests/js/terminal.test.mjs).

// Terminal escape sequences (colours, cursor moves, window titles): a cell's output drops them.
// eslint-disable-next-line no-control-regex
const ANSI_ESCAPE = /\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z])/g;

/** `text` without terminal escape sequences, and with Windows line ends as "\n". @param {string} text */
export function plain(text) {
  return text.replace(ANSI_ESCAPE, "").replace(/\r\n/g, "\n");
}

/**
 * Each line of `text` as a terminal leaves it: after a carriage return, what
 * follows overwrites the line from its start ("50%\r100%" shows "100%").
 * @param {string} text
 */
export function overwriteReturns(text) {
  if (!text.includes("\r")) return text;
  return text
    .split("\n")
    .map((line) => line.split("\r").reduce((shown, part) => part + shown.slice(part.length), ""))
    .join("\n");
}

/**
 * A stream as a terminal shows it, fed in pieces: finished lines are final,
 * the last line stays open, since a carriage return in a later piece may
 * still overwrite it.
 */
export class TerminalLine {
  constructor() {
    this.raw = ""; // the open line as written, returns and all
  }

  /**
   * Feed `text`; returns the lines it finished (as shown, each ending in "\n",
   * or "" when none) and the open line as shown.
   * @param {string} text
   * @returns {{finished: string, open: string}}
   */
  feed(text) {
    const pending = this.raw + plain(text);
    const cut = pending.lastIndexOf("\n");
    const finished = cut >= 0 ? overwriteReturns(pending.slice(0, cut + 1)) : "";
    // Only the last carriage return's part still overwrites: what came before
    // it is kept as shown, so a long progress bar stays one line's worth.
    let raw = pending.slice(cut + 1);
    const back = raw.lastIndexOf("\r");
    if (back > 0) raw = `${overwriteReturns(raw.slice(0, back))}\r${raw.slice(back + 1)}`;
    this.raw = raw;
    return { finished, open: overwriteReturns(raw) };
  }
}
