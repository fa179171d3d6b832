"""Lab 4: the per-token decode cost of the paged engine (split by block, merged with ⊕) against dense greedy decoding.

One request, greedy, a random TinyLM of the size DESIGN.md section 9 timed (d_model 48, 4 heads,
2 layers, vocabulary 64). Each run decodes ``--new`` tokens after a ``--prompt``-token prompt; the
per-token decode cost is (time for new tokens - time for 1 token) / (new - 1), so the prefill
cancels out. Medians over ``--repeats`` runs (time.perf_counter), after one warm-up.

    python -m benchmarks.serving [--prompt 8] [--new 64] [--block-size 16] [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from labs.engine import LLMEngine  # noqa: E402
from labs.tiny_lm import ModelConfig, TinyLM, dense_generate  # noqa: E402

CONFIG = ModelConfig(vocab_size=64, d_model=48, n_layer=2, n_head=4, max_positions=128)


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


def measure(prompt_len: int = 8, new: int = 64, block_size: int = 16, repeats: int = 7) -> dict:
    """Per-token decode cost, dense vs paged, in ms; and their ratio."""
    model = TinyLM.random(CONFIG, seed=0)
    prompt = [(7 * i) % CONFIG.vocab_size for i in range(prompt_len)]
    num_blocks = -(-(prompt_len + new) // block_size)

    def dense(n):
        return lambda: dense_generate(model, prompt, n)

    def paged(n):
        return lambda: LLMEngine(model, num_blocks=num_blocks, block_size=block_size).generate([prompt], n)

    assert dense(new)() == paged(new)()[0]
    dense_full, dense_one, paged_full, paged_one = _fastest_seconds([dense(new), dense(1), paged(new), paged(1)], repeats)
    out = {"dense": (dense_full - dense_one) / (new - 1) * 1000.0, "paged": (paged_full - paged_one) / (new - 1) * 1000.0}
    out["ratio"] = out["paged"] / out["dense"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", type=int, default=8)
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    r = measure(args.prompt, args.new, args.block_size, args.repeats)
    print(f"{sys.implementation.name} {sys.version.split()[0]}: decode per token, dense {r['dense']:.2f} ms, "
          f"paged + split by block {r['paged']:.2f} ms, ratio {r['ratio']:.2f}x "
          f"(prompt {args.prompt}, {args.new} new tokens, block size {args.block_size})")


if __name__ == "__main__":
    main()
