"""Choosing the next token from logits: greedy, or a seeded draw from softmax(logits / temperature).

Lab 4. The parameters are a subset of vLLM's ``SamplingParams``
(``vllm/sampling_params.py``): ``temperature`` (0 means greedy, as in vLLM),
``top_k`` (keep only the k most likely tokens) and ``seed``. As in vLLM,
a seeded request owns its random generator (vLLM v1 keeps one
``torch.Generator`` per request): the tokens it draws depend on its seed and
on its own logits only, never on which requests share its batch. Here the
generator is a ``random.Random(seed)`` kept on the request, advanced by
exactly one ``random()`` per sampled token; a request preempted by recompute
keeps it, so it continues where it stopped and no drawn token is drawn again.

Two differences from vLLM, both on defaults: vLLM's ``temperature`` defaults
to 1.0 (here 0.0, greedy, so that the engine's output is what the checks
expect); vLLM disables top-k with 0 or -1 (here with None).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


class InvalidSamplingParamsError(ValueError):
    """A sampling parameter out of range: temperature < 0 or not finite, top_k < 1, a seed that is not an int.

    >>> SamplingParams(temperature=-0.5)
    Traceback (most recent call last):
    labs.sampling.InvalidSamplingParamsError: temperature = -0.5; expected a finite number >= 0 (0 = greedy)
    """


@dataclass(frozen=True)
class SamplingParams:
    """How one request picks its tokens.

    Args:
        temperature: divides the logits before the softmax; 0 = greedy (the
            default), below 1 sharper, above 1 flatter. A finite float >= 0.
        top_k: draw only among the top_k largest logits (ties: the lower
            token id first), an int >= 1; None keeps every token.
        seed: the request's random generator's seed, an int; None seeds it
            from the operating system (not reproducible).

    Raises InvalidSamplingParamsError for a value out of range.

    >>> SamplingParams(temperature=0.8, seed=7).is_greedy
    False
    >>> SamplingParams(top_k=0)
    Traceback (most recent call last):
    labs.sampling.InvalidSamplingParamsError: top_k = 0; expected an int >= 1, or None for every token
    """

    temperature: float = 0.0
    top_k: int | None = None
    seed: int | None = None

    def __post_init__(self):
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise InvalidSamplingParamsError(f"temperature = {t!r:.60}; expected a finite number >= 0 (0 = greedy)")
        k = self.top_k
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise InvalidSamplingParamsError(f"top_k = {k!r:.60}; expected an int >= 1, or None for every token")
        s = self.seed
        if s is not None and (isinstance(s, bool) or not isinstance(s, int)):
            raise InvalidSamplingParamsError(f"seed = {s!r:.60}; expected an int, or None for an unseeded generator")

    @property
    def is_greedy(self) -> bool:
        """True when temperature is 0: the largest logit, no random draw."""
        return self.temperature == 0

    def make_generator(self) -> random.Random:
        """A new ``random.Random`` seeded with ``seed`` (from the operating system when None)."""
        return random.Random(self.seed)


GREEDY = SamplingParams()


def greedy(logits) -> int:
    """Greedy sampling: the index of the largest logit, the lowest such index on ties.

    Raises:
        ValueError: empty logits.

    >>> greedy([0.5, 2.0, 2.0, -1.0])
    1
    """
    if not len(logits):
        raise ValueError("logits is empty; expected vocab_size floats")
    return max(range(len(logits)), key=logits.__getitem__)  # max keeps the first of equal keys


def sample(logits, params: SamplingParams | None = None, generator: random.Random | None = None) -> int:
    """The next token: greedy at temperature 0, else one draw from softmax(logits / temperature) over the top_k.

    Args:
        logits: (vocab_size,) floats, the model's scores for the next token.
        params: a SamplingParams; None for greedy.
        generator: the request's ``random.Random``; required unless greedy. One
            ``generator.random()`` is drawn per call, none when greedy.

    Returns a token id, 0 <= id < vocab_size. The draw is by inverse CDF: u in
    [0, 1) times the sum of the weights exp((z_i - max z) / temperature), which
    are <= 1 (no overflow, whatever the temperature), walked in token-id order.

    Raises ValueError for empty logits, or a NaN or infinite one when sampling; TypeError for
    params that are not a SamplingParams, or a sampled request without a generator.

    >>> import random
    >>> sample([1.0, 3.0, 2.0])  # greedy
    1
    >>> coin, g = SamplingParams(temperature=1.0), random.Random(0)
    >>> [sample([0.0, 0.0], coin, g) for _ in range(8)]  # two equal logits: a fair coin, one draw per token
    [1, 1, 0, 0, 1, 0, 1, 0]
    >>> sample([9.0, 0.0, 8.0], SamplingParams(temperature=5.0, top_k=1), random.Random(0))  # top_k = 1 is greedy
    0
    """
    if params is not None and not isinstance(params, SamplingParams):
        raise TypeError(f"params is a {type(params).__name__}; expected a labs.sampling.SamplingParams or None (greedy)")
    if params is None or params.is_greedy:
        return greedy(logits)
    if not len(logits):
        raise ValueError("logits is empty; expected vocab_size floats")
    if not isinstance(generator, random.Random):
        raise TypeError(
            f"generator = {generator!r:.60}; a sampled request (temperature {params.temperature}) "
            f"needs its own random.Random (SamplingParams.make_generator)"
        )
    if params.top_k is None or params.top_k >= len(logits):
        ids = range(len(logits))
    else:  # the k largest, ties to the lower id (a stable sort), then back in id order
        ids = sorted(sorted(range(len(logits)), key=lambda i: -logits[i])[: params.top_k])
    m = max(logits[i] for i in ids)
    weights = [math.exp((logits[i] - m) / params.temperature) for i in ids]  # each in (0, 1]: no overflow
    total = sum(weights)
    if not 0.0 < total < math.inf:  # a NaN or infinite logit: no distribution to draw from
        raise ValueError(
            f"logits {list(logits)!r:.80} give no distribution at temperature {params.temperature}; expected finite floats"
        )
    u = generator.random() * total
    acc = 0.0
    for i, w in zip(ids, weights):
        acc += w
        if u < acc:
            return i
    return ids[-1]  # u within rounding of the total: the last kept token
