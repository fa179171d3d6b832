"""Lab 2's read-and-run sections and exercise 2's picture: labs.attention.flash_attention_backward,
labs.fp8 and labs.flash_tiles."""

from __future__ import annotations

import math
import random
import xml.etree.ElementTree as ET

import pytest

from labs import fp8
from labs.attention import AttentionOverflow, attention, flash_attention, flash_attention_backward
from labs.flash_tiles import FlashTiles

SVG = "{http://www.w3.org/2000/svg}"


def rand(rng, n, d):
    return [[rng.gauss(0, 1) for _ in range(d)] for _ in range(n)]


def numerical_grads(q, k, v, d_o, causal, h=1e-5):
    def loss():
        return sum(a * b for ro, rd in zip(attention(q, k, v, causal=causal), d_o) for a, b in zip(ro, rd))

    out = []
    for x in (q, k, v):
        g = []
        for row in x:
            g.append([])
            for c, keep in enumerate(row):
                row[c] = keep + h
                up = loss()
                row[c] = keep - h
                down = loss()
                row[c] = keep
                g[-1].append((up - down) / (2 * h))
        out.append(g)
    return out


# --------------------------------------------------------------------------- backward pass


@pytest.mark.parametrize(
    "n_q, n_k, causal, bq, bk",
    [
        (3, 5, False, 2, 2),
        (3, 5, True, 2, 2),
        (5, 3, True, 2, 1),
        (4, 4, True, 3, 3),
        (2, 6, True, 1, 4),
    ],
)
def test_the_backward_pass_matches_central_differences(n_q, n_k, causal, bq, bk):
    rng = random.Random(n_q * 10 + n_k)
    q, k, v, d_o = rand(rng, n_q, 3), rand(rng, n_k, 3), rand(rng, n_k, 2), rand(rng, n_q, 2)
    o, lse = flash_attention(q, k, v, bq, bk, causal=causal)
    grads = flash_attention_backward(q, k, v, o, lse, d_o, bq, bk, causal=causal)
    for g, fd in zip(grads, numerical_grads(q, k, v, d_o, causal)):
        big = max(abs(x) for row in g for x in row)
        assert max(abs(a - b) for ra, rb in zip(g, fd) for a, b in zip(ra, rb)) <= 1e-8 * max(big, 1.0)


def test_the_tiling_does_not_change_the_gradients():
    rng = random.Random(7)
    q, k, v, d_o = rand(rng, 5, 4), rand(rng, 7, 4), rand(rng, 7, 3), rand(rng, 5, 3)
    o, lse = flash_attention(q, k, v, 5, 7, causal=True)
    one = flash_attention_backward(q, k, v, o, lse, d_o, 5, 7, causal=True)
    for bq, bk in ((1, 1), (2, 3), (4, 2)):
        tiled = flash_attention_backward(q, k, v, o, lse, d_o, bq, bk, causal=True)
        for a, b in zip(one, tiled):
            assert all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-14) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def test_a_query_that_sees_no_key_gets_and_gives_no_gradient():
    rng = random.Random(3)
    q, k, v, d_o = rand(rng, 4, 2), rand(rng, 2, 2), rand(rng, 2, 2), rand(rng, 4, 2)
    o, lse = flash_attention(q, k, v, 2, 1, causal=True)
    assert lse[:2] == [-math.inf, -math.inf]
    dq, dk, dv = flash_attention_backward(q, k, v, o, lse, d_o, 2, 1, causal=True)
    assert dq[0] == dq[1] == [0.0, 0.0]
    assert all(math.isfinite(x) for g in (dq, dk, dv) for row in g for x in row)


def test_extreme_logits_give_finite_gradients():
    q, k, v = [[1.0]], [[-1000.0], [1000.0], [999.0]], [[1.0], [2.0], [3.0]]
    o, lse = flash_attention(q, k, v, 1, 1, scale=1.0)
    dq, dk, dv = flash_attention_backward(q, k, v, o, lse, [[1.0]], 1, 1, scale=1.0)
    assert dv[0] == [0.0] and math.isclose(dv[1][0] + dv[2][0], 1.0)
    assert all(math.isfinite(x) for g in (dq, dk) for row in g for x in row)


def test_the_backward_pass_names_bad_inputs():
    q = k = v = [[1.0, 0.0], [0.0, 1.0]]
    o, lse = flash_attention(q, k, v, 1, 1)
    with pytest.raises(ValueError, match="lse has 1 entries; expected one per query, 2"):
        flash_attention_backward(q, k, v, o, lse[:1], o, 1, 1)
    with pytest.raises(ValueError, match=r"d_o is 2 x 1; expected N_q x d_v = 2 x 2"):
        flash_attention_backward(q, k, v, o, lse, [[1.0], [1.0]], 1, 1)
    with pytest.raises(ValueError, match=r"lse\[0\] is -inf but query 0 sees keys"):
        flash_attention_backward(q, k, v, o, [-math.inf, 0.0], o, 1, 1)
    with pytest.raises(ValueError, match=r"lse\[1\] is NaN"):
        flash_attention_backward(q, k, v, o, [0.0, math.nan], o, 1, 1)
    with pytest.raises(TypeError, match="block_k = 1.5 is a float"):
        flash_attention_backward(q, k, v, o, lse, o, 1, 1.5)
    with pytest.raises(AttentionOverflow):
        flash_attention_backward([[1e200]], [[-1e200]], [[1.0]], [[1.0]], [0.0], [[1.0]], 1, 1, scale=1.0)


# --------------------------------------------------------------------------- FP8 e4m3


def e4m3_values():
    """Every finite non-negative e4m3fn value, from its bit patterns (exponent bias 7, 3 mantissa bits)."""
    values = set()
    for e in range(16):
        for m in range(8):
            if e == 15 and m == 7:
                continue  # S.1111.111 is NaN in e4m3fn
            values.add(m / 8 * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return sorted(values)


def test_round_e4m3_gives_the_nearest_e4m3_value_ties_to_even():
    grid = e4m3_values()
    assert len(grid) == 127 and grid[-1] == 448.0 and grid[1] == 2.0**-9
    for x in grid:
        assert fp8.round_e4m3(x) == x and fp8.round_e4m3(-x) == -x
    rng = random.Random(0)
    for _ in range(3000):
        x = math.ldexp(rng.random(), rng.randint(-12, 9))
        if x > 448.0:
            continue
        r = fp8.round_e4m3(x)
        assert r in grid
        assert abs(r - x) <= min(abs(g - x) for g in grid)
    for lo, hi in zip(grid, grid[1:]):  # midpoints go to the even mantissa
        r = fp8.round_e4m3((lo + hi) / 2)
        assert r in (lo, hi)
        even = lo if (grid.index(lo) % 2 == 0) else hi  # the grid index's parity is the mantissa's last bit
        assert r == even


def test_round_e4m3_overflow_and_bad_input_are_named():
    assert fp8.round_e4m3(463.9) == fp8.round_e4m3(464.0) == 448.0  # 464 is a tie: to even, 448
    with pytest.raises(fp8.Fp8Overflow, match="rounds past e4m3's largest finite value, 448"):
        fp8.round_e4m3(-464.01)
    assert issubclass(fp8.Fp8Overflow, OverflowError) and issubclass(fp8.Fp8Overflow, ValueError)
    with pytest.raises(ValueError, match="expected a finite float"):
        fp8.round_e4m3(math.inf)
    with pytest.raises(TypeError, match="is a str"):
        fp8.round_e4m3("1")
    assert math.copysign(1.0, fp8.round_e4m3(-0.0)) == -1.0


def test_quantize_scales_the_largest_entry_to_448_per_tensor_or_per_block():
    x = [[0.1, -3.0], [7.0, 0.001]]
    scale = 448.0 / 7.0
    assert fp8.quantize(x) == [[fp8.round_e4m3(v * scale) / scale for v in row] for row in x]
    assert fp8.quantize(x)[1][0] == 7.0
    assert fp8.quantize(x, block_rows=1)[0][1] == -3.0
    assert fp8.quantize([[0.0, 0.0]]) == [[0.0, 0.0]]
    with pytest.raises(ValueError, match="block_rows = 0"):
        fp8.quantize(x, block_rows=0)
    with pytest.raises(ValueError, match="rectangular"):
        fp8.quantize([[1.0], [1.0, 2.0]])


def test_the_random_hadamard_rotation_is_orthogonal_and_keeps_qk_t():
    rng = random.Random(1)
    m = fp8.random_orthogonal(16, rng)
    for i, row in enumerate(m):
        for j, other in enumerate(m):
            assert math.isclose(sum(a * b for a, b in zip(row, other)), float(i == j), abs_tol=1e-12)
    q, k = fp8.with_outliers(8, 16, rng), fp8.with_outliers(8, 16, rng)
    s, s_rot = fp8.matmul_t(q, k), fp8.matmul_t(fp8.matmul(q, m), fp8.matmul(k, m))
    assert max(abs(a - b) for ra, rb in zip(s, s_rot) for a, b in zip(ra, rb)) < 1e-12
    with pytest.raises(ValueError, match="power of two"):
        fp8.hadamard(12)
    with pytest.raises(TypeError, match="random.Random"):
        fp8.random_orthogonal(4, 0)


def test_outliers_are_drawn_at_the_rate_asked():
    x = fp8.with_outliers(200, 100, random.Random(5), rate=0.01, outlier_std=1000.0)
    big = sum(abs(v) > 10 for row in x for v in row)
    assert 150 <= big <= 250  # 200 expected; a N(0, 1000^2) entry is above 10 with probability 0.99


# --------------------------------------------------------------------------- the tile picture


def test_the_tile_picture_draws_what_the_trace_says():
    rng = random.Random(4)
    q, k, v = rand(rng, 5, 3), rand(rng, 7, 3), rand(rng, 7, 2)
    t = FlashTiles(flash_attention, q, k, v, 2, 3, causal=True)
    assert t.ran == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)] and t.skipped == [(0, 2), (1, 2)]
    assert t.rows_ok == [True] * 5
    root = ET.fromstring(t._repr_svg_())
    assert root.get("role") == "img" and root.get("width") == "100%" and root.get("viewBox")
    assert root.find(f"{SVG}title").text.startswith("FlashAttention tiles: 5 queries x 7 keys in 2 x 3 tiles, causal")
    assert "Skipped by the causal mask: (0, 2), (1, 2)." in root.find(f"{SVG}desc").text
    assert "http" not in t._repr_svg_().replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_tile_picture_marks_wrong_rows_and_bad_traces():
    def unnormalized(q, k, v, block_q, block_k, causal=False, scale=None, trace=None):
        o, lse = flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale, trace=trace)
        return [[2 * x for x in row] for row in o[:1]] + o[1:], lse

    q = k = v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    assert FlashTiles(unnormalized, q, k, v, 2, 2).rows_ok == [False, True, True]

    def no_trace(q, k, v, block_q, block_k, causal=False, scale=None):
        return flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale)

    with pytest.raises(TypeError, match="keep the starter's `trace=None` parameter"):
        FlashTiles(no_trace, q, k, v, 2, 2)

    def bad_trace(q, k, v, block_q, block_k, causal=False, scale=None, trace=None):
        trace.append((1, 0, [0.0]))
        return flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale)

    with pytest.raises(ValueError, match=r"trace\[0\] starts at query 1, key 0; expected the first query and key of a tile"):
        FlashTiles(bad_trace, q, k, v, 2, 2)
    with pytest.raises(ValueError, match="expected at most 16 of each"):
        FlashTiles(flash_attention, [[1.0]] * 17, [[1.0]], [[1.0]], 2, 2)
    with pytest.raises(TypeError, match="title must be a str"):
        FlashTiles(flash_attention, q, k, v, 2, 2, title=3)


def test_the_incoherence_experiment_keeps_qk_t_and_reports_every_error():
    e = fp8.incoherence_errors(0, n_keys=8, d=16, n_queries=4, block_rows=4)
    assert set(e) == {"exact_diff", "s_fp8", "s_fp8_rot", "s_model", "s_model_rot", "o_fp8", "o_fp8_rot", "o_fp8_block_rot"}
    assert e["exact_diff"] < 1e-12 and all(v > 0 for k, v in e.items() if k != "exact_diff")
    assert fp8.incoherence_errors(0, n_keys=8, d=16, n_queries=4, block_rows=4) == e  # seeded: the page prints the same numbers
    with pytest.raises(ValueError, match="power of two"):
        fp8.incoherence_errors(0, n_keys=4, d=12, n_queries=2)
    with pytest.raises(ValueError, match="block_rows = 0"):
        fp8.incoherence_errors(0, n_keys=4, d=4, n_queries=2, block_rows=0)
    with pytest.raises(ValueError, match="n_queries = 5 > n_keys = 4"):
        fp8.incoherence_errors(0, n_keys=4, d=4, n_queries=5)
    with pytest.raises(ValueError, match="outliers = 'rows'"):
        fp8.incoherence_errors(0, n_keys=4, d=4, n_queries=2, outliers="rows")


def test_the_paper_distribution_adds_the_outlier_to_the_entry():
    # N(0, 1) + N(0, 100) * Bernoulli(rate): with rate 1 every entry is the sum of two normals, variance 1 + 100.
    x = fp8.with_outliers(100, 32, random.Random(3), rate=1.0)
    var = sum(v * v for row in x for v in row) / (100 * 32)
    assert 92 < var < 110  # 3200 draws: the standard error of the variance is about 2.5


def test_rotate_is_the_fast_transform_of_the_dense_rotation():
    rng = random.Random(2)
    x = rand(rng, 3, 16)
    signs = fp8.random_signs(16, random.Random(9))
    m = fp8.random_orthogonal(16, random.Random(9))  # the same signs from the same seed
    dense = fp8.matmul(x, m)
    assert max(abs(a - b) for ra, rb in zip(fp8.rotate(x, signs), dense) for a, b in zip(ra, rb)) < 1e-12
    with pytest.raises(ValueError, match="one sign per feature"):
        fp8.rotate([[1.0, 2.0, 3.0]], [1.0, 1.0, 1.0])


def test_attention_fp8_scales_p_by_2_8_and_sums_l_before_rounding():
    rng = random.Random(5)
    q, k, v = rand(rng, 3, 8), rand(rng, 20, 8), rand(rng, 20, 4)
    o = fp8.attention_fp8(q, k, v)
    qq, kq, vq = fp8.quantize(q), fp8.quantize(k), fp8.quantize(v)
    for qi, oi in zip(qq, o):
        s = [sum(a * b for a, b in zip(qi, kj)) / math.sqrt(8) for kj in kq]
        p = [256.0 * math.exp(x - max(s)) for x in s]
        want = [sum(fp8.round_e4m3(pj) * vj[c] for pj, vj in zip(p, vq)) / sum(p) for c in range(4)]
        assert max(abs(a - b) for a, b in zip(oi, want)) < 1e-12
    assert max(abs(a - b) for ra, rb in zip(o, attention(q, k, v)) for a, b in zip(ra, rb)) < 0.2


def test_held_fp8_conclusions_pass_with_margin():
    # The FP8 section's conclusions (docs/online_softmax.md), with fixed seeds; margins so that a small change of the code shows.
    e = fp8.incoherence_errors(4, n_keys=512, n_queries=8)
    assert e["o_fp8"] / e["o_fp8_rot"] > 1.3
    c = fp8.incoherence_errors(0, n_keys=64, n_queries=16, outliers="channels")
    assert c["s_fp8"] / c["s_fp8_rot"] > 4.5
    assert 0.7 < (c["s_model"] / c["s_model_rot"]) / (c["s_fp8"] / c["s_fp8_rot"]) < 1.4  # the model predicts the gain


def test_the_tile_picture_says_when_nothing_was_recorded_or_the_values_are_not_floats():
    q = k = v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]

    def silent(q, k, v, block_q, block_k, causal=False, scale=None, trace=None):
        o, _ = flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale)
        return o, [None] * len(o)

    t = FlashTiles(silent, q, k, v, 2, 2)
    assert t.rows_ok == [False] * 3
    svg = t._repr_svg_()
    ET.fromstring(svg)
    assert "no tile recorded: keep trace.append((r0, c0, list(m)))" in svg
    assert t.description().startswith("The function recorded no tile in its trace")


def _texts(svg: str) -> list[tuple[float, str]]:
    """(y, text) of every <text> of the picture."""
    return [(float(t.get("y")), "".join(t.itertext())) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_the_tile_picture_puts_its_notes_on_lines_of_their_own_below_the_grid():
    """A note on the whole run (no trace, a wrong shape) covers no row, no label and no L value."""
    from labs.flash_tiles import _ROW_H, _TOP

    rng = random.Random(11)
    q, k, v = rand(rng, 5, 4), rand(rng, 7, 4), rand(rng, 7, 4)

    def silent(q, k, v, block_q, block_k, causal=False, scale=None, trace=None):
        return flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale)

    def one_row(q, k, v, block_q, block_k, causal=False, scale=None, trace=None):
        flash_attention(q, k, v, block_q, block_k, causal=causal, scale=scale, trace=trace)
        return [[0.0]], [0.0]

    grid_bottom = _TOP + _ROW_H * 5
    for fn, notes in (
        (silent, ["no tile recorded: keep trace.append((r0, c0, list(m)))"]),
        (one_row, ["1 output row for 5 queries", "1 L value for 5 queries"]),
    ):
        t = FlashTiles(fn, q, k, v, 2, 3, causal=True)
        assert t.notes == notes
        svg = t._repr_svg_()
        texts = _texts(svg)
        drawn = [(y, text) for y, text in texts if text.startswith("\u2717 ") and text[2:] in notes]
        assert [text[2:] for _, text in drawn] == notes
        others = [y for y, text in texts if (y, text) not in drawn]
        for y, _ in drawn:  # below the grid, and no other text on the same line
            assert y > grid_bottom and all(abs(y - other) >= 12 for other in others)
        height = float(ET.fromstring(svg).get("viewBox").split()[3])
        assert max(y for y, _ in texts) < height
        assert all(
            note.rstrip(".") in t.description() or note[0].upper() + note[1:] in t.description()
            for note in notes
            if not note.startswith("no tile")
        )
    # No tile ran: nothing is drawn as skipped.
    t = FlashTiles(silent, q, k, v, 2, 3, causal=True)
    assert t.skipped == [] and "stroke-dasharray" not in t._repr_svg_()
    assert "Skipped" not in t.description()
