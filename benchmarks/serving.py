"""Lab 4's serving engine, timed: issue 34's targets, in CPython and (exec'd by ``benchmarks/__main__``) in the page.

Three measurements, each a function of this module so that the page runs the very same code:

- :func:`first_token`: the live demo of ``docs/serving.md`` (its three prompts, arriving one per
  step, pool, block size, temperature and seeds, with the reference ``schedule`` and attention)
  from a Python that has not loaded the model yet: the time to the first generated token, model
  load included.
- :func:`throughput`: 8 requests of the trained model at once (a pool with room for all, vLLM's
  block size 16, sampled at temperature 0.7 with a seed each): generated tokens / wall time,
  prefill included.
- :func:`decode_ratio`: the per-token decode cost of the paged engine (split by block, merged
  with ⊕) against dense decoding, one greedy request on a random TinyLM of the size DESIGN.md
  section 9 timed (d_model 48, 4 heads, 2 layers, vocabulary 64). Each run decodes ``new`` tokens
  after a ``prompt_len``-token prompt; the cost per token is (time for new tokens - time for 1
  token) / (new - 1), so the prefill cancels out. Fastest of ``repeats`` runs, interleaved.

    python -m benchmarks.serving [--scale full|quick] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

if "__file__" in globals():  # run as a file; a page exec()s the source with labs installed
    _SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    if os.path.isdir(_SRC) and _SRC not in sys.path:
        sys.path.insert(0, _SRC)

from labs.engine import LLMEngine  # noqa: E402
from labs.sampling import SamplingParams  # noqa: E402
from labs.tiny_lm import ModelConfig, TinyLM, dense_generate  # noqa: E402

RATIO_CONFIG = ModelConfig(vocab_size=64, d_model=48, n_layer=2, n_head=4, max_positions=128)
# The live demo's settings (docs/serving.md, "Serve: your engine, live"): keep them equal.
DEMO_PROMPTS = [("The block table ", 11), ("The block size ", 8), ("A request waits ", 7)]
DEMO_TEMPERATURE, DEMO_NEW_TOKENS, DEMO_BLOCK_SIZE = 0.7, 28, 4
BATCH_PROMPTS = [
    "The block table ",
    "The block size ",
    "A request waits ",
    "The page ",
    "The model ",
    "Each request ",
    "The engine ",
    "A block of ",
]
SCALES = {"full": {"batch_new": 32, "ratio_new": 64, "repeats": 7}, "quick": {"batch_new": 8, "ratio_new": 16, "repeats": 1}}


def first_token(start_wall_ms: float | None = None) -> dict:
    """Run the live demo until its first generated token; times in ms.

    Args:
        start_wall_ms: the wall clock (``time.time()`` in ms) when Run was pressed, if the
            caller knows it (the page passes JavaScript's ``Date.now()``, the same clock).

    Returns ``{"python_ms": from this call to the first token, "run_to_first_token_ms": from
    start_wall_ms (None without it), "load_ms": the model's load, "exact": the demo's full
    output equals dense_generate (bool), "first_step_requests": requests in the step that gave
    the first token, "texts": the demo's texts}``.
    """
    t0 = time.perf_counter()
    model = TinyLM.load()
    load = time.perf_counter() - t0
    need = [(len(p) + DEMO_NEW_TOKENS + DEMO_BLOCK_SIZE - 1) // DEMO_BLOCK_SIZE for p, _ in DEMO_PROMPTS]
    engine = LLMEngine(model, num_blocks=max(need) + sum(need) // 3, block_size=DEMO_BLOCK_SIZE, max_num_seqs=3)
    params = [SamplingParams(temperature=DEMO_TEMPERATURE, seed=seed) for _, seed in DEMO_PROMPTS]
    arriving = [(prompt, sp) for (prompt, _), sp in zip(DEMO_PROMPTS, params)]
    first, first_step = None, None
    while arriving or engine.has_unfinished_requests():
        if arriving:  # as the page's demo: one arrival per step, the first alone
            prompt, sp = arriving.pop(0)
            engine.add_request(prompt, DEMO_NEW_TOKENS, sampling_params=sp)
        out = engine.step()
        if first is None and out.new_tokens:
            first_wall, first, first_step = time.time() * 1000.0, time.perf_counter(), out
    enc = model.tokenizer.encode
    exact = all(
        engine.output(rid) == dense_generate(model, enc(p), DEMO_NEW_TOKENS, sampling_params=sp)
        for rid, (p, _), sp in zip(range(len(DEMO_PROMPTS)), DEMO_PROMPTS, params)
    )
    return {
        "python_ms": (first - t0) * 1000.0,
        "load_ms": load * 1000.0,
        "exact": exact,
        "first_step_requests": len(first_step.new_tokens),
        "run_to_first_token_ms": None if start_wall_ms is None else first_wall - start_wall_ms,
        "texts": [model.tokenizer.decode(engine.output(rid)) for rid in range(len(DEMO_PROMPTS))],
    }


def throughput(new_tokens: int = 32) -> dict:
    """8 requests at once through the engine with the trained model: generated tokens per second.

    Returns ``{"requests": 8, "tokens": generated, "seconds": wall time, prefill included,
    "tokens_per_s": their ratio, "steps": engine steps}``.
    """
    model = TinyLM.load()
    longest = max(len(p) for p in BATCH_PROMPTS) + new_tokens
    engine = LLMEngine(
        model, num_blocks=len(BATCH_PROMPTS) * -(-longest // 16), block_size=16, max_num_seqs=len(BATCH_PROMPTS)
    )  # room for all: no preemption
    for i, prompt in enumerate(BATCH_PROMPTS):
        engine.add_request(prompt, new_tokens, sampling_params=SamplingParams(temperature=DEMO_TEMPERATURE, seed=i))
    t0 = time.perf_counter()
    while engine.has_unfinished_requests():
        engine.step()
    seconds = time.perf_counter() - t0
    tokens = engine.stats.tokens_generated
    return {
        "requests": len(BATCH_PROMPTS),
        "tokens": tokens,
        "seconds": seconds,
        "tokens_per_s": tokens / seconds,
        "steps": engine.stats.steps,
    }


def _fastest_seconds(fns, repeats: int) -> list[float]:
    """The fastest of ``repeats`` runs of each function, run in turn (interleaved)."""
    for fn in fns:
        fn()  # warm-up
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def decode_ratio(prompt_len: int = 8, new: int = 64, block_size: int = 16, repeats: int = 7) -> dict:
    """Per-token decode cost, dense vs paged, in ms; and their ratio (paged ÷ dense)."""
    model = TinyLM.random(RATIO_CONFIG, seed=0)
    prompt = [(7 * i) % RATIO_CONFIG.vocab_size for i in range(prompt_len)]
    num_blocks = -(-(prompt_len + new) // block_size)

    def dense(n):
        return lambda: dense_generate(model, prompt, n)

    def paged(n):
        return lambda: LLMEngine(model, num_blocks=num_blocks, block_size=block_size).generate([prompt], n)

    if dense(new)() != paged(new)()[0]:
        raise AssertionError("the paged engine and dense generation disagree: fix that before timing them")
    dense_full, dense_one, paged_full, paged_one = _fastest_seconds([dense(new), dense(1), paged(new), paged(1)], repeats)
    out = {
        "dense_ms": (dense_full - dense_one) / (new - 1) * 1000.0,
        "paged_ms": (paged_full - paged_one) / (new - 1) * 1000.0,
        "new": new,
        "block_size": block_size,
    }
    out["ratio"] = out["paged_ms"] / out["dense_ms"]
    return out


def run(scale: str = "full", start_wall_ms: float | None = None) -> dict:
    """All three, in this interpreter: ``{"interpreter", "first_token", "throughput", "decode_ratio"}``.

    ``first_token`` runs first, so that the model is not loaded yet (as in a fresh page).
    """
    s = SCALES[scale]
    return {
        "interpreter": f"{sys.implementation.name} {sys.version.split()[0]} ({sys.platform})",
        "first_token": first_token(start_wall_ms),
        "throughput": throughput(s["batch_new"]),
        "decode_ratio": decode_ratio(new=s["ratio_new"], repeats=s["repeats"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="full")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    r = run(args.scale)
    print(
        f"{r['interpreter']}: first token {r['first_token']['python_ms']:.0f} ms (model load "
        f"{r['first_token']['load_ms']:.0f} ms); batch of 8: {r['throughput']['tokens_per_s']:.1f} tokens/s; "
        f"decode per token dense {r['decode_ratio']['dense_ms']:.2f} ms, paged {r['decode_ratio']['paged_ms']:.2f} ms, "
        f"ratio {r['decode_ratio']['ratio']:.2f}x"
    )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()
