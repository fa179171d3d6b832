"""Inline SVG pictures of a training run: the loss curve and the decision regions.

The two plots of micrograd's ``demo.ipynb`` (Karpathy, 2020,
github.com/karpathy/micrograd), drawn without matplotlib so they render in
Pyodide: :class:`LossCurve` (loss and accuracy per step of
:func:`labs.nn.train`), :class:`DecisionBoundary` (the model's sign evaluated
on a grid, shaded, under the data) and :class:`TrainingReport` (both side by
side, stacking on a narrow screen, with a one-line summary).

Each SVG is self-contained (no URLs, no fonts, no scripts), responsive
(viewBox, width 100%, a max-width), has role="img" with a <title> and a
<desc> that states the numbers, uses currentColor for text and axes so it
reads on light and dark pages, and two colors with >= 3:1 contrast on white
and near-black (blue #2C7FB8, vermillion #D55E00, as labs.softmax_trace)
that also differ in shape: class -1 is a circle, class +1 a square. All text
is escaped.
"""

import itertools
import math
from html import escape  # xml.sax.saxutils would import urllib.request and email: 70 ms

__all__ = ["LossCurve", "DecisionBoundary", "TrainingReport", "LinePlot", "NEG_COLOR", "POS_COLOR"]

NEG_COLOR = "#2C7FB8"  # class -1, and the loss curve
POS_COLOR = "#D55E00"  # class +1, and the accuracy curve
_ids = itertools.count()  # unique <title>/<desc> ids when a page shows several pictures


def _nice_ticks(lo, hi, target=5):
    """About `target` round tick values (1, 2 or 5 times a power of 10) in [lo, hi]."""
    span = hi - lo
    if not span > 0:
        raise ValueError(f"tick range must have hi > lo, got [{lo!r}, {hi!r}]")
    step = 10.0 ** math.floor(math.log10(span / target))
    for m in (1.0, 2.0, 5.0, 10.0):
        if span / (m * step) <= target:
            step *= m
            break
    first = math.ceil(lo / step - 1e-9)
    return [round((first + i) * step, 12) for i in range(int((hi - lo) / step + 1e-9) + 2) if (first + i) * step <= hi + 1e-9 * step]


def _fmt(v):
    """A tick label: shortest form, true minus sign, no '-0'."""
    text = f"{v:.6g}" if v != 0 else "0"
    return text.replace("-", "\u2212")


def _svg_open(width, height, title, desc, css_class):
    uid = next(_ids)
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width}px;height:auto" role="img" class="{css_class}" '
        f'aria-labelledby="nn-title-{uid}" aria-describedby="nn-desc-{uid}" '
        'font-family="system-ui, sans-serif" font-size="11" fill="currentColor">',
        f'<title id="nn-title-{uid}">{escape(title)}</title>',
        f'<desc id="nn-desc-{uid}">{escape(desc)}</desc>',
    ]


def _axis_ticks(out, x0, y0, x1, y1, xticks, yticks, sx, sy, xlabel, ylabel):
    """Frame, ticks and labels of a plot box [x0, x1] x [y0, y1] (pixels)."""
    out.append(f'<path d="M{x0},{y0}V{y1}H{x1}" fill="none" stroke="currentColor" stroke-opacity="0.8"/>')
    for v in xticks:
        x = sx(v)
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y1}" y2="{y1 + 4}" stroke="currentColor"/>'
            f'<text x="{x:.1f}" y="{y1 + 16}" text-anchor="middle">{escape(_fmt(v))}</text>'
        )
    for v in yticks:
        y = sy(v)
        out.append(
            f'<line x1="{x0 - 4}" x2="{x0}" y1="{y:.1f}" y2="{y:.1f}" stroke="currentColor"/>'
            f'<text x="{x0 - 7}" y="{y + 4:.1f}" text-anchor="end">{escape(_fmt(v))}</text>'
        )
    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y1 + 32}" text-anchor="middle">{escape(xlabel)}</text>')
    out.append(f'<text transform="translate(14 {(y0 + y1) / 2:.1f}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>')


def _check_history(history):
    rows = list(history)
    if not rows:
        raise ValueError("history is empty: expected (step, loss, accuracy) tuples from labs.nn.train")
    for i, row in enumerate(rows):
        if len(row) != 3 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in row) or not 0 <= row[2] <= 1:
            raise ValueError(f"history[{i}] = {row!r}: expected (step, loss, accuracy) with finite numbers and accuracy in [0, 1]")
    return rows


class LossCurve:
    """Line chart of the training loss (solid) and accuracy (dashed) per step.

    Args:
        history: list of T tuples (step, loss, accuracy) as returned by
            :func:`labs.nn.train`; loss >= 0 (no unit), accuracy in [0, 1].
        title: the SVG <title> (escaped).
    Raises:
        ValueError: an empty history or a row that is not three finite
            numbers with accuracy in [0, 1].

    >>> svg = LossCurve([(0, 1.0, 0.5), (1, 0.5, 0.75), (2, 0.25, 1.0)])._repr_svg_()
    >>> svg.startswith('<svg'), 'final loss 0.25' in svg, 'accuracy 100' in svg
    (True, True, True)
    """

    W, H, LEFT, RIGHT, TOP, BOTTOM = 440, 300, 56, 52, 34, 252

    def __init__(self, history, title="Training loss and accuracy per step"):
        self.history = _check_history(history)
        self.title = str(title)

    def description(self):
        """Plain-text summary (the <desc>): steps, first and final loss, accuracy."""
        (s0, l0, a0), (s1, l1, a1) = self.history[0], self.history[-1]
        return (
            f"Loss (solid blue line, left axis) and training accuracy (dashed vermillion "
            f"line, right axis) over steps {s0} to {s1}: loss {l0:.4g} at step {s0}, "
            f"final loss {l1:.4g}; accuracy {100 * a0:.0f} % at step {s0}, final "
            f"accuracy {100 * a1:.0f} %."
        )

    def _repr_svg_(self):
        steps = [r[0] for r in self.history]
        losses = [r[1] for r in self.history]
        s_lo, s_hi = min(steps), max(steps)
        if s_hi == s_lo:
            s_hi = s_lo + 1
        l_hi = max(max(losses) * 1.05, 1e-12)
        x0, x1, y0, y1 = self.LEFT, self.W - self.RIGHT, self.TOP, self.BOTTOM

        def sx(s):
            return x0 + (x1 - x0) * (s - s_lo) / (s_hi - s_lo)

        def sy(v):
            return y1 - (y1 - y0) * v / l_hi

        def sa(a):
            return y1 - (y1 - y0) * a

        out = _svg_open(self.W, self.H + 10, self.title, self.description(), "nn-loss-curve")
        _axis_ticks(out, x0, y0, x1, y1, _nice_ticks(s_lo, s_hi), _nice_ticks(0.0, l_hi), sx, sy, "step", "loss")
        # right axis: accuracy in percent
        out.append(f'<path d="M{x1},{y0}V{y1}" stroke="currentColor" stroke-opacity="0.8"/>')
        for a in (0.0, 0.25, 0.5, 0.75, 1.0):
            y = sa(a)
            out.append(
                f'<line x1="{x1}" x2="{x1 + 4}" y1="{y:.1f}" y2="{y:.1f}" stroke="currentColor"/>'
                f'<text x="{x1 + 7}" y="{y + 4:.1f}">{100 * a:.0f}</text>'
            )
        out.append(
            f'<text transform="translate({self.W - 10} {(y0 + y1) / 2:.1f}) rotate(90)" text-anchor="middle">accuracy (%)</text>'
        )
        loss_path = " L".join(f"{sx(s):.1f},{sy(v):.1f}" for s, v, _ in self.history)
        acc_path = " L".join(f"{sx(s):.1f},{sa(a):.1f}" for s, _, a in self.history)
        out.append(f'<path d="M{acc_path}" fill="none" stroke="{POS_COLOR}" stroke-width="2" stroke-dasharray="6 3"/>')
        out.append(f'<path d="M{loss_path}" fill="none" stroke="{NEG_COLOR}" stroke-width="2"/>')
        # legend, above the plot box
        out.append(
            f'<path d="M{x0},18 h22" stroke="{NEG_COLOR}" stroke-width="2"/>'
            f'<text x="{x0 + 28}" y="22">loss (final {self.history[-1][1]:.3g})</text>'
            f'<path d="M{x0 + 170},18 h22" stroke="{POS_COLOR}" stroke-width="2" '
            f'stroke-dasharray="6 3"/><text x="{x0 + 198}" y="22">accuracy '
            f"(final {100 * self.history[-1][2]:.0f} %)</text>"
        )
        out.append("</svg>")
        return "\n".join(out)

    def _repr_html_(self):
        return f'<div class="nn-plot">{self._repr_svg_()}</div>'


def _score(model, point):
    """The model's score at point as a float (model returns a Value or a number)."""
    out = model(point)
    return float(getattr(out, "data", out))


class DecisionBoundary:
    """The plane shaded by the sign of the model's score, with the data on top.

    Like the last plot of micrograd's demo: the model is evaluated at the
    centre of each of grid x grid cells covering the data (padded by 0.5
    units), cells with score > 0 are shaded as class +1, the rest as -1
    (neighbouring cells of one class are merged into one rectangle per row).
    Points are circles (y = -1) and squares (y = +1); a misclassified point
    gets a thick outline.

    Args:
        model: callable on [x1, x2] returning a Value or a float (the score).
        X: N points, each [x1, x2] (data units). y: N labels in {-1, +1}.
        grid: cells per side, an int in [2, 200] (grid**2 model calls).
        title: the SVG <title> (escaped).
    Raises:
        ValueError: len(X) != len(y), empty X, a point that is not two finite
            numbers, a label not -1/+1, or a bad grid.

    >>> d = DecisionBoundary(lambda p: p[0], [[-1, 0], [1, 0.5]], [-1, 1], grid=4)
    >>> d.accuracy, d._repr_svg_().count('class="nn-point')
    (1.0, 2)
    """

    SIZE, LEFT, TOP, PAD = 400, 50, 30, 40

    def __init__(self, model, X, y, grid=40, title="Decision regions of the model"):
        if len(X) != len(y) or not X:
            raise ValueError(f"need as many labels as points (at least one), got {len(X)} points and {len(y)} labels")
        for i, (p, label) in enumerate(zip(X, y)):
            if len(p) != 2 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in p):
                raise ValueError(f"X[{i}] = {p!r}: expected two finite numbers [x1, x2]")
            if label not in (-1, 1):
                raise ValueError(f"y[{i}] = {label!r}: labels must be -1 or +1")
        if not isinstance(grid, int) or isinstance(grid, bool) or not 2 <= grid <= 200:
            raise ValueError(f"grid must be an int in [2, 200], got {grid!r}")
        self.X, self.y, self.grid, self.title = [list(p) for p in X], list(y), grid, str(title)
        xs, ys = [p[0] for p in X], [p[1] for p in X]
        self.x_range = (min(xs) - 0.5, max(xs) + 0.5)
        self.y_range = (min(ys) - 0.5, max(ys) + 0.5)
        (ax, bx), (ay, by) = self.x_range, self.y_range
        # (grid, grid) booleans, row 0 at the top (largest x2): score > 0 there
        self.positive = [
            [_score(model, [ax + (bx - ax) * (i + 0.5) / grid, by - (by - ay) * (j + 0.5) / grid]) > 0 for i in range(grid)]
            for j in range(grid)
        ]
        self.scores = [_score(model, p) for p in self.X]
        self.correct = [(s > 0) == (label > 0) for s, label in zip(self.scores, self.y)]
        self.accuracy = sum(self.correct) / len(self.X)

    def description(self):
        """Plain-text summary (the <desc>): points, classes, accuracy, shaded share."""
        n, k = len(self.X), sum(self.correct)
        share = sum(map(sum, self.positive)) / self.grid**2
        return (
            f"{n} points: {self.y.count(-1)} of class -1 (blue circles), {self.y.count(1)} "
            f"of class +1 (vermillion squares), over the region where the model predicts each "
            f"class ({100 * share:.0f} % of the plane shown is predicted +1). Accuracy "
            f"{100 * self.accuracy:.0f} % ({k} of {n} correct); "
            f"misclassified points have a thick outline."
        )

    def _repr_svg_(self):
        s, x0, y0, g = self.SIZE, self.LEFT, self.TOP, self.grid
        (ax, bx), (ay, by) = self.x_range, self.y_range
        w = h = s - self.LEFT - self.PAD  # plot box (pixels)

        def sx(v):
            return x0 + w * (v - ax) / (bx - ax)

        def sy(v):
            return y0 + h * (by - v) / (by - ay)

        out = _svg_open(s, s + 12, self.title, self.description(), "nn-decision-boundary")
        cell_w, cell_h = w / g, h / g
        out.append('<g fill-opacity="0.22" shape-rendering="crispEdges">')
        for j, row in enumerate(self.positive):
            i = 0
            while i < g:  # one rect per run of equal cells in the row
                k = i
                while k < g and row[k] == row[i]:
                    k += 1
                out.append(
                    f'<rect x="{x0 + i * cell_w:.2f}" y="{y0 + j * cell_h:.2f}" '
                    f'width="{(k - i) * cell_w:.2f}" height="{cell_h:.2f}" '
                    f'fill="{POS_COLOR if row[i] else NEG_COLOR}"/>'
                )
                i = k
        out.append("</g>")
        _axis_ticks(out, x0, y0, x0 + w, y0 + h, _nice_ticks(ax, bx), _nice_ticks(ay, by), sx, sy, "x\u2081", "x\u2082")
        out.append('<g stroke="currentColor">')
        for (px, py), label, score, ok in zip(self.X, self.y, self.scores, self.correct):
            cx, cy = sx(px), sy(py)
            tip = escape(f"({px:.3g}, {py:.3g}): y = {label:+d}, score {score:+.3g}" + ("" if ok else ", misclassified"))
            stroke = 'stroke-width="0.75" stroke-opacity="0.7"' if ok else 'stroke-width="2.5"'
            if label < 0:
                out.append(
                    f'<circle class="nn-point nn-neg" cx="{cx:.1f}" cy="{cy:.1f}" r="4.2" '
                    f'fill="{NEG_COLOR}" {stroke}><title>{tip}</title></circle>'
                )
            else:
                out.append(
                    f'<rect class="nn-point nn-pos" x="{cx - 3.8:.1f}" y="{cy - 3.8:.1f}" '
                    f'width="7.6" height="7.6" fill="{POS_COLOR}" {stroke}>'
                    f"<title>{tip}</title></rect>"
                )
        out.append("</g>")
        # legend above the plot box
        lx = 16
        out.append(
            f'<circle cx="{lx + 5}" cy="14" r="4.2" fill="{NEG_COLOR}" stroke="currentColor" '
            f'stroke-width="0.75"/><text x="{lx + 14}" y="18">y = \u22121</text>'
            f'<rect x="{lx + 71.2}" y="10.2" width="7.6" height="7.6" fill="{POS_COLOR}" '
            f'stroke="currentColor" stroke-width="0.75"/><text x="{lx + 84}" y="18">y = +1</text>'
            f'<text x="{x0 + w}" y="18" text-anchor="end">shade = prediction, '
            f"{100 * self.accuracy:.0f} % correct</text>"
        )
        out.append("</svg>")
        return "\n".join(out)

    def _repr_html_(self):
        return f'<div class="nn-plot">{self._repr_svg_()}</div>'


class TrainingReport:
    """Loss curve and decision regions side by side, with a one-line summary.

    The two pictures sit in a flex row that wraps, so on a phone (390 px)
    they stack. Renders through ``_repr_html_``.

    Args:
        history: (step, loss, accuracy) tuples from :func:`labs.nn.train`.
        model, X, y, grid: as :class:`DecisionBoundary`.
    Raises:
        ValueError: as LossCurve and DecisionBoundary.

    >>> r = TrainingReport([(0, 1.0, 0.5), (1, 0.25, 1.0)], lambda p: p[0],
    ...                    [[-1, 0], [1, 0]], [-1, 1], grid=4)
    >>> r.summary()
    'Trained 1 step: loss 1 \u2192 0.25, training accuracy 100 % (2 of 2 points).'
    """

    def __init__(self, history, model, X, y, grid=40):
        self.curve = LossCurve(history)
        self.boundary = DecisionBoundary(model, X, y, grid=grid)

    def summary(self):
        """One line: steps, first and final loss, accuracy of the model on X."""
        (s0, l0, _), (s1, l1, _) = self.curve.history[0], self.curve.history[-1]
        b = self.boundary
        n = s1 - s0
        return (
            f"Trained {n} step{'' if n == 1 else 's'}: loss {l0:.3g} \u2192 {l1:.3g}, training accuracy "
            f"{100 * b.accuracy:.0f} % ({sum(b.correct)} of {len(b.X)} points)."
        )

    def _repr_html_(self):
        cell = 'style="flex:1 1 300px;min-width:0;max-width:460px"'
        return (
            f'<div class="nn-training-report">'
            f'<p style="margin:0 0 .5em">{escape(self.summary())}</p>'
            f'<div style="display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start">'
            f"<div {cell}>{self.curve._repr_svg_()}</div>"
            f"<div {cell}>{self.boundary._repr_svg_()}</div></div></div>"
        )


class LinePlot:
    """Line chart of several series over one x axis (e.g. latency against request rate).

    Args:
        series: list of (label, points) with points a list of (x, y) finite numbers,
            at least one point per series; drawn in NEG_COLOR solid, POS_COLOR dashed,
            then grey dotted, in that order.
        xlabel, ylabel: the axis labels; title: the SVG <title> (escaped).
        y_max: the top of the y axis (None: 5 % above the largest y); points above are clipped.

    Raises ValueError for an empty series list, a series without points, or a non-finite value.

    >>> svg = LinePlot([("a", [(0, 1.0), (1, 2.0)]), ("b", [(0, 0.5), (1, 0.5)])], "x", "y")._repr_svg_()
    >>> svg.startswith("<svg"), "a: 2 points" in svg
    (True, True)
    """

    W, H, LEFT, RIGHT, TOP, BOTTOM = 440, 290, 60, 16, 40, 246
    STYLES = ((NEG_COLOR, ""), (POS_COLOR, ' stroke-dasharray="6 3"'), ("#777777", ' stroke-dasharray="2 3"'))

    def __init__(self, series, xlabel, ylabel, title="Line plot", y_max=None):
        self.series = [(str(label), [(float(x), float(y)) for x, y in points]) for label, points in series]
        if not self.series or any(not pts for _, pts in self.series):
            raise ValueError("series: expected at least one (label, points) with at least one (x, y) point each")
        if not all(math.isfinite(v) for _, pts in self.series for p in pts for v in p):
            raise ValueError("series: every x and y must be a finite number")
        self.xlabel, self.ylabel, self.title, self.y_max = str(xlabel), str(ylabel), str(title), y_max

    def description(self):
        """Plain-text summary (the <desc>): each series' points."""
        return " ".join(
            f"{label}: {len(pts)} points, " + ", ".join(f"({x:.4g}, {y:.4g})" for x, y in pts) + "." for label, pts in self.series
        )

    def _repr_svg_(self):
        xs = [x for _, pts in self.series for x, _ in pts]
        x_lo, x_hi = min(xs), max(xs)
        if x_hi == x_lo:
            x_hi = x_lo + 1
        y_hi = self.y_max if self.y_max else max(max(y for _, pts in self.series for _, y in pts) * 1.05, 1e-12)
        x0, x1, y0, y1 = self.LEFT, self.W - self.RIGHT, self.TOP, self.BOTTOM

        def sx(x):
            return x0 + (x1 - x0) * (x - x_lo) / (x_hi - x_lo)

        def sy(y):
            return y1 - (y1 - y0) * min(max(y, 0.0), y_hi) / y_hi

        out = _svg_open(self.W, self.H, self.title, self.description(), "line-plot")
        _axis_ticks(out, x0, y0, x1, y1, _nice_ticks(x_lo, x_hi), _nice_ticks(0.0, y_hi), sx, sy, self.xlabel, self.ylabel)
        for i, (label, pts) in enumerate(self.series):
            colour, dash = self.STYLES[i % len(self.STYLES)]
            path = " L".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f'<path d="M{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            out.extend(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>' for x, y in pts)
            lx = x0 + 200 * (i % 2)
            ly = 14 + 14 * (i // 2)
            out.append(
                f'<path d="M{lx},{ly - 4} h22" stroke="{colour}" stroke-width="2"{dash}/>'
                f'<text x="{lx + 28}" y="{ly}">{escape(label)}</text>'
            )
        out.append("</svg>")
        return "\n".join(out)

    def _repr_html_(self):
        return f'<div class="nn-plot">{self._repr_svg_()}</div>'
