"""labs.tiny_lm against the PyTorch model it was trained as (tools/train_tiny_lm.py), in float64.

Optional (``nox -s torch``): the shipped weights, loaded into both, give the same logits at every
position of a prompt. This is what makes the training script's recorded losses the labs model's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import train_tiny_lm  # noqa: E402

from labs.tiny_lm import ModelConfig, TinyLM, decode_attention  # noqa: E402


def _labs_logits(model: TinyLM, ids) -> list[list[float]]:
    """Logits at every position, with a KV cache of plain lists (as dense_generate keeps it)."""
    keys = [[[] for _ in range(model.config.n_head)] for _ in range(model.config.n_layer)]
    values = [[[] for _ in range(model.config.n_head)] for _ in range(model.config.n_layer)]
    out = []
    for position, token in enumerate(ids):
        x = model.embed(token, position)
        for layer in range(model.config.n_layer):
            q, k, v = model.qkv(layer, x)
            heads = []
            for j in range(model.config.n_head):
                keys[layer][j].append(k[j])
                values[layer][j].append(v[j])
                heads.append(decode_attention(q[j], keys[layer][j], values[layer][j]))
            x = model.finish_layer(layer, x, heads)
        out.append(model.logits(x))
    return out


@pytest.mark.parametrize("which", ["shipped", "random"])
def test_torch_model_and_labs_agree_on_logits(which):
    if which == "shipped":
        model = TinyLM.load()
        ids = model.tokenizer.encode("A run's first output replaces the old one.")
    else:
        model = TinyLM.random(ModelConfig(vocab_size=11, d_model=12, n_layer=3, n_head=3, max_positions=20), seed=5)
        ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]
    with torch.no_grad():
        expected = train_tiny_lm.from_labs(model).eval()(torch.tensor([ids]))[0].tolist()  # (T, vocab)
    got = _labs_logits(model, ids)
    worst = max(abs(a - b) for ra, rb in zip(got, expected) for a, b in zip(ra, rb))
    assert worst < 1e-10, worst
