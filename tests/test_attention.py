"""Tests for labs.attention (Lab 2: online softmax, FlashAttention) and its picture."""

import math
import random
import struct
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.attention import (
    FLOAT32_EXP_MAX,
    Float32Overflow,
    OnlineSoftmaxStep,
    SoftmaxState,
    attention,
    flash_attention,
    logsumexp,
    online_softmax,
    online_softmax_float32,
    rescaling_factor,
    softmax,
    softmax_naive,
    softmax_naive_float32,
    to_float32,
)
from labs.softmax_trace import ALPHA_COLOR, M_COLOR, SoftmaxTrace

INF = math.inf
SVG = "{http://www.w3.org/2000/svg}"


def close(a, b, rel=1e-15, abs_=1e-300):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# --------------------------------------------------------------------------- exact values


@pytest.mark.parametrize("f", [softmax, lambda x: online_softmax(x).probs, lambda x: SoftmaxState().update(x).probs(x)])
def test_extreme_logits_exact(f):
    assert f([1000.0, 1000.0]) == [0.5, 0.5]
    assert f([1000.0, -1000.0]) == [1.0, 0.0]  # exp(-2000) underflows to exactly 0.0
    assert f([-1000.0, -1000.0]) == [0.5, 0.5]
    assert f([-INF, -INF]) == [0.0, 0.0]
    assert f([-INF, 0.0, 0.0]) == [0.0, 0.5, 0.5]


def test_logsumexp_exact_values():
    # ln 2 = 0.6931471805599453; 1000 + ln 2 rounds to the float below
    assert logsumexp([1000.0, 1000.0]) == 1000.6931471805599
    assert online_softmax([1000.0, 1000.0]).logsumexp == 1000.6931471805599
    assert logsumexp([-1000.0, -1000.0]) == -999.3068528194401
    assert online_softmax([-1000.0, -1000.0]).logsumexp == -999.3068528194401
    assert logsumexp([-INF, -INF]) == -INF
    assert online_softmax([-INF, -INF]).logsumexp == -INF
    assert logsumexp([]) == -INF


def test_all_masked_row_has_no_nan_and_alpha_is_one():
    r = online_softmax([-INF, -INF])
    assert r.probs == [0.0, 0.0]
    assert r.steps == [OnlineSoftmaxStep(-INF, 0.0, 1.0)] * 2
    assert rescaling_factor(-INF, -INF) == 1.0
    assert rescaling_factor(-INF, 3.0) == 0.0


def test_trace_of_running_max_and_alpha():
    r = online_softmax([3.0, 1000.0, -1000.0, 999.0, 1000.0, -2.0])
    assert [s.m for s in r.steps] == [3.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0]
    assert [s.alpha for s in r.steps] == [0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    # d after step 4 = 1 + e^-1 (the 999 term), after step 5 = 2 + e^-1
    assert close(r.steps[3].d, 1.0 + math.exp(-1.0))
    assert close(r.steps[4].d, 2.0 + math.exp(-1.0))
    assert close(r.logsumexp, 1000.0 + math.log(2.0 + math.exp(-1.0)))


def test_blocks_2_2_1_equal_full_softmax():
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    # independent: 5 + ln(1 + e^-1 + e^-2 + e^-3 + e^-4)
    expected_lse = 5.0 + math.log(math.fsum(math.exp(-k) for k in range(5)))
    assert close(expected_lse, 5.451914395937593)
    s = SoftmaxState().update(x[0:2]).update(x[2:4]).update(x[4:5])
    assert close(s.logsumexp, 5.451914395937593)
    for p, q in zip(s.probs(x), softmax(x)):
        assert close(p, q)
    r = online_softmax(x, block_sizes=[2, 2, 1])
    assert [st_.m for st_ in r.steps] == [2.0, 4.0, 5.0]
    assert [st_.alpha for st_ in r.steps] == [0.0, math.exp(-2.0), math.exp(-1.0)]
    assert r.probs == s.probs(x)


def test_merge_given_states():
    a, b = SoftmaxState(2, 1.3678794411714423), SoftmaxState(5, 1.5032147244080551)
    assert close(a.d, 1.0 + math.exp(-1.0)) and close(b.d, 1.0 + math.exp(-1.0) + math.exp(-2.0))
    ab = a.merge(b)
    assert ab.m == 5.0
    assert close(ab.d, 1.5713174316646532)
    assert close(ab.d, math.fsum(math.exp(-k) for k in range(5)))
    assert ab == b.merge(a)  # float + is commutative, so exactly equal
    assert a.merge(SoftmaxState()) == a and SoftmaxState().merge(a) == a


# --------------------------------------------------------------------------- properties

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
logit = st.one_of(finite, finite, finite, st.just(-INF))
rows = st.lists(logit, max_size=16)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_online_equals_safe_softmax(x):
    r, ref = online_softmax(x), softmax(x)
    assert len(r.probs) == len(x)
    for p, q in zip(r.probs, ref):
        assert close(p, q)
    lse = logsumexp(x)
    assert r.logsumexp == lse == -INF if lse == -INF else close(r.logsumexp, lse, abs_=1e-12)
    assert all(s.alpha <= 1.0 and not math.isnan(s.d) for s in r.steps)
    if any(v != -INF for v in x):
        assert close(math.fsum(r.probs), 1.0, rel=1e-14)


@settings(max_examples=200, deadline=None)
@given(rows, st.data())
def test_every_block_split_gives_the_same_result(x, data):
    sizes, left = [], len(x)
    while left:
        b = data.draw(st.integers(1, left))
        sizes.append(b)
        left -= b
    r, ref = online_softmax(x, block_sizes=sizes), softmax(x)
    assert len(r.steps) == len(sizes)
    assert all(s.alpha <= 1.0 for s in r.steps)
    for p, q in zip(r.probs, ref):
        assert close(p, q)


states = rows.map(lambda x: SoftmaxState().update(x))


@settings(max_examples=200, deadline=None)
@given(states, states, states)
def test_merge_is_associative_with_identity(a, b, c):
    left, right = a.merge(b).merge(c), a.merge(b.merge(c))
    assert left.m == right.m
    assert close(left.d, right.d)
    e = SoftmaxState()
    assert a.merge(e) == a == e.merge(a)
    assert a.merge(b) == b.merge(a)


# --------------------------------------------------------------------------- attention


def rand_matrix(rng, n, d):
    return [[rng.gauss(0.0, 1.0) for _ in range(d)] for _ in range(n)]


def ref_lse(q, k, causal, scale):
    """Row logsumexp of the masked scores, written independently of labs.attention."""
    nq, nk = len(q), len(k)
    out = []
    for i, qi in enumerate(q):
        s = [scale * sum(a * b for a, b in zip(qi, kj)) for j, kj in enumerate(k) if not causal or j <= i + nk - nq]
        out.append(max(s) + math.log(math.fsum(math.exp(v - max(s)) for v in s)) if s else -INF)
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "nq,nk,bq,bk",
    [
        (5, 5, 2, 2),
        (5, 5, 5, 5),
        (5, 5, 1, 3),
        (5, 5, 8, 8),
        (3, 7, 2, 3),
        (7, 3, 2, 2),
        (7, 3, 3, 1),
        (1, 6, 1, 4),
        (6, 1, 4, 1),
    ],
)
def test_flash_matches_reference(nq, nk, bq, bk, causal):
    rng = random.Random(1000 * nq + 10 * nk + bq + bk + causal)
    q, k, v = rand_matrix(rng, nq, 4), rand_matrix(rng, nk, 4), rand_matrix(rng, nk, 3)
    o_ref = attention(q, k, v, causal=causal)
    o, L = flash_attention(q, k, v, block_q=bq, block_k=bk, causal=causal)
    assert len(o) == nq and all(len(row) == 3 for row in o)
    for row, row_ref in zip(o, o_ref):
        for a, b in zip(row, row_ref):
            assert abs(a - b) <= 1e-12
    for got, want in zip(L, ref_lse(q, k, causal, 0.5)):  # scale = 1/sqrt(4)
        assert got == want == -INF if want == -INF else abs(got - want) <= 1e-12


def test_causal_bottom_right_alignment_and_fully_masked_rows():
    rng = random.Random(7)
    k, v = rand_matrix(rng, 3, 2), rand_matrix(rng, 3, 2)
    q = rand_matrix(rng, 5, 2)  # N_q = 5 > N_k = 3: rows 0, 1 see no key
    o, L = flash_attention(q, k, v, 2, 2, causal=True)
    assert o[0] == o[1] == [0.0, 0.0] and L[0] == L[1] == -INF
    assert attention(q, k, v, causal=True)[:2] == [[0.0, 0.0], [0.0, 0.0]]
    # row 2 sees key 0 only, so its output is exactly v[0]
    assert o[2] == v[0] and L[2] == (1 / math.sqrt(2)) * (q[2][0] * k[0][0] + q[2][1] * k[0][1])
    # N_q = 2 < N_k = 5: the last query sees every key, the first all but the last
    k, v, q = rand_matrix(rng, 5, 2), rand_matrix(rng, 5, 2), rand_matrix(rng, 2, 2)
    causal = attention(q, k, v, causal=True)
    assert causal[1] == attention(q, k, v)[1]
    assert causal[0] == attention(q[:1], k[:4], v[:4])[0]


def test_attention_small_exact_cases():
    v = [[1.0, 2.0], [3.0, 4.0]]
    assert attention([[1.0]], [[0.0], [0.0]], v) == [[2.0, 3.0]]  # equal scores: mean of v
    assert attention([[1.0]], [[1.0], [-1.0]], v, scale=0.0) == [[2.0, 3.0]]
    # a huge score gap: all weight on key 0, no overflow
    assert attention([[1.0]], [[1000.0], [-1000.0]], v, scale=1.0) == [[1.0, 2.0]]
    assert flash_attention([[1.0]], [[1000.0], [-1000.0]], v, 1, 1, scale=1.0) == ([[1.0, 2.0]], [1000.0])
    assert flash_attention([], [[1.0]], [[1.0]], 1, 1) == ([], [])


# --------------------------------------------------------------------------- float32 demo


def test_to_float32():
    assert to_float32(0.1) == 13421773 / 2**27  # nearest float32 to 0.1
    assert to_float32(1e39) == INF and to_float32(-1e39) == -INF
    flt_max = (2 - 2**-23) * 2.0**127
    assert to_float32(flt_max) == flt_max
    assert close(FLOAT32_EXP_MAX, math.log(flt_max), rel=1e-16)


def test_float32_naive_overflows_where_online_stays_finite():
    below, above = 88.72283172607422, 88.72283935546875
    # they are adjacent float32 values around ln(FLT_MAX)
    bits = [struct.unpack("<I", struct.pack("<f", x))[0] for x in (below, above)]
    assert bits[1] == bits[0] + 1 and below < FLOAT32_EXP_MAX < above
    assert softmax_naive_float32([below, 0.0])[0] == 1.0
    with pytest.raises(Float32Overflow, match=r"exp\(88.72283935546875\) = inf"):
        softmax_naive_float32([above, 0.0])
    with pytest.raises(Float32Overflow, match="sum"):
        softmax_naive_float32([88.7, 88.7])  # each exp finite, the sum is not
    assert issubclass(Float32Overflow, OverflowError)
    for x in ([above, 0.0], [1000.0, 1000.0], [1000.0, -1000.0, 999.0], [88.7, 88.7]):
        r = online_softmax_float32(x)
        assert all(math.isfinite(p) and to_float32(p) == p for p in r.probs)
        assert all(s.alpha <= 1.0 for s in r.steps)
        for p, q in zip(r.probs, softmax(x)):
            assert math.isclose(p, q, rel_tol=4e-7, abs_tol=1e-38)  # a few float32 ulps
        assert math.isclose(r.logsumexp, logsumexp([to_float32(v) for v in x]), rel_tol=1e-7)
    assert online_softmax_float32([1000.0, 1000.0]).probs == [0.5, 0.5]
    assert online_softmax_float32([-INF, -INF]).probs == [0.0, 0.0]


def test_float32_naive_agrees_when_small():
    x = [0.5, -1.25, 3.0, 2.0]
    for p, q in zip(softmax_naive_float32(x), online_softmax_float32(x).probs):
        assert math.isclose(p, q, rel_tol=4e-7)


def test_float64_naive_overflows():
    assert softmax_naive([709.78, 0.0])[0] == 1.0
    with pytest.raises(OverflowError, match="709.782712893384"):
        softmax_naive([1000.0, 1000.0])
    with pytest.raises(OverflowError, match="sum"):
        softmax_naive([709.7, 709.7])
    with pytest.raises(ZeroDivisionError, match="underflow"):
        softmax_naive([-1000.0, -1000.0])
    assert softmax([709.7, 709.7]) == [0.5, 0.5]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "f",
    [
        softmax,
        softmax_naive,
        logsumexp,
        online_softmax,
        online_softmax_float32,
        softmax_naive_float32,
        lambda x: SoftmaxState().update(x),
    ],
)
def test_nan_and_pos_inf_logits_rejected(f):
    with pytest.raises(ValueError, match=r"\[1\] is NaN; expected"):
        f([0.0, math.nan])
    with pytest.raises(ValueError, match=r"\[0\] is \+inf"):
        f([INF, 0.0])
    with pytest.raises(TypeError, match="expected a float"):
        f([0.0, "1"])
    with pytest.raises(TypeError, match="sequence of floats"):
        f(3.0)


def test_empty_row():
    assert softmax([]) == []
    r = online_softmax([])
    assert (r.probs, r.logsumexp, r.steps) == ([], -INF, [])
    assert SoftmaxState().update([]) == SoftmaxState()


def test_bad_block_sizes_and_states():
    with pytest.raises(ValueError, match="sum to 4; expected the number of logits, 5"):
        online_softmax([1.0] * 5, block_sizes=[2, 2])
    with pytest.raises(ValueError, match=r"block_sizes\[1\] = 0"):
        online_softmax([1.0] * 2, block_sizes=[2, 0])
    with pytest.raises(ValueError, match="d must be 0.0 exactly when m is -inf"):
        SoftmaxState(-INF, 1.0)
    with pytest.raises(ValueError, match="SoftmaxState.m = nan"):
        SoftmaxState(math.nan, 1.0)
    with pytest.raises(ValueError, match="SoftmaxState.d = -1.0"):
        SoftmaxState(0.0, -1.0)
    with pytest.raises(TypeError, match="expects a SoftmaxState, got tuple"):
        SoftmaxState().merge((0.0, 1.0))
    with pytest.raises(ValueError, match="running max"):
        rescaling_factor(2.0, 1.0)
    with pytest.raises(ValueError, match="m_prev is NaN"):
        rescaling_factor(math.nan, 1.0)


GOOD = dict(q=[[1.0, 0.0]], k=[[1.0, 0.0], [0.0, 1.0]], v=[[1.0], [2.0]])


@pytest.mark.parametrize(
    "change,exc,msg",
    [
        (dict(q=[[1.0, 0.0], [1.0]]), ValueError, "q is ragged: row 1 has 1 entries, expected 2"),
        (dict(k=[[1.0, 0.0], [0.0]]), ValueError, "k is ragged"),
        (dict(v=[[1.0], [2.0, 3.0]]), ValueError, "v is ragged"),
        (dict(q=[[1.0, 0.0, 0.0]]), ValueError, "head dimension mismatch: q rows have d = 3, k rows have d = 2"),
        (dict(v=[[1.0]]), ValueError, "v has 1 rows, k has 2"),
        (dict(k=[], v=[]), ValueError, "k has no rows"),
        (dict(q=[[math.nan, 0.0]]), ValueError, r"q\[0\]\[0\] is NaN; expected a finite float"),
        (dict(q=[[]]), ValueError, r"q\[0\] is empty"),
        (dict(q="ab"), TypeError, "q must be a list of rows"),
        (dict(k=[[1.0, None], [0.0, 1.0]]), TypeError, r"k\[0\]\[1\] = None"),
        (dict(causal=1), TypeError, "causal = 1; expected True or False"),
        (dict(scale="x"), TypeError, "scale = 'x'"),
    ],
)
def test_bad_attention_inputs(change, exc, msg):
    args = {**GOOD, **change}
    for fn in (attention, lambda **a: flash_attention(block_q=1, block_k=1, **a)):
        with pytest.raises(exc, match=msg):
            fn(**args)


@pytest.mark.parametrize(
    "bq,bk,exc,msg",
    [
        (0, 1, ValueError, "block_q = 0; expected an int >= 1"),
        (1, -2, ValueError, "block_k = -2; expected an int >= 1"),
        (2.0, 1, TypeError, "block_q = 2.0 is a float; expected an int"),
        (1, True, TypeError, "block_k = True is a bool"),
    ],
)
def test_bad_block_sizes(bq, bk, exc, msg):
    with pytest.raises(exc, match=msg):
        flash_attention(block_q=bq, block_k=bk, **GOOD)


# --------------------------------------------------------------------------- the picture


def parse(svg):
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    return root


def test_svg_is_valid_accessible_and_self_contained():
    t = SoftmaxTrace()
    svg = t._repr_svg_()
    root = parse(svg)
    assert root.get("viewBox") == "0 0 640 352" and root.get("width") == "100%"
    assert "max-width" in root.get("style") and root.get("role") == "img"
    assert root[0].tag == SVG + "title" and "running max m" in root[0].text
    desc = root.find(SVG + "desc").text
    assert "3, 1000, -1000, 999, 1000, -2" in desc and "alpha" in desc
    assert "currentColor" in svg and M_COLOR in svg and ALPHA_COLOR in svg
    rest = svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http" not in rest and "url(" not in rest and "@font-face" not in rest
    assert "nan" not in svg.lower()
    html = t._repr_html_()
    assert html.startswith('<div class="softmax-trace"><svg') and html.endswith("</svg></div>")
    parse(html[len('<div class="softmax-trace">') : -len("</div>")])
    ids = [el.get("id") for el in parse(t._repr_svg_()).iter() if el.get("id")]
    assert ids and not set(ids) & {el.get("id") for el in root.iter()}  # unique per render


def test_svg_symlog_keeps_extremes_and_small_values_apart():
    root = parse(SoftmaxTrace([1000.0, 3.0, -2.0, -1000.0])._repr_svg_())
    ys = [float(c.get("cy")) for c in root.iter(SVG + "circle") if c.find(SVG + "title") is not None]
    assert len(ys) == 4 and ys == sorted(ys)  # larger logit, higher up (smaller y)
    assert min(b - a for a, b in zip(ys, ys[1:])) > 20  # every point distinct by > 20 px
    assert all(34 <= y <= 194 for y in ys)  # all inside the symlog panel


def test_svg_block_boundaries_and_escaping():
    title = 'a <b> & "c"'
    svg = SoftmaxTrace([1.0, 2.0, 3.0, -INF, 5.0], block_sizes=[2, 2, 1], title=title)._repr_svg_()
    root = parse(svg)
    assert root[0].text == title and "<b>" not in svg and "&lt;b&gt; &amp;" in svg
    m_marks = [
        r for r in root.iter(SVG + "rect") if (r.find(SVG + "title") is not None and r.find(SVG + "title").text.startswith("m = "))
    ]
    assert [r.find(SVG + "title").text for r in m_marks] == ["m = 2", "m = 3", "m = 5"]
    assert len([ln for ln in root.iter(SVG + "line") if ln.get("stroke-dasharray")]) == 2
    assert "\u2212\u221e" in svg  # the -inf band is labelled


def test_svg_bad_input():
    with pytest.raises(ValueError, match="empty"):
        SoftmaxTrace([])
    with pytest.raises(ValueError, match="NaN"):
        SoftmaxTrace([0.0, math.nan])
    parse(SoftmaxTrace([-INF, -INF])._repr_svg_())  # all masked: still draws, no NaN


# Found by fuzzing (issue 17): a logit past float32's range gave NaN probabilities in the online
# float32 form, whose docstring says it stays finite; both float32 forms now name it.
@pytest.mark.parametrize("logit", [1e39, -1e39, 3.5e38])
@pytest.mark.parametrize("softmax", ["online_softmax_float32", "softmax_naive_float32"])
def test_a_logit_float32_cannot_hold_is_a_named_error(softmax, logit):
    import labs.attention as att

    with pytest.raises(att.Float32Overflow, match=r"logits\[1\] = .* does not fit float32"):
        getattr(att, softmax)([0.0, logit])


def test_the_largest_float32_logit_still_works():
    import labs.attention as att

    r = att.online_softmax_float32([3.4028234663852886e38, 0.0])
    assert r.probs == [1.0, 0.0]


# Found by the float64 oracles (issue 17): the three attentions disagreed at the edges of float64.
# One rule now (labs.attention's docstring): an overflowing score raises AttentionOverflow in all
# three, and an output stays finite whenever the values are.
def _three(q, k, v, scale=1.0):
    from labs.attention import attention, flash_attention
    from labs.paged_attention import PagedKVCache, paged_attention

    cache = PagedKVCache(num_blocks=len(k), block_size=1, head_dim=len(k[0]))
    for j, (kj, vj) in enumerate(zip(k, v)):
        cache.write(j, kj, vj)
    results = {}
    for name, run in (
        ("attention", lambda: attention(q, k, v, scale=scale)),
        ("flash_attention", lambda: flash_attention(q, k, v, 1, 1, scale=scale)[0]),
        ("paged_attention", lambda: paged_attention(q, cache, list(range(len(k))), scale=scale)),
    ):
        try:
            results[name] = run()
        except Exception as exc:  # noqa: BLE001 - the test compares what each does
            results[name] = type(exc).__name__
    return results


@pytest.mark.parametrize(
    ("q", "k"),
    [
        ([[1e200]], [[-1e200]]),  # -inf: was taken for a masked key by attention and flash_attention
        ([[1e200, 1e200]], [[1e200, -1e200]]),  # inf - inf = NaN: raised in one, zeros in another
        ([[1e200]], [[1e200]]),  # +inf
    ],
)
def test_an_overflowing_score_is_the_same_named_error_in_all_three(q, k):
    assert set(_three(q, k, [[1.0] * len(k[0])]).values()) == {"AttentionOverflow"}


def test_outputs_near_the_largest_float_stay_finite_in_all_three():
    results = _three([[0.0]], [[0.0], [0.0]], [[1.7e308], [1.7e308]])
    assert results == {name: [[1.7e308]] for name in results}  # flash_attention and paged_attention gave inf


def test_attention_overflow_is_a_value_error_and_an_overflow_error():
    from labs.attention import AttentionOverflow

    assert issubclass(AttentionOverflow, ValueError) and issubclass(AttentionOverflow, OverflowError)


def test_a_picture_refuses_a_bad_title_when_it_is_made_not_when_drawn():
    from labs.softmax_trace import SoftmaxTrace

    with pytest.raises(TypeError, match=r"title must be a str or None, got True \(bool\)"):
        SoftmaxTrace(title=True)
