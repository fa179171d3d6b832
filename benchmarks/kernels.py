"""Micro-benchmarks of the labs kernels, the same file in CPython and in Pyodide.

What one call costs in the reference code of the three labs (softmax and
tiled attention, Milakov & Gimelshein 2018 / Dao et al. 2022; block tables,
Kwon et al. SOSP 2023; scalar autograd, after micrograd), so a learner can
compare the CPython figures with the ones their browser measures. The browser
page execs this file's source as a cell and calls ``run("quick")``; hence:
standard library + ``labs`` only, no file or network I/O in ``run``, no
threads, no recursion, ``argparse`` only under ``__main__``.

Groups and units (``UNITS``):

- ``softmax``: ns/element of ``softmax_naive``, ``softmax``, ``online_softmax``
  (one step per logit) and ``SoftmaxState().update`` (the row as one block) on
  N = 1024 logits uniform in [-5, 5] (random.Random(0); no overflow there).
- ``attention``: ns per score element (N_q * N_k) of ``attention`` and
  ``flash_attention`` (block_q = block_k = 16), N_q = N_k = N, head dim 16,
  causal=False; N in (16, 64, 128, 256), quick (16, 64).
- ``paged``: translations/s of ``BlockTable.translate`` and of the module-level
  ``translate`` (which rebuilds and validates a table on every call) over all
  tokens of a 2048-token sequence, block size 16; slots/s of
  ``BlockManager.slot_mapping`` over a batch of 256 sequences (quick 32) of
  ``sample_workload`` lengths, counted over real tokens (padding not counted).
- ``autograd``: ms per step of MLP(2, [16, 16, 1]) ``svm_loss`` forward +
  ``zero_grad`` + ``backward`` on make_moons(100), and ms for a 2001-Value
  chain y = y * 1.0001 + 0.5 built and backpropagated.

Method (as timeit): 1-2 warmup calls, which also pick how many calls one
timed sample makes (``inner``, so a sample lasts >= 5 ms quick / 20 ms full:
a browser may coarsen ``performance.now`` to 0.1 ms); then >= 5 samples with
the cyclic GC collected before and paused during each. Medians are reported,
with min and max. Each kernel's result is checked once, untimed.

Measured 2026-11-30 on this 2-core machine, shared with other jobs (medians
moved by up to 2x between runs; the min is steadier): ``full`` takes 10 s in
CPython 3.11, 23 s in Pyodide 0.26.2 under Node 20; ``quick`` 1.3 s and 3.0-3.8 s.
Pyodide is 1.8-4x slower case by case (median of three paired quick runs
2.2-3.6x). CPython full: softmax 0.35 us/element (online_softmax, one state
per logit, 6.8 us); attention 2.3-2.5 us/score at N >= 64, flash_attention
2.7-2.9; BlockTable.translate 5.6 M/s, translate() 69 k/s; slot_mapping
2.2 M slots/s; MLP step 16 ms; 2001-Value chain 1.3 ms.

    python -m benchmarks.kernels [--scale full|quick] [--out bench-results/kernels.json]
"""

from __future__ import annotations

import gc
import math
import os
import platform
import random
import statistics
import sys
import time

if "__file__" in globals():  # run as a file; a page exec()s the source with labs installed
    _SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    if os.path.isdir(_SRC) and _SRC not in sys.path:
        sys.path.insert(0, _SRC)

from labs.attention import SoftmaxState, attention, flash_attention, online_softmax, softmax, softmax_naive  # noqa: E402
from labs.autograd import Value, topological_order  # noqa: E402
from labs.nn import MLP, make_moons, svm_loss  # noqa: E402
from labs.paged_attention import BlockManager, BlockTable, sample_workload, translate  # noqa: E402

__all__ = ["run", "format_table", "UNITS", "SCALES"]

UNITS = {  # (group, case) -> unit of "median", "min" and "max"
    ("softmax", "softmax_naive"): "ns/element",
    ("softmax", "softmax"): "ns/element",
    ("softmax", "online_softmax"): "ns/element",
    ("softmax", "SoftmaxState.update"): "ns/element",
    ("attention", "attention"): "ns/score",
    ("attention", "flash_attention"): "ns/score",
    ("paged", "BlockTable.translate"): "translations/s",
    ("paged", "translate"): "translations/s",
    ("paged", "BlockManager.slot_mapping"): "slots/s",
    ("autograd", "mlp_svm_step"): "ms/step",
    ("autograd", "chain_2001"): "ms",
}
SCALES = {  # repeats = timed samples per case, warmup = untimed calls first
    "quick": {"repeats": 5, "warmup": 1, "min_sample_s": 0.005, "attention_n": (16, 64), "batch": 32},
    "full": {"repeats": 9, "warmup": 2, "min_sample_s": 0.020, "attention_n": (16, 64, 128, 256), "batch": 256},
}
SOFTMAX_N = 1024  # logits in the row
HEAD_DIM = 16  # d of q, k, v
TILE = 16  # block_q = block_k of flash_attention
SEQ_LEN, BLOCK_SIZE = 2048, 16  # the translated sequence; vLLM's default block size
CHAIN_STEPS = 500  # 4 Values a step (two constants, two results) + the input = 2001
MAX_INNER = 100_000  # cap on calls per sample


def _sample(fn, inner: int) -> float:
    """Seconds per call of ``inner`` calls to fn, the cyclic GC paused (as timeit)."""
    gc.collect()  # the previous sample's garbage is not charged to this one
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - t0) / inner
    finally:
        if was_enabled:
            gc.enable()


def _measure(fn, cfg) -> tuple[list[float], int]:
    """(seconds per call of each of cfg['repeats'] samples, calls per sample).

    The warmup calls estimate the cost of one call; then, as timeit's autorange,
    the calls per sample grow until a sample lasts cfg['min_sample_s'] (first
    calls can be slower, e.g. while V8 tiers up Pyodide's WebAssembly).
    """
    target = cfg["min_sample_s"]
    per_call = min(_sample(fn, 1) for _ in range(cfg["warmup"]))
    inner = 1
    for _ in range(5):  # a loop with a bound: a stuck clock cannot hang the page
        if per_call * inner >= target or inner >= MAX_INNER:
            break
        inner = min(MAX_INNER, math.ceil(1.2 * target / max(per_call, 1e-9)))
        per_call = _sample(fn, inner)  # untimed: re-estimates the cost of a call
    return [_sample(fn, inner) for _ in range(cfg["repeats"])], inner


def _case(group, name, n, work, fn, cfg, note=""):
    """Time fn and express each sample in the case's unit; ``work`` items per call."""
    unit = UNITS[(group, name)]
    per_call, inner = _measure(fn, cfg)
    if unit.startswith("ns/"):
        values = [1e9 * s / work for s in per_call]
    elif unit.endswith("/s"):
        values = [work / s for s in per_call]
    elif unit.startswith("ms"):
        values = [1e3 * s / work for s in per_call]
    else:  # pragma: no cover - UNITS is fixed above
        raise ValueError(f"unit {unit!r} of {group}/{name} is not ns/..., .../s or ms...")
    return {
        "group": group,
        "name": name,
        "n": n,
        "work": work,
        "unit": unit,
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": len(values),
        "inner": inner,
        "note": note,
    }


def _check(ok: bool, what: str) -> None:
    """A kernel gave a wrong answer: the timing would be of a broken kernel."""
    if not ok:
        raise RuntimeError(f"benchmark self-check failed: {what}")


def _softmax_cases(cfg):
    rng = random.Random(0)
    row = [rng.uniform(-5.0, 5.0) for _ in range(SOFTMAX_N)]  # (N,) logits
    ref = softmax(row)
    _check(max(abs(a - b) for a, b in zip(softmax_naive(row), ref)) < 1e-15, "softmax_naive != softmax")
    _check(max(abs(a - b) for a, b in zip(online_softmax(row).probs, ref)) < 1e-15, "online_softmax != softmax")
    lse = SoftmaxState().update(row).logsumexp
    _check(abs(sum(math.exp(x - lse) for x in row) - 1.0) < 1e-12, "SoftmaxState logsumexp")
    n = SOFTMAX_N
    yield _case("softmax", "softmax_naive", n, n, lambda: softmax_naive(row), cfg)
    yield _case("softmax", "softmax", n, n, lambda: softmax(row), cfg, "two passes")
    yield _case("softmax", "online_softmax", n, n, lambda: online_softmax(row), cfg, "one (m, d) step per logit, then probs")
    yield _case(
        "softmax",
        "SoftmaxState.update",
        n,
        n,
        lambda: SoftmaxState().update(row),
        cfg,
        "whole row as one block: (m, d) only, no probs",
    )


def _attention_cases(cfg):
    rng = random.Random(0)
    for n in cfg["attention_n"]:
        q, k, v = ([[rng.uniform(-1.0, 1.0) for _ in range(HEAD_DIM)] for _ in range(n)] for _ in range(3))  # each (N, d)
        o_ref = attention(q, k, v)
        o_flash, _ = flash_attention(q, k, v, TILE, TILE)
        _check(
            max(abs(a - b) for r, s in zip(o_ref, o_flash) for a, b in zip(r, s)) < 1e-12, f"flash_attention != attention at N = {n}"
        )
        yield _case(
            "attention", "attention", n, n * n, lambda q=q, k=k, v=v: attention(q, k, v), cfg, f"N_q = N_k = {n}, d = {HEAD_DIM}"
        )
        yield _case(
            "attention",
            "flash_attention",
            n,
            n * n,
            lambda q=q, k=k, v=v: flash_attention(q, k, v, TILE, TILE),
            cfg,
            f"N_q = N_k = {n}, d = {HEAD_DIM}, tiles {TILE}x{TILE}",
        )


def _paged_cases(cfg):
    rng = random.Random(0)
    blocks = list(range(SEQ_LEN // BLOCK_SIZE))  # (128,) physical blocks, shuffled
    rng.shuffle(blocks)
    table = BlockTable.from_blocks(blocks, BLOCK_SIZE, SEQ_LEN)
    expect = [blocks[t // BLOCK_SIZE] * BLOCK_SIZE + t % BLOCK_SIZE for t in range(SEQ_LEN)]
    _check(table.slots() == expect, "BlockTable.translate")
    _check([translate(blocks, SEQ_LEN, BLOCK_SIZE, t) for t in (0, SEQ_LEN - 1)] == [expect[0], expect[-1]], "translate")

    def table_all():
        tr = table.translate
        for t in range(SEQ_LEN):
            tr(t)

    def function_all():
        for t in range(SEQ_LEN):
            translate(blocks, SEQ_LEN, BLOCK_SIZE, t)

    yield _case("paged", "BlockTable.translate", SEQ_LEN, SEQ_LEN, table_all, cfg, f"{SEQ_LEN} tokens, block size {BLOCK_SIZE}")
    yield _case(
        "paged", "translate", SEQ_LEN, SEQ_LEN, function_all, cfg, f"rebuilds + validates a {len(blocks)}-block table per call"
    )

    lengths = sample_workload(cfg["batch"], SEQ_LEN, seed=0)  # (batch,) tokens per sequence
    manager = BlockManager(sum(-(-n // BLOCK_SIZE) for n in lengths), BLOCK_SIZE)
    ids = list(range(len(lengths)))
    for i, n in zip(ids, lengths):
        manager.add_sequence(i)
        manager.append(i, n)
    mapping = manager.slot_mapping(ids)  # (batch, max_len)
    _check(
        all(row[:n] == manager.table(i).slots() and all(s == -1 for s in row[n:]) for i, n, row in zip(ids, lengths, mapping)),
        "BlockManager.slot_mapping",
    )
    tokens = sum(lengths)
    yield _case(
        "paged",
        "BlockManager.slot_mapping",
        len(lengths),
        tokens,
        lambda: manager.slot_mapping(ids),
        cfg,
        f"{len(lengths)} sequences, {tokens} tokens, padded to {len(lengths)} x {max(lengths)}",
    )


def _autograd_cases(cfg):
    X, y = make_moons(100)
    model = MLP(2, [16, 16, 1], rng=0)

    def mlp_step():  # no parameter update: every step times the same graph
        loss, _ = svm_loss(model, X, y)
        model.zero_grad()
        loss.backward()
        return loss

    loss = mlp_step()
    _check(math.isfinite(loss.data) and any(p.grad for p in model.parameters()), "svm_loss backward")

    def chain():
        x = Value(1.0)
        out = x
        for _ in range(CHAIN_STEPS):
            out = out * 1.0001 + 0.5
        out.backward()
        return x, out

    x, out = chain()
    nodes = len(topological_order(out))
    _check(nodes == 4 * CHAIN_STEPS + 1, f"chain has {nodes} Values")
    _check(math.isclose(x.grad, 1.0001**CHAIN_STEPS, rel_tol=1e-12), "chain dy/dx")
    yield _case(
        "autograd",
        "mlp_svm_step",
        100,
        1,
        mlp_step,
        cfg,
        f"MLP(2, [16, 16, 1]), {len(model.parameters())} parameters, make_moons(100)",
    )
    yield _case("autograd", "chain_2001", nodes, 1, chain, cfg, "y = y * 1.0001 + 0.5, fwd + bwd")


GROUPS = {"softmax": _softmax_cases, "attention": _attention_cases, "paged": _paged_cases, "autograd": _autograd_cases}


def run(scale: str = "full", on_case=None) -> dict:
    """Run every group at ``scale`` and return JSON-serializable results.

    Args:
        scale: "full" (9 samples, all sizes; ~15-25 s in CPython) or "quick"
            (5 samples, smaller attention and batch; ~1-2 s in CPython).
        on_case: optional callable(case dict), called as each case finishes
            (e.g. to print progress in a page).

    Returns:
        {"python", "implementation", "platform", "machine", "scale", "repeats",
        "warmup", "min_sample_s", "timer", "timer_resolution_s", "total_s",
        "cases": [{"group", "name", "n", "work", "unit", "median", "min", "max",
        "runs", "inner", "note"}, ...]}; "work" is the elements, scores,
        translations or slots of one call (1 for the ms units).

    Raises:
        ValueError: unknown scale. RuntimeError: a kernel failed its self-check.

    >>> r = run("quick")  # doctest: +SKIP
    >>> sorted({c["group"] for c in r["cases"]})  # doctest: +SKIP
    ['attention', 'autograd', 'paged', 'softmax']
    """
    if scale not in SCALES:
        raise ValueError(f"scale = {scale!r}; expected one of {sorted(SCALES)}")
    cfg = SCALES[scale]
    t0 = time.perf_counter()
    cases = []
    for make_cases in GROUPS.values():
        for case in make_cases(cfg):
            cases.append(case)
            if on_case is not None:
                on_case(case)
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()} on {sys.platform} ({platform.machine() or '?'})",
        "implementation": platform.python_implementation(),
        "platform": sys.platform,
        "machine": platform.machine(),
        "scale": scale,
        "repeats": cfg["repeats"],
        "warmup": cfg["warmup"],
        "min_sample_s": cfg["min_sample_s"],
        "timer": "time.perf_counter",
        "timer_resolution_s": time.get_clock_info("perf_counter").resolution,
        "total_s": time.perf_counter() - t0,
        "cases": cases,
    }


def _fmt(x: float) -> str:
    """4 significant digits without exponent; thousands separators from 10^4."""
    if x >= 1e4:
        return f"{x:,.0f}"
    digits = 3 - math.floor(math.log10(x)) if x > 0 else 3
    return f"{x:.{max(0, digits)}f}"


def format_table(results: dict) -> str:
    """The cases of ``run``'s results as an aligned text table, one line each.

    >>> print(format_table({"python": "CPython 3.12", "scale": "quick", "cases": [
    ...     {"group": "softmax", "name": "softmax", "n": 1024, "unit": "ns/element",
    ...      "median": 81.234, "min": 80.0, "max": 90.0, "runs": 5, "inner": 60}]}))
    CPython 3.12, scale quick: medians of runs x inner calls
    group    case     n     median  unit        min .. max     runs
    softmax  softmax  1024  81.23   ns/element  80.00 .. 90.00  5x60
    """
    header = ("group", "case", "n", "median", "unit", "min .. max", "runs")
    rows = [
        (
            c["group"],
            c["name"],
            str(c["n"]),
            _fmt(c["median"]),
            c["unit"],
            f"{_fmt(c['min'])} .. {_fmt(c['max'])}",
            f"{c['runs']}x{c.get('inner', 1)}",
        )
        for c in results["cases"]
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"{results.get('python', '?')}, scale {results.get('scale', '?')}: medians of runs x inner calls"]
    for r in [header, *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def main(argv=None) -> int:
    """Command line: run, print the table, write the JSON (the only I/O is here)."""
    import argparse
    import json
    from pathlib import Path

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="full")
    parser.add_argument("--out", default=os.path.join(root, "bench-results", "kernels.json"))
    args = parser.parse_args(argv)
    results = run(args.scale, on_case=lambda c: print(f"  {c['group']}/{c['name']} n={c['n']}", file=sys.stderr, flush=True))
    print(format_table(results))
    print(f"total {results['total_s']:.1f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
