"""A tiny decoder-only transformer language model, one token at a time, in pure Python.

Lab 4 serves this model. Its shape is GPT-2's as nanoGPT writes it (Karpathy,
github.com/karpathy/nanoGPT, ``model.py``; Radford et al. 2019): learned token
and position embeddings, ``n_layer`` pre-norm blocks (LayerNorm -> causal
multi-head self-attention -> residual; LayerNorm -> MLP of width 4 * d_model
-> residual), a final LayerNorm and a language-model head tied to the token
embedding. The MLP uses ReLU rather than GELU: one comparison per unit, which
matters at pure-Python speed. Characters are the tokens.

The model is cut where a serving engine cuts it (vLLM's model runner computes
q, k, v, lets the attention backend read the KV cache, then finishes the
layer): ``embed`` -> for each layer ``qkv``, attention (the caller's: dense,
paged, split by block...), ``finish_layer`` -> ``logits``. ``dense_generate``
is the plain reference: one request, K and V kept as per-layer, per-head lists.

Attention is causal with scale 1/sqrt(head_dim). Everything is float64 on plain
lists of floats (standard library only: it runs in Pyodide). Weights are lists
of rows, ``W[out][in]``, so each output is one ``sum(map(mul, row, x))``, the
fastest inner product pure Python has. The shipped weights (``data/tiny_lm.bin``,
float16, trained by ``tools/train_tiny_lm.py`` on this guide's own pages) are
read once and cached.
"""

from __future__ import annotations

import math
import os
import random as _random
import struct
from dataclasses import dataclass
from operator import mul

from labs.attention import softmax
from labs.sampling import GREEDY, SamplingParams, greedy, sample  # noqa: F401 (greedy: labs.tiny_lm.greedy stays)

LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm's default, which the training script uses


class UnknownCharacter(ValueError):
    """A character the tokenizer's vocabulary does not hold."""


class TokenOutOfRange(ValueError):
    """A token id outside 0 .. vocab_size - 1."""


class ContextTooLong(ValueError):
    """A position at or past ``max_positions`` (the model has no embedding for it)."""


class ShapeMismatch(ValueError):
    """A vector, a list of heads or a weight file of the wrong length."""


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of a :class:`TinyLM`.

    Args:
        vocab_size: number of token ids (characters).
        d_model: width of the residual stream.
        n_layer: number of transformer blocks.
        n_head: attention heads per block; must divide ``d_model``.
        max_positions: context length: positions 0 .. max_positions - 1 have embeddings.

    Raises:
        ValueError: a size that is not a positive int, or ``n_head`` not dividing ``d_model``.

    >>> ModelConfig(vocab_size=10, d_model=8, n_layer=1, n_head=2, max_positions=16).head_dim
    4
    """

    vocab_size: int
    d_model: int
    n_layer: int
    n_head: int
    max_positions: int

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_layer", "n_head", "max_positions"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ModelConfig.{name} = {value!r}; expected a positive int")
        if self.d_model % self.n_head:
            raise ValueError(f"n_head = {self.n_head} does not divide d_model = {self.d_model}; expected d_model = n_head * head_dim")

    @property
    def head_dim(self) -> int:
        """Width of one attention head: d_model // n_head."""
        return self.d_model // self.n_head

    @property
    def d_mlp(self) -> int:
        """Width of the MLP's hidden layer: 4 * d_model (GPT-2's ratio)."""
        return 4 * self.d_model


class Tokenizer:
    """Character-level tokenizer: token id i is the i-th character of ``vocab``.

    Args:
        vocab: a string of distinct characters.

    Raises:
        ValueError: an empty vocabulary or a repeated character.

    >>> tok = Tokenizer("abc ")
    >>> tok.encode("cab a"), tok.decode([2, 0, 1])
    ([2, 0, 1, 3, 0], 'cab')
    """

    def __init__(self, vocab: str) -> None:
        if not isinstance(vocab, str) or not vocab:
            raise ValueError(f"vocab = {vocab!r}; expected a non-empty string of distinct characters")
        if len(set(vocab)) != len(vocab):
            repeated = sorted({c for c in vocab if vocab.count(c) > 1})
            raise ValueError(f"vocab repeats {repeated!r}; expected distinct characters")
        self.vocab = vocab
        self._ids = {c: i for i, c in enumerate(vocab)}

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, one per character.

        Raises:
            UnknownCharacter: a character outside the vocabulary (named, with its index in ``text``).
        """
        ids = []
        for i, c in enumerate(text):
            token = self._ids.get(c)
            if token is None:
                raise UnknownCharacter(
                    f"character {c!r} (U+{ord(c):04X}) at index {i} of the text is not in the "
                    f"vocabulary of {len(self.vocab)} characters"
                )
            ids.append(token)
        return ids

    def decode(self, ids) -> str:
        """The text of token ids ``ids``.

        Raises:
            TokenOutOfRange: an id that is not an int in 0 .. vocab_size - 1.
        """
        return "".join(self.vocab[_check_token(t, len(self.vocab))] for t in ids)


def _check_config(config) -> ModelConfig:
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config is a {type(config).__name__}; expected a ModelConfig")
    return config


def _check_token(token, vocab_size: int) -> int:
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < vocab_size:
        raise TokenOutOfRange(f"token id {token!r} is not an int in 0 .. {vocab_size - 1} (vocab_size = {vocab_size})")
    return token


def _check_vector(x, n: int, what: str) -> list[float]:
    if len(x) != n:
        raise ShapeMismatch(f"{what} has {len(x)} floats; expected {n}")
    if not all(map(math.isfinite, x)):  # an inf or a NaN would come out as NaN logits, silently
        i = next(i for i, v in enumerate(x) if not math.isfinite(v))
        raise ValueError(f"{what}[{i}] = {x[i]!r}; expected finite floats")
    return x


def _linear(W, b, x) -> list[float]:
    """y = W x + b for W a list of rows: (n_out, n_in) @ (n_in,) + (n_out,) -> (n_out,)."""
    return [sum(map(mul, row, x)) + bi for row, bi in zip(W, b)]


def _layer_norm(x, gain, bias) -> list[float]:
    """LayerNorm over one vector (biased variance, eps inside the square root, as torch)."""
    n = len(x)
    mean = sum(x) / n
    centred = [xi - mean for xi in x]
    inv_std = 1.0 / math.sqrt(sum(map(mul, centred, centred)) / n + LAYER_NORM_EPS)
    return [c * inv_std * g + b for c, g, b in zip(centred, gain, bias)]


# The weights, in the order the weight file stores them (row-major, each matrix (n_out, n_in)).
# tools/train_tiny_lm.py writes them in this order, from the names torch gives them.
def parameter_shapes(config: ModelConfig) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes of every weight, in the weight file's order.

    Matrices are (n_out, n_in), as ``torch.nn.Linear.weight``; the LM head is tied
    to ``wte`` and is not stored twice.

    >>> [n for n, _ in parameter_shapes(ModelConfig(5, 4, 1, 2, 3))][:4]
    ['wte', 'wpe', 'h.0.ln_1.weight', 'h.0.ln_1.bias']
    """
    _check_config(config)
    d, f = config.d_model, config.d_mlp
    shapes = [("wte", (config.vocab_size, d)), ("wpe", (config.max_positions, d))]
    for i in range(config.n_layer):
        p = f"h.{i}."
        shapes += [
            (p + "ln_1.weight", (d,)),
            (p + "ln_1.bias", (d,)),
            (p + "attn.c_attn.weight", (3 * d, d)),
            (p + "attn.c_attn.bias", (3 * d,)),
            (p + "attn.c_proj.weight", (d, d)),
            (p + "attn.c_proj.bias", (d,)),
            (p + "ln_2.weight", (d,)),
            (p + "ln_2.bias", (d,)),
            (p + "mlp.c_fc.weight", (f, d)),
            (p + "mlp.c_fc.bias", (f,)),
            (p + "mlp.c_proj.weight", (d, f)),
            (p + "mlp.c_proj.bias", (d,)),
        ]
    shapes += [("ln_f.weight", (d,)), ("ln_f.bias", (d,))]
    return shapes


def _reshape(flat: list[float], shape: tuple[int, ...]):
    if len(shape) == 1:
        return flat
    rows, cols = shape
    return [flat[r * cols : (r + 1) * cols] for r in range(rows)]


_LOADED: dict[str, TinyLM] = {}


class TinyLM:
    """A tiny GPT: ``embed`` -> (``qkv``, attention, ``finish_layer``) per layer -> ``logits``.

    Build one with :meth:`load` (the shipped weights) or :meth:`random` (tests).

    Attributes:
        config: the :class:`ModelConfig`.
        tokenizer: the character :class:`Tokenizer` (``len(tokenizer) == config.vocab_size``).
        params: weight name -> vector (list of floats) or matrix (list of rows), see :func:`parameter_shapes`.
        meta: what the weight file's JSON records (training seed, steps, losses); {} for a random model.

    >>> model = TinyLM.random(ModelConfig(vocab_size=6, d_model=8, n_layer=2, n_head=2, max_positions=10))
    >>> x = model.embed(token=3, position=0)
    >>> q, k, v = model.qkv(0, x)
    >>> len(q), len(q[0])                      # (n_head, head_dim)
    (2, 4)
    >>> len(model.logits(model.finish_layer(0, x, v)))
    6
    """

    def __init__(self, config: ModelConfig, tokenizer: Tokenizer, params: dict, meta: dict | None = None) -> None:
        _check_config(config)
        if not isinstance(tokenizer, Tokenizer):
            raise TypeError(f"tokenizer is a {type(tokenizer).__name__}; expected a Tokenizer")
        if not isinstance(params, dict):
            raise TypeError(f"params is a {type(params).__name__}; expected a dict of weight name -> weights")
        if len(tokenizer) != config.vocab_size:
            raise ShapeMismatch(f"the tokenizer has {len(tokenizer)} characters; expected vocab_size = {config.vocab_size}")
        missing = [name for name, _ in parameter_shapes(config) if name not in params]
        if missing:
            raise ShapeMismatch(f"weights missing: {missing}")
        self.config = config
        self.tokenizer = tokenizer
        self.params = params
        self.meta = meta or {}
        p = params
        # Per-layer tuples, looked up once here rather than by name on every token.
        self._layers = [
            tuple(
                p[f"h.{i}.{n}"]
                for n in (
                    "ln_1.weight",
                    "ln_1.bias",
                    "attn.c_attn.weight",
                    "attn.c_attn.bias",
                    "attn.c_proj.weight",
                    "attn.c_proj.bias",
                    "ln_2.weight",
                    "ln_2.bias",
                    "mlp.c_fc.weight",
                    "mlp.c_fc.bias",
                    "mlp.c_proj.weight",
                    "mlp.c_proj.bias",
                )
            )
            for i in range(config.n_layer)
        ]
        self._zero_vocab_bias = [0.0] * config.vocab_size

    @property
    def n_params(self) -> int:
        """Number of weights (the tied LM head counted once)."""
        return sum(math.prod(shape) for _, shape in parameter_shapes(self.config))

    @classmethod
    def random(cls, config: ModelConfig, seed: int = 0) -> TinyLM:
        """A model with random weights (seeded), for tests; its vocabulary is chr(32) .. chr(32 + vocab_size - 1).

        Weights ~ N(0, 1/fan_in) and LayerNorm gains near 1, biases small but not zero, so every
        parameter matters to the output.

        >>> TinyLM.random(ModelConfig(3, 4, 1, 2, 5)).tokenizer.vocab
        ' !"'
        """
        rng = _random.Random(seed)
        params = {}
        for name, shape in parameter_shapes(config):
            n = math.prod(shape)
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                flat = [1.0 + rng.gauss(0.0, 0.1) for _ in range(n)]
            elif len(shape) == 1:
                flat = [rng.gauss(0.0, 0.1) for _ in range(n)]
            else:
                std = 1.0 if name in ("wte", "wpe") else 1.0 / math.sqrt(shape[1])
                flat = [rng.gauss(0.0, std) for _ in range(n)]
            params[name] = _reshape(flat, shape)
        vocab = "".join(chr(32 + i) for i in range(config.vocab_size))
        return cls(config, Tokenizer(vocab), params, {})

    @classmethod
    def load(cls, path=None) -> TinyLM:
        """The trained model: weights from ``path`` (a ``.bin`` of float16 with a ``.json`` beside it).

        Args:
            path: the ``.bin`` file; None for the weights shipped in ``labs/data/tiny_lm.bin``.

        Returns:
            The model, cached per path: later calls return the same object (do not modify it).

        Raises:
            ShapeMismatch: the file does not hold exactly the weights the JSON's config needs.

        >>> model = TinyLM.load()
        >>> model is TinyLM.load(), model.config.n_layer
        (True, 2)
        """
        # json is imported here, not at the top: every lab page imports every labs module while
        # Python starts, and only this lab reads weights. The wheel is unpacked (in Pyodide too),
        # so the data is a plain file beside this module.
        import json

        path = os.fspath(path) if path is not None else os.path.join(os.path.dirname(__file__), "data", "tiny_lm.bin")
        if path not in _LOADED:
            with open(path, "rb") as f:
                raw = f.read()
            with open(os.path.splitext(path)[0] + ".json", encoding="utf-8") as f:
                meta = json.load(f)
            _LOADED[path] = cls.from_bytes(raw, meta)
        return _LOADED[path]

    @classmethod
    def from_bytes(cls, raw: bytes, meta: dict) -> TinyLM:
        """A model from the weight file's bytes (little-endian float16, :func:`parameter_shapes` order) and its JSON."""
        config = ModelConfig(**meta["config"])
        shapes = parameter_shapes(config)
        total = sum(math.prod(shape) for _, shape in shapes)
        if len(raw) != 2 * total:
            raise ShapeMismatch(f"weight file has {len(raw)} bytes; expected {2 * total} ({total} float16 weights for {config})")
        flat = struct.unpack(f"<{total}e", raw)
        params, at = {}, 0
        for name, shape in shapes:
            n = math.prod(shape)
            params[name] = _reshape(list(flat[at : at + n]), shape)
            at += n
        return cls(config, Tokenizer(meta["vocab"]), params, meta)

    def embed(self, token: int, position: int) -> list[float]:
        """Token embedding + position embedding: the residual stream's first value, (d_model,).

        Raises:
            TokenOutOfRange: ``token`` not in 0 .. vocab_size - 1.
            ContextTooLong: ``position`` not in 0 .. max_positions - 1.
        """
        _check_token(token, self.config.vocab_size)
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < self.config.max_positions:
            raise ContextTooLong(
                f"position {position!r} is outside 0 .. {self.config.max_positions - 1} (max_positions = {self.config.max_positions})"
            )
        return [a + b for a, b in zip(self.params["wte"][token], self.params["wpe"][position])]

    def _layer(self, layer: int):
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < self.config.n_layer:
            raise IndexError(f"layer {layer!r} is not in 0 .. {self.config.n_layer - 1} (n_layer = {self.config.n_layer})")
        return self._layers[layer]

    def qkv(self, layer: int, x) -> tuple[list[list[float]], list[list[float]], list[list[float]]]:
        """The query, key and value of one token at ``layer``: LayerNorm (ln_1), then c_attn.

        Args:
            layer: 0 .. n_layer - 1.
            x: the residual stream entering the layer, (d_model,).

        Returns:
            (q, k, v), each (n_head, head_dim).

        Raises:
            ShapeMismatch: ``x`` is not d_model long. IndexError: no such layer.
        """
        ln_g, ln_b, w_attn, b_attn = self._layer(layer)[:4]
        d, hd = self.config.d_model, self.config.head_dim
        h = _layer_norm(_check_vector(x, d, "x"), ln_g, ln_b)
        qkv = _linear(w_attn, b_attn, h)  # (3 * d_model,): q | k | v, each n_head blocks of head_dim
        q, k, v = ([qkv[s + j * hd : s + (j + 1) * hd] for j in range(self.config.n_head)] for s in (0, d, 2 * d))
        return q, k, v

    def finish_layer(self, layer: int, x, heads) -> list[float]:
        """The rest of the layer once attention is done: x + c_proj(concat(heads)), then x + MLP(ln_2(x)).

        Args:
            layer: 0 .. n_layer - 1.
            x: the residual stream that entered the layer, (d_model,).
            heads: the attention output of each head, (n_head, head_dim).

        Returns:
            The residual stream leaving the layer, (d_model,).

        Raises:
            ShapeMismatch: ``x`` or ``heads`` of the wrong shape. IndexError: no such layer.
        """
        (_, _, _, _, w_proj, b_proj, ln_g, ln_b, w_fc, b_fc, w_out, b_out) = self._layer(layer)
        hd = self.config.head_dim
        _check_vector(x, self.config.d_model, "x")
        if len(heads) != self.config.n_head:
            raise ShapeMismatch(f"heads has {len(heads)} head outputs; expected n_head = {self.config.n_head}")
        concat = []
        for j, head in enumerate(heads):
            concat += _check_vector(head, hd, f"heads[{j}]")
        x = [a + b for a, b in zip(x, _linear(w_proj, b_proj, concat))]
        hidden = [u if u > 0.0 else 0.0 for u in _linear(w_fc, b_fc, _layer_norm(x, ln_g, ln_b))]  # ReLU, (d_mlp,)
        return [a + b for a, b in zip(x, _linear(w_out, b_out, hidden))]

    def logits(self, x) -> list[float]:
        """Final LayerNorm, then the LM head (tied to ``wte``): the next token's logits, (vocab_size,).

        Raises:
            ShapeMismatch: ``x`` is not d_model long.
        """
        h = _layer_norm(_check_vector(x, self.config.d_model, "x"), self.params["ln_f.weight"], self.params["ln_f.bias"])
        return _linear(self.params["wte"], self._zero_vocab_bias, h)


def decode_attention(q, keys, values) -> list[float]:
    """One query's attention over cached keys and values: softmax(q . k_j / sqrt(head_dim)) weighted sum of v_j.

    Causality is the caller's: ``keys`` and ``values`` hold only positions up to the query's own.

    Args:
        q: (head_dim,). keys, values: (n_ctx, head_dim), n_ctx >= 1.

    Returns:
        (head_dim,).

    Raises:
        ShapeMismatch: no keys, or not as many values as keys.

    >>> decode_attention([1.0, 0.0], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0], [3.0, 4.0]])
    [2.0, 3.0]
    """
    if not keys or len(keys) != len(values):
        raise ShapeMismatch(f"{len(keys)} keys and {len(values)} values; expected the same number, at least 1")
    scale = 1.0 / math.sqrt(len(q))
    p = softmax([sum(map(mul, q, k)) * scale for k in keys])  # (n_ctx,), labs.attention.softmax: max-subtracted
    # One column of V per output: 3x faster in CPython than accumulating row by row, same sums in the same order.
    return [sum(map(mul, p, column)) for column in zip(*values)]


def _forward_token(model: TinyLM, token: int, position: int, k_cache, v_cache) -> list[float]:
    """Run one token through every layer, appending its k, v to the caches; return its logits."""
    x = model.embed(token, position)
    for layer in range(model.config.n_layer):
        q, k, v = model.qkv(layer, x)
        heads = []
        for j in range(model.config.n_head):
            k_cache[layer][j].append(k[j])
            v_cache[layer][j].append(v[j])
            heads.append(decode_attention(q[j], k_cache[layer][j], v_cache[layer][j]))
        x = model.finish_layer(layer, x, heads)
    return model.logits(x)


def _empty_cache(config: ModelConfig):
    return [[[] for _ in range(config.n_head)] for _ in range(config.n_layer)]  # (n_layer, n_head, n_ctx, head_dim)


def _check_prompt(model: TinyLM, prompt_ids) -> list[int]:
    if not isinstance(model, TinyLM):
        raise TypeError(f"model is a {type(model).__name__}; expected a TinyLM")
    if isinstance(prompt_ids, (str, bytes)) or not hasattr(prompt_ids, "__iter__"):
        raise TypeError(f"token ids are a {type(prompt_ids).__name__}; expected a list of ints (Tokenizer.encode)")
    ids = list(prompt_ids)
    if not ids:
        raise ValueError("prompt_ids is empty; expected at least one token id")
    for t in ids:
        _check_token(t, model.config.vocab_size)
    return ids


def dense_generate(
    model: TinyLM, prompt_ids, max_new_tokens: int, stop_ids=(), sampling_params: SamplingParams | None = None
) -> list[int]:
    """Generation for one request, greedy or seeded sampling, the reference the engine is checked against.

    The prompt's tokens go through the model one at a time (positions 0 .. len(prompt) - 1), each
    attending to itself and every earlier token, K and V kept as plain per-layer, per-head lists.
    Then each generated token is fed back at the next position.

    Args:
        model: a :class:`TinyLM`.
        prompt_ids: (n_prompt,) token ids, n_prompt >= 1.
        max_new_tokens: how many tokens to generate at most (>= 0).
        stop_ids: token ids that end generation; the stop token is the last one returned.
        sampling_params: a ``labs.sampling.SamplingParams``; None for greedy. A sampled
            request draws from its own ``random.Random(seed)``, one draw per token.

    Returns:
        The generated ids only (not the prompt), at most ``max_new_tokens`` of them.

    Raises:
        ContextTooLong: len(prompt_ids) + max_new_tokens > max_positions (checked before any work,
            as vLLM checks prompt length + max_tokens against max_model_len).
        TokenOutOfRange: a prompt id outside the vocabulary. ValueError: an empty prompt or a negative count.
        TypeError: sampling_params is not a SamplingParams.

    >>> model = TinyLM.random(ModelConfig(vocab_size=5, d_model=8, n_layer=1, n_head=2, max_positions=8))
    >>> out = dense_generate(model, [1, 2, 3], max_new_tokens=4)
    >>> len(out), out == dense_generate(model, [1, 2, 3], max_new_tokens=4)
    (4, True)
    >>> warm = SamplingParams(temperature=0.8, seed=1)
    >>> dense_generate(model, [1, 2, 3], 4, sampling_params=warm) == dense_generate(model, [1, 2, 3], 4, sampling_params=warm)
    True
    """
    ids = _check_prompt(model, prompt_ids)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens = {max_new_tokens!r}; expected an int >= 0")
    if len(ids) + max_new_tokens > model.config.max_positions:
        raise ContextTooLong(
            f"prompt of {len(ids)} tokens + max_new_tokens = {max_new_tokens} is "
            f"{len(ids) + max_new_tokens} positions; max_positions is {model.config.max_positions}"
        )
    params = GREEDY if sampling_params is None else sampling_params
    if not isinstance(params, SamplingParams):
        raise TypeError(f"sampling_params is a {type(params).__name__}; expected a labs.sampling.SamplingParams or None")
    generator = None if params.is_greedy else params.make_generator()
    stop = set(stop_ids)
    k_cache, v_cache = _empty_cache(model.config), _empty_cache(model.config)
    out: list[int] = []
    if max_new_tokens == 0:
        return out
    for position, token in enumerate(ids):
        logits = _forward_token(model, token, position, k_cache, v_cache)
    while True:
        token = sample(logits, params, generator)
        out.append(token)
        if len(out) == max_new_tokens or token in stop:
            return out
        logits = _forward_token(model, token, len(ids) + len(out) - 1, k_cache, v_cache)


def cross_entropy(model: TinyLM, ids) -> float:
    """Mean negative log-likelihood of ``ids[1:]``, each predicted from the ids before it, in nats per token.

    Args:
        ids: (n,) token ids, 2 <= n <= max_positions + 1.

    Raises:
        ContextTooLong: more than max_positions + 1 ids. ValueError: fewer than 2.

    >>> model = TinyLM.random(ModelConfig(vocab_size=5, d_model=8, n_layer=1, n_head=2, max_positions=8))
    >>> 0.0 < cross_entropy(model, [0, 1, 2, 3]) < 10.0
    True
    """
    ids = _check_prompt(model, ids)
    if len(ids) < 2:
        raise ValueError(f"{len(ids)} id; expected at least 2 (one to read, one to predict)")
    if len(ids) - 1 > model.config.max_positions:
        raise ContextTooLong(f"{len(ids)} ids need {len(ids) - 1} positions; max_positions is {model.config.max_positions}")
    k_cache, v_cache = _empty_cache(model.config), _empty_cache(model.config)
    total = 0.0
    for position, (token, target) in enumerate(zip(ids, ids[1:])):
        logits = _forward_token(model, token, position, k_cache, v_cache)
        m = max(logits)
        total += m + math.log(sum(math.exp(z - m) for z in logits)) - logits[target]
    return total / (len(ids) - 1)
