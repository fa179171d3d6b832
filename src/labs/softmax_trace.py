"""SoftmaxTrace: an inline SVG picture of the online softmax running max and alpha.

The picture for Lab 2. For a row of logits it draws, step by step (or block by
block), the logits, the running max m and the rescaling factor
alpha = exp(m_prev - m) of the online softmax (Milakov & Gimelshein, 2018,
Algorithm 3; see :mod:`labs.attention`). Logits and m share a symlog axis,
y = sign(v) log10(1 + |v|), so +-1000 and small values are both visible; -inf
sits on its own band at the bottom. alpha has its own [0, 1] axis.

The SVG is self-contained (no fonts or URLs), responsive (viewBox, width 100%),
uses currentColor for text and axes so it reads on light and dark pages, and
two colors with >= 3:1 contrast on white, black and #131416 (blue #2C7FB8 for
m: 4.3, 4.8, 4.2; vermillion #D55E00 for alpha: 3.9, 5.4, 4.8), which stay
distinct under color-vision deficiency and also differ in marker and dash.
"""

from __future__ import annotations

import itertools
import math
from html import escape  # xml.sax.saxutils would import urllib.request and email: 70 ms

from labs.attention import as_logits, online_softmax

M_COLOR = "#2C7FB8"
ALPHA_COLOR = "#D55E00"
DEFAULT_LOGITS = (3.0, 1000.0, -1000.0, 999.0, 1000.0, -2.0)

_W, _LEFT, _RIGHT = 640, 64, 16
_TOP_Y0, _TOP_Y1 = 34, 194  # symlog panel, top and bottom (pixels)
_NEG_INF_Y = 212  # the -inf band
_A_Y0, _A_Y1 = 250, 320  # alpha panel
_H = 352
_ids = itertools.count()  # unique ids when several pictures share a page


def _symlog(v: float) -> float:
    return math.copysign(math.log10(1.0 + abs(v)), v)


def _fmt(v: float) -> str:
    if v == -math.inf:
        return "-inf"
    return f"{v:.6g}"


class SoftmaxTrace:
    """Picture of the online softmax of one row: logits, running max m, alpha.

    Args:
        logits: (N,) floats or -inf, N >= 1. Default: [3, 1000, -1000, 999, 1000, -2].
        block_sizes: optional ints >= 1 summing to N; then m and alpha are
            drawn at each block boundary (``online_softmax(..., block_sizes)``).
        title: text of the SVG <title> (escaped); a default describes the row.

    Raises:
        ValueError, TypeError: as ``labs.attention.online_softmax``; an empty row.

    Displays itself in Jupyter / the lab pages via ``_repr_svg_`` and
    ``_repr_html_``.

    >>> t = SoftmaxTrace([3.0, 1000.0, -1000.0])
    >>> [s.m for s in t.result.steps], [s.alpha for s in t.result.steps]
    ([3.0, 1000.0, 1000.0], [0.0, 0.0, 1.0])
    >>> t._repr_svg_().startswith('<svg')
    True
    """

    def __init__(self, logits=None, block_sizes=None, title: str | None = None):
        if title is not None and not isinstance(title, str):  # checked here, not when drawn
            raise TypeError(f"title must be a str or None, got {title!r} ({type(title).__name__})")
        self.logits = as_logits(DEFAULT_LOGITS if logits is None else logits)
        if not self.logits:
            raise ValueError("logits is empty; expected at least one logit to draw")
        self.block_sizes = None if block_sizes is None else list(block_sizes)
        self.result = online_softmax(self.logits, self.block_sizes)
        # index of the last logit of each step: where m and alpha are drawn
        ends, e = [], -1
        for b in self.block_sizes or [1] * len(self.logits):
            e += b
            ends.append(e)
        self.step_ends = ends
        self.title = (
            title if title is not None else (f"Online softmax of {len(self.logits)} logits: running max m and rescaling factor alpha")
        )

    def description(self) -> str:
        """Plain-text summary of the data drawn (used as the SVG <desc>).

        >>> SoftmaxTrace([0.0, -math.inf]).description()
        'Logits: 0, -inf. Running max m after each step: 0, 0. ...'
        """
        per = "block" if self.block_sizes else "step"
        return (
            f"Logits: {', '.join(map(_fmt, self.logits))}. "
            + (f"Block sizes: {', '.join(map(str, self.block_sizes))}. " if self.block_sizes else "")
            + f"Running max m after each {per}: {', '.join(_fmt(s.m) for s in self.result.steps)}. "
            + f"Rescaling factor alpha = exp(m_prev - m) at each {per}: "
            + f"{', '.join(_fmt(s.alpha) for s in self.result.steps)}. "
            + f"Final logsumexp: {_fmt(self.result.logsumexp)}."
        )

    # ------------------------------------------------------------------ drawing
    def _x(self, i: float) -> float:
        n = len(self.logits)
        return _LEFT + (_W - _LEFT - _RIGHT) * (i + 0.5) / n

    def _y_sym(self, v: float, lo: float, hi: float) -> float:
        if v == -math.inf:
            return _NEG_INF_Y
        return _TOP_Y1 - (_TOP_Y1 - _TOP_Y0) * (_symlog(v) - lo) / (hi - lo)

    @staticmethod
    def _y_alpha(a: float) -> float:
        return _A_Y1 - (_A_Y1 - _A_Y0) * a

    def _repr_svg_(self) -> str:
        finite = [v for v in self.logits if v != -math.inf] + [0.0]
        lo, hi = _symlog(min(finite)), _symlog(max(finite))
        pad = 0.05 * max(hi - lo, 1.0)
        lo, hi = lo - pad, hi + pad
        ys = lambda v: self._y_sym(v, lo, hi)  # noqa: E731
        uid = next(_ids)
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" '
            f'width="100%" style="max-width:{_W}px;height:auto" role="img" '
            f'aria-labelledby="st-title-{uid}" aria-describedby="st-desc-{uid}" '
            'font-family="sans-serif" font-size="11">',
            f'<title id="st-title-{uid}">{escape(self.title)}</title>',
            f'<desc id="st-desc-{uid}">{escape(self.description())}</desc>',
            '<g fill="none" stroke="currentColor" stroke-opacity="0.8">',
            f'<path d="M{_LEFT},{_TOP_Y0}V{_TOP_Y1}H{_W - _RIGHT}"/>',
            f'<path d="M{_LEFT},{_A_Y0}V{_A_Y1}H{_W - _RIGHT}"/>',
            '</g><g fill="currentColor">',
        ]
        # symlog ticks: 0, then +-10^k, then +-5*10^k, +-2*10^k, inside [lo, hi],
        # largest first, none closer than 12 px to one already kept
        kept = []
        for v in [0.0] + [s * f * 10.0**k for f in (1.0, 5.0, 2.0) for k in range(307, -1, -1) for s in (1.0, -1.0)]:
            if not lo <= _symlog(v) <= hi:
                continue
            y = ys(v)
            if all(abs(y - y2) >= 12 for y2 in kept):
                kept.append(y)
                out.append(
                    f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>'
                    f'<line x1="{_LEFT - 3}" x2="{_LEFT}" y1="{y:.1f}" y2="{y:.1f}" '
                    'stroke="currentColor"/>'
                )
        if -math.inf in self.logits:
            out.append(f'<text x="{_LEFT - 6}" y="{_NEG_INF_Y + 4}" text-anchor="end">\u2212\u221e</text>')
        for a in (0.0, 0.5, 1.0):
            y = self._y_alpha(a)
            out.append(f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{a:g}</text>')
        out.append(f'<text x="{_LEFT}" y="{_TOP_Y0 - 18}">logits (discs) and running max m (symlog scale)</text>')
        out.append(f'<text x="{_LEFT}" y="{_A_Y0 - 10}">rescaling factor \u03b1 = exp(m_prev \u2212 m)</text>')
        for i in range(len(self.logits)):
            out.append(f'<text x="{self._x(i):.1f}" y="{_H - 8}" text-anchor="middle">{i}</text>')
        out.append("</g>")
        # block boundaries
        if self.block_sizes:
            for e in self.step_ends[:-1]:
                x = self._x(e + 0.5)
                out.append(
                    f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP_Y0}" y2="{_A_Y1}" '
                    'stroke="currentColor" stroke-opacity="0.4" stroke-dasharray="2 3"/>'
                )
        # running max m: line + diamonds, in M_COLOR
        pts = [(self._x(e), ys(s.m)) for e, s in zip(self.step_ends, self.result.steps)]
        path = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        out.append(f'<path d="{path}" fill="none" stroke="{M_COLOR}" stroke-width="2"/>')
        for (x, y), s in zip(pts, self.result.steps):
            out.append(
                f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                f'transform="rotate(45 {x:.1f} {y:.1f})" fill="{M_COLOR}">'
                f"<title>{escape(f'm = {_fmt(s.m)}')}</title></rect>"
            )
        # alpha: dashed line + squares, in ALPHA_COLOR
        pts = [(self._x(e), self._y_alpha(s.alpha)) for e, s in zip(self.step_ends, self.result.steps)]
        path = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        out.append(f'<path d="{path}" fill="none" stroke="{ALPHA_COLOR}" stroke-width="2" stroke-dasharray="5 3"/>')
        for (x, y), s in zip(pts, self.result.steps):
            out.append(
                f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                f'fill="{ALPHA_COLOR}">'
                f"<title>{escape(f'alpha = {_fmt(s.alpha)}')}</title></rect>"
            )
        # logits on top: translucent discs with an outline, so m never hides them
        out.append('<g fill="currentColor" stroke="currentColor">')
        for i, v in enumerate(self.logits):
            out.append(
                f'<circle cx="{self._x(i):.1f}" cy="{ys(v):.1f}" r="4.5" '
                'fill-opacity="0.35" stroke-width="1.2">'
                f"<title>{escape(f'logit[{i}] = {_fmt(v)}')}</title></circle>"
            )
        out.append("</g>")
        # legend
        lx = _W - _RIGHT - 150
        out.append(
            f'<g fill="currentColor"><rect x="{lx}" y="6" width="8" height="8" '
            f'transform="rotate(45 {lx + 4} 10)" fill="{M_COLOR}"/>'
            f'<text x="{lx + 14}" y="14">m</text>'
            f'<rect x="{lx + 40}" y="6" width="8" height="8" fill="{ALPHA_COLOR}"/>'
            f'<text x="{lx + 54}" y="14">\u03b1</text>'
            f'<circle cx="{lx + 84}" cy="10" r="4.5" fill-opacity="0.35" '
            'stroke="currentColor" stroke-width="1.2"/>'
            f'<text x="{lx + 94}" y="14">logit</text></g>'
        )
        out.append("</svg>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return f'<div class="softmax-trace">{self._repr_svg_()}</div>'
