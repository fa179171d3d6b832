"""How many seeds pass Lab 1's "Trained network" check: the figure its page states, reproduced.

The check (``docs/micrograd.md``) trains a small network with one fixed seed,
``random.Random(3)``, for both the data's noise and the initial weights, and
asks for at least 95 % training accuracy. This runs the check's own code, read
from the page, once per seed with only that seed changed, on the reference
engine ``labs.autograd.Value``, and prints each seed's accuracy and how many
reach 95 %. Each seed trains for the check's 80 steps in pure Python (several
seconds a seed), which is why the count is measured here and not at every
page build or test run.

    python -m benchmarks.trained_network_seeds [--seeds 20]
"""

from __future__ import annotations

import argparse
import doctest
import time
from pathlib import Path

from labs.autograd import Value
from labs.checks import doctest_blocks

PAGE = Path(__file__).resolve().parent.parent / "docs" / "micrograd.md"
SEED_LINE = "rng = random.Random(3)"  # the check's one seed: data noise and initial weights
PASS_MARK = 0.95  # the check's bar: "at least 95 %"


def check_code(seed: int, page: str | None = None) -> str:
    """The "Trained network" check's set-up code (its ``>>>`` lines without expected output), with
    ``random.Random(3)`` replaced by ``random.Random(seed)``.

    Raises ValueError if the page has no such block, or its seed line is not there exactly once.
    """
    text = PAGE.read_text() if page is None else page
    blocks = [b for b in doctest_blocks(text) if "# Trained network" in b]
    if len(blocks) != 1:
        raise ValueError(f"expected one doctest block with the Trained network check, found {len(blocks)}")
    examples = doctest.DocTestParser().get_examples(blocks[0])
    code = "".join(ex.source for ex in examples if not ex.want)
    if code.count(SEED_LINE) != 1:
        raise ValueError(
            f"the Trained network check should set its seed once with {SEED_LINE!r}; "
            f"found it {code.count(SEED_LINE)} times: update SEED_LINE"
        )
    return code.replace(SEED_LINE, f"rng = random.Random({int(seed)})")


def accuracy(seed: int) -> float:
    """The training accuracy the check's code reaches with ``seed``, on labs.autograd.Value."""
    namespace: dict = {"Value": Value}
    exec(compile(check_code(seed), f"<Trained network, seed {seed}>", "exec"), namespace)
    return namespace["accuracy"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0 .. N-1 (default 20)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    results = {}
    for seed in range(args.seeds):
        results[seed] = accuracy(seed)
        print(f"seed {seed:>3}: training accuracy {results[seed]:.1%}", flush=True)
    passed = sum(a >= PASS_MARK for a in results.values())
    print(f"{passed} of {args.seeds} seeds (0 to {args.seeds - 1}) reach {PASS_MARK:.0%} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
