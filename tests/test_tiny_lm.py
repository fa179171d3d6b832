"""Tests for labs.tiny_lm (Lab 4's model): shapes, causality, determinism, named errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from labs.tiny_lm import (
    ContextTooLong, ModelConfig, ShapeMismatch, TinyLM, Tokenizer, TokenOutOfRange, UnknownCharacter,
    cross_entropy, decode_attention, dense_generate, greedy,
)

SMALL = ModelConfig(vocab_size=7, d_model=8, n_layer=2, n_head=2, max_positions=12)


@pytest.fixture(scope="module")
def model() -> TinyLM:
    return TinyLM.random(SMALL, seed=1)


def _dense_logits(model: TinyLM, ids) -> list[list[float]]:
    """Logits at every position of ``ids``, from scratch, with a full causal attention per position."""
    xs = [model.embed(t, p) for p, t in enumerate(ids)]
    for layer in range(model.config.n_layer):
        qkv = [model.qkv(layer, x) for x in xs]
        new = []
        for i, x in enumerate(xs):
            heads = [decode_attention(qkv[i][0][j], [qkv[s][1][j] for s in range(i + 1)],
                                      [qkv[s][2][j] for s in range(i + 1)]) for j in range(model.config.n_head)]
            new.append(model.finish_layer(layer, x, heads))
        xs = new
    return [model.logits(x) for x in xs]


def test_shapes(model):
    x = model.embed(3, 5)
    assert len(x) == 8 and all(isinstance(v, float) for v in x)
    q, k, v = model.qkv(1, x)
    for t in (q, k, v):
        assert len(t) == SMALL.n_head and all(len(h) == SMALL.head_dim for h in t)
    y = model.finish_layer(1, x, v)
    assert len(y) == SMALL.d_model
    assert len(model.logits(y)) == SMALL.vocab_size
    assert model.n_params == sum(
        len(w) * (len(w[0]) if isinstance(w[0], list) else 1) for w in model.params.values())


def test_config_validates():
    with pytest.raises(ValueError, match="does not divide"):
        ModelConfig(vocab_size=5, d_model=10, n_layer=1, n_head=3, max_positions=4)
    with pytest.raises(ValueError, match="n_layer = 0"):
        ModelConfig(vocab_size=5, d_model=8, n_layer=0, n_head=2, max_positions=4)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, SMALL.vocab_size - 1), min_size=2, max_size=8), st.integers(0, SMALL.vocab_size - 1))
def test_causal_a_later_token_never_changes_an_earlier_position(ids, other):
    # Changing the last token must leave every earlier position's logits bit for bit the same.
    model = TinyLM.random(SMALL, seed=1)
    changed = ids[:-1] + [other]
    a, b = _dense_logits(model, ids), _dense_logits(model, changed)
    assert a[:-1] == b[:-1]
    if other != ids[-1]:
        assert a[-1] != b[-1]  # ...while the last position does see its own token


def test_dense_generate_matches_recomputing_from_scratch(model):
    # The KV-cached generation equals, token by token, argmax of a full recomputation.
    prompt = [1, 4, 2]
    out = dense_generate(model, prompt, max_new_tokens=5)
    seq = list(prompt)
    for token in out:
        assert token == greedy(_dense_logits(model, seq)[-1])
        seq.append(token)


def test_dense_generate_is_deterministic_and_stops(model):
    out = dense_generate(model, [0, 1, 2], max_new_tokens=8)
    assert out == dense_generate(TinyLM.random(SMALL, seed=1), [0, 1, 2], max_new_tokens=8)
    assert len(out) == 8 and all(0 <= t < SMALL.vocab_size for t in out)
    stopped = dense_generate(model, [0, 1, 2], max_new_tokens=8, stop_ids={out[2]})
    first = out.index(out[2])
    assert stopped == out[:first + 1]  # ends with the stop token, included
    assert dense_generate(model, [0], max_new_tokens=0) == []


def test_dense_generate_fills_the_context_exactly(model):
    assert len(dense_generate(model, [0, 1], max_new_tokens=SMALL.max_positions - 2)) == SMALL.max_positions - 2
    with pytest.raises(ContextTooLong, match="max_positions is 12"):
        dense_generate(model, [0, 1], max_new_tokens=SMALL.max_positions - 1)


def test_greedy_takes_the_lowest_index_on_ties():
    assert greedy([1.0, 3.0, 3.0]) == 1
    assert greedy([-math.inf, -5.0]) == 1
    with pytest.raises(ValueError):
        greedy([])


def test_tokenizer_round_trip_and_errors():
    tok = Tokenizer("ab c")
    assert tok.decode(tok.encode("a cab")) == "a cab"
    with pytest.raises(UnknownCharacter, match=r"'z' \(U\+007A\) at index 2"):
        tok.encode("abz")
    with pytest.raises(TokenOutOfRange, match="token id 4 "):
        tok.decode([0, 4])
    with pytest.raises(ValueError, match="repeats"):
        Tokenizer("aba")
    assert issubclass(UnknownCharacter, ValueError)


@pytest.mark.parametrize("token", [-1, 7, 2.0, True])
def test_token_out_of_range(model, token):
    with pytest.raises(TokenOutOfRange, match="0 .. 6"):
        model.embed(token, 0)
    with pytest.raises(TokenOutOfRange):
        dense_generate(model, [0, token], 1)


@pytest.mark.parametrize("position", [-1, 12, 100])
def test_position_past_max_positions(model, position):
    with pytest.raises(ContextTooLong, match="max_positions = 12"):
        model.embed(0, position)


def test_wrong_vector_length(model):
    with pytest.raises(ShapeMismatch, match="x has 7 floats; expected 8"):
        model.qkv(0, [0.0] * 7)
    with pytest.raises(ShapeMismatch, match="x has 9 floats"):
        model.logits([0.0] * 9)
    x = model.embed(0, 0)
    with pytest.raises(ShapeMismatch, match="heads has 1 head outputs; expected n_head = 2"):
        model.finish_layer(0, x, [[0.0] * 4])
    with pytest.raises(ShapeMismatch, match=r"heads\[1\] has 3 floats; expected 4"):
        model.finish_layer(0, x, [[0.0] * 4, [0.0] * 3])
    with pytest.raises(IndexError, match="layer 2"):
        model.qkv(2, x)


def test_cross_entropy_of_a_uniform_model_is_log_vocab():
    # All weights zero except LayerNorm gains: every logit is 0, so each prediction costs ln(vocab_size).
    m = TinyLM.random(SMALL)
    for name, w in m.params.items():
        if name == "wte":
            for row in w:
                row[:] = [0.0] * len(row)
    assert cross_entropy(m, [0, 1, 2, 3]) == pytest.approx(math.log(SMALL.vocab_size), abs=1e-12)
