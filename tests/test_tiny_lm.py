"""Tests for labs.tiny_lm (Lab 4's model): shapes, causality, determinism, named errors."""

from __future__ import annotations

import hashlib
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.tiny_lm import (
    ContextTooLong,
    ModelConfig,
    ShapeMismatch,
    TinyLM,
    Tokenizer,
    TokenOutOfRange,
    UnknownCharacter,
    cross_entropy,
    decode_attention,
    dense_generate,
    greedy,
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
            heads = [
                decode_attention(qkv[i][0][j], [qkv[s][1][j] for s in range(i + 1)], [qkv[s][2][j] for s in range(i + 1)])
                for j in range(model.config.n_head)
            ]
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
    assert model.n_params == sum(len(w) * (len(w[0]) if isinstance(w[0], list) else 1) for w in model.params.values())


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
    assert stopped == out[: first + 1]  # ends with the stop token, included
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


# --- the shipped weights (src/labs/data/tiny_lm.bin, trained by tools/train_tiny_lm.py) ----------

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tools" / "corpus" / "guide.txt"
PROMPT = "A run's first output replaces "  # from the held-out split (the runtime page)


@pytest.fixture(scope="module")
def shipped() -> TinyLM:
    return TinyLM.load()


@pytest.fixture(scope="module")
def corpus() -> str:
    return CORPUS.read_text("utf-8")


def test_shipped_weights_were_trained_on_the_frozen_corpus(shipped, corpus):
    meta = shipped.meta
    assert hashlib.sha256(corpus.encode("utf-8")).hexdigest() == meta["corpus_sha256"]
    assert meta["held_out_start"] == len(corpus) - int(len(corpus) * 0.10)  # the last 10 % of characters
    assert shipped.tokenizer.vocab == "".join(sorted(set(corpus)))
    assert shipped.n_params == meta["n_params"]
    assert (ROOT / "src" / "labs" / "data" / "tiny_lm.bin").stat().st_size == 2 * shipped.n_params  # float16


def test_shipped_weights_give_the_recorded_held_out_loss(shipped, corpus):
    # The training script computed this loss in torch (float64, the float16 weights); here pure Python.
    meta = shipped.meta
    held = corpus[meta["held_out_start"] :]
    ids = shipped.tokenizer.encode(held[meta["held_out_slice"]["start"] :][: meta["held_out_slice"]["chars"]])
    assert cross_entropy(shipped, ids) == pytest.approx(meta["held_out_slice"]["loss"], abs=1e-6)
    assert meta["held_out_loss"] < math.log(shipped.config.vocab_size) / 2  # far better than uniform guessing


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)


def test_greedy_continuation_is_made_of_the_guide_s_words(shipped, corpus):
    # A prompt from the held-out split (never trained on). Fair measure: of the generated words that
    # are complete (the last one may be cut off), how many are words the corpus uses (random characters
    # would almost never form one), and how many different ones: greedy decoding loops (Holtzman et al.
    # 2020, "The Curious Case of Neural Text Degeneration"); the shipped model settles into "the same
    # token the same ...", a model after 300 steps into "the the the".
    known = set(_words(corpus))
    held = corpus[shipped.meta["held_out_start"] :]
    prompt = PROMPT
    assert prompt in held
    out = shipped.tokenizer.decode(dense_generate(shipped, shipped.tokenizer.encode(prompt), max_new_tokens=60))
    words = _words(out)[:-1]
    assert len(words) >= 8, out
    in_corpus = sum(w in known for w in words)
    assert in_corpus >= 0.8 * len(words), (out, [w for w in words if w not in known])
    assert len(set(words)) >= 4, out


def test_decode_attention_needs_keys():
    with pytest.raises(ShapeMismatch, match="0 keys and 0 values"):
        decode_attention([1.0, 0.0], [], [])
    with pytest.raises(ShapeMismatch, match="2 keys and 1 values"):
        decode_attention([1.0, 0.0], [[0.0, 0.0]] * 2, [[0.0, 0.0]])


def test_importing_the_model_reads_no_weights_and_imports_no_file_machinery():
    # Every lab page imports every labs module while Python starts: only TinyLM.load may pay for
    # json and the weight file (importlib.resources pulled in tempfile, shutil, lzma, bz2, urllib).
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import labs.tiny_lm\n"
        "print(sorted(m for m in ('json', 'tempfile', 'shutil', 'pathlib', 'importlib.resources', 'lzma')"
        " if m in sys.modules), len(labs.tiny_lm._LOADED))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT / "src")], capture_output=True, text=True, check=True
    ).stdout
    assert out.split("\n")[0] == "[] 0"


def test_load_from_a_path_and_a_truncated_file(shipped, tmp_path):
    data = ROOT / "src" / "labs" / "data"
    for name in ("tiny_lm.bin", "tiny_lm.json"):
        (tmp_path / name).write_bytes((data / name).read_bytes())
    copy = TinyLM.load(tmp_path / "tiny_lm.bin")
    assert copy is not shipped and copy is TinyLM.load(str(tmp_path / "tiny_lm.bin"))  # cached by path
    assert copy.params["ln_f.bias"] == shipped.params["ln_f.bias"]
    with pytest.raises(ShapeMismatch, match=f"has 10 bytes; expected {2 * shipped.n_params}"):
        TinyLM.from_bytes(b"\0" * 10, shipped.meta)


def test_wrong_types_are_named(model):
    # Found by tests/test_fuzz_labs.py: these were AttributeErrors from inside.
    with pytest.raises(TypeError, match="config is a NoneType; expected a ModelConfig"):
        TinyLM.random(None)
    with pytest.raises(TypeError, match="tokenizer is a str; expected a Tokenizer"):
        TinyLM(SMALL, "abc", {})
    with pytest.raises(TypeError, match="model is a NoneType; expected a TinyLM"):
        dense_generate(None, [1], 1)
    with pytest.raises(TypeError, match="token ids are a str"):
        cross_entropy(model, "abc")


def test_sampled_dense_generation_is_reproducible_and_depends_on_its_seed(model):
    from labs.sampling import SamplingParams

    runs = {seed: dense_generate(model, [1, 2], 9, sampling_params=SamplingParams(temperature=1.5, seed=seed)) for seed in range(4)}
    assert runs[0] == dense_generate(model, [1, 2], 9, sampling_params=SamplingParams(temperature=1.5, seed=0))
    assert len(set(map(tuple, runs.values()))) > 1
    assert dense_generate(model, [1, 2], 9, sampling_params=SamplingParams(seed=3)) == dense_generate(model, [1, 2], 9)
    with pytest.raises(TypeError, match="sampling_params is a float; expected a labs.sampling.SamplingParams"):
        dense_generate(model, [1, 2], 3, sampling_params=0.7)
