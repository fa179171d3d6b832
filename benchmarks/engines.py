"""labs.autograd / labs.nn against PyPI's micrograd 0.1.0, forward + backward, in one run.

Cases (each timed as build the graph + ``backward()``; medians over repeats,
after warmup runs, time.perf_counter):

- ``mlp``: MLP(2, [16, 16, 1]) on make_moons(100), the SVM loss of micrograd's
  demo.ipynb, all three with the same weights and data:
  ``labs.nn`` (fused neuron nodes), ``labs.autograd + micrograd.nn`` (micrograd's
  own nn code with labs Values as parameters: the same graph as micrograd's, so
  it compares the engines alone) and ``micrograd``.
- ``chain 2k`` / ``chain 100k``: y = y * 1.0001 + 0.5 repeated, 4 Values a step
  (two constants, two results), 2001 and 100001 Values. micrograd's recursive
  topological sort needs one Python frame per level: the 2k chain is run with
  sys.setrecursionlimit(10000) for it (said in the table), the 100k chain with
  the default limit, where it raises RecursionError (caught and reported).

Ratios are ours / micrograd (below 1 means ours is faster). Needs
``pip install micrograd==0.1.0``.

    python -m benchmarks.engines [--repeats 7] [--warmup 2] [--out bench-results/engines.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from labs import autograd  # noqa: E402
from labs.nn import MLP, make_moons, svm_loss  # noqa: E402

try:
    import micrograd.engine as mg_engine
    import micrograd.nn as mg_nn
except ImportError:  # pragma: no cover - said on stdout
    mg_engine = mg_nn = None

ALPHA = 1e-4
CHAIN_STEPS = {"chain 2k": 500, "chain 100k": 25_000}  # 4 Values a step, plus the input


def demo_loss(model, X, y):
    """micrograd's demo.ipynb loss, op by op (works on either engine's Values)."""
    scores = [model(x) for x in X]
    losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    return data_loss + ALPHA * sum(p * p for p in model.parameters())


def micrograd_copy(ours, value_cls):
    """micrograd.nn.MLP with our weights, its parameters made of value_cls."""
    model = mg_nn.MLP(2, [len(layer.neurons) for layer in ours.layers])
    for mg_layer, layer in zip(model.layers, ours.layers):
        for mg_n, n in zip(mg_layer.neurons, layer.neurons):
            mg_n.w = [value_cls(w.data) for w in n.w]
            mg_n.b = value_cls(n.b.data)
    return model


def run_mlp(kind, model, X, y):
    """One forward + backward; returns (forward s, backward s, loss)."""
    t0 = time.perf_counter()
    loss = svm_loss(model, X, y, ALPHA)[0] if kind == "labs.nn" else demo_loss(model, X, y)
    t1 = time.perf_counter()
    model.zero_grad()
    loss.backward()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, loss.data


def run_chain(value_cls, steps):
    """Build the chain and backpropagate; returns (forward s, backward s, dy/dx)."""
    t0 = time.perf_counter()
    x = value_cls(1.0)
    y = x
    for _ in range(steps):
        y = y * 1.0001 + 0.5
    t1 = time.perf_counter()
    y.backward()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, x.grad


def _timed(fn, gc_on):
    """fn() with the cyclic GC on (as a learner runs it) or off (as timeit does)."""
    gc.collect()  # the previous run's garbage is not charged to this one
    if not gc_on:
        gc.disable()
    try:
        return fn()
    finally:
        gc.enable()


def measure(fn, repeats, warmup):
    """Medians over `repeats` runs of fn: forward, backward, total with GC off; total with GC on."""
    for _ in range(warmup):
        _timed(fn, False)
    off = [_timed(fn, False) for _ in range(repeats)]
    on = [_timed(fn, True) for _ in range(repeats)]
    return {
        "forward_s": statistics.median(r[0] for r in off),
        "backward_s": statistics.median(r[1] for r in off),
        "median_s": statistics.median(r[0] + r[1] for r in off),
        "median_gc_on_s": statistics.median(r[0] + r[1] for r in on),
        "runs_s": [r[0] + r[1] for r in off],
        "runs_gc_on_s": [r[0] + r[1] for r in on],
        "value": off[-1][2],
    }


def overhead(ours, X, y, repeats):
    """Where labs.autograd's time goes, per node, against micrograd (GC off, medians)."""

    def per_call(make, n=20_000):
        times = []
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            t = time.perf_counter()
            make(n)
            times.append((time.perf_counter() - t) / n)
            gc.enable()
        return statistics.median(times)

    def leaves(cls):
        return lambda n: [cls(1.0) for _ in range(n)]

    def products(cls):
        a, b = cls(1.5), cls(2.0)
        return lambda n: [a * b for _ in range(n)]

    graph = demo_loss(micrograd_copy(ours, autograd.Value), X, y)
    gc.disable()
    t0 = time.perf_counter()
    order = autograd.topological_order(graph)
    t1 = time.perf_counter()
    for node in order:  # the two extra passes of labs' backward(): reset, then finiteness check
        if node._prev:
            node.grad = 0.0
    for node in order:
        if not math.isfinite(node.grad):
            raise OverflowError(node)
    t2 = time.perf_counter()
    gc.enable()
    return {
        "value_init_us": {"labs": 1e6 * per_call(leaves(autograd.Value)), "micrograd": 1e6 * per_call(leaves(mg_engine.Value))},
        "mul_us": {"labs": 1e6 * per_call(products(autograd.Value)), "micrograd": 1e6 * per_call(products(mg_engine.Value))},
        "mlp_graph_nodes": len(order),
        "topological_order_ms": 1e3 * (t1 - t0),
        "reset_and_isfinite_passes_ms": 1e3 * (t2 - t1),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "engines.json"))
    args = parser.parse_args(argv)
    if args.repeats < 5:
        parser.error(f"--repeats must be >= 5 for a median, got {args.repeats}")
    if mg_nn is None:
        print("micrograd is not installed: pip install micrograd==0.1.0", file=sys.stderr)
        return 2
    X, y = make_moons(100)
    ours = MLP(2, [16, 16, 1], rng=0)
    rows = []

    def record(case, engine, fn, note=""):
        try:
            row = measure(fn, args.repeats, args.warmup)
        except RecursionError:
            row = {"error": "RecursionError"}
        rows.append({"case": case, "engine": engine, "note": note, **row})

    record("mlp", "labs.nn", lambda: run_mlp("labs.nn", ours, X, y))
    unfused = micrograd_copy(ours, autograd.Value)
    record("mlp", "labs.autograd+micrograd.nn", lambda: run_mlp("demo", unfused, X, y))
    mg_model = micrograd_copy(ours, mg_engine.Value)
    record("mlp", "micrograd", lambda: run_mlp("demo", mg_model, X, y))
    for case, steps in CHAIN_STEPS.items():
        record(case, "labs.autograd", lambda s=steps: run_chain(autograd.Value, s))
        limit = sys.getrecursionlimit()
        if case == "chain 2k":
            sys.setrecursionlimit(10_000)
        try:
            record(
                case,
                "micrograd",
                lambda s=steps: run_chain(mg_engine.Value, s),
                note="recursionlimit 10000" if case == "chain 2k" else f"recursionlimit {limit}",
            )
        finally:
            sys.setrecursionlimit(limit)

    # the three MLP runs must agree on the loss, the chains on dy/dx = 1.0001 ** steps
    mlp_losses = [r["value"] for r in rows if r["case"] == "mlp"]
    assert max(mlp_losses) - min(mlp_losses) < 1e-9, mlp_losses
    for r in rows:
        if r["case"] in CHAIN_STEPS and "value" in r:
            assert math.isclose(r["value"], 1.0001 ** CHAIN_STEPS[r["case"]], rel_tol=1e-9), r

    mg = {r["case"]: r for r in rows if r["engine"] == "micrograd"}
    print(
        f"Python {platform.python_version()} on {platform.machine()}; medians of {args.repeats} "
        f"runs after {args.warmup} warmup; ratio = ours / micrograd (< 1: ours faster)"
    )
    print(f"{'case':<11} {'engine':<27} {'fwd ms':>8} {'bwd ms':>8} {'total ms':>9} {'ratio':>6} {'GC on ms':>9} {'ratio':>6}  note")
    print(f"{'':<11} {'':<27} {'(GC off, as timeit)':>35}")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:<11} {r['engine']:<27} {'micrograd: ' + r['error']:>35}  {r['note']}")
            continue
        ref = mg.get(r["case"], {})
        has_ref = "median_s" in ref and r is not ref
        r["ratio_vs_micrograd"] = r["median_s"] / ref["median_s"] if has_ref else None
        r["ratio_gc_on_vs_micrograd"] = r["median_gc_on_s"] / ref["median_gc_on_s"] if has_ref else None
        ratio = "" if not has_ref else f"{r['ratio_vs_micrograd']:6.2f}"
        ratio_on = "" if not has_ref else f"{r['ratio_gc_on_vs_micrograd']:6.2f}"
        print(
            f"{r['case']:<11} {r['engine']:<27} {1e3 * r['forward_s']:8.2f} {1e3 * r['backward_s']:8.2f} "
            f"{1e3 * r['median_s']:9.2f} {ratio:>6} {1e3 * r['median_gc_on_s']:9.2f} {ratio_on:>6}"
            f"  {r['note']}"
        )
    why = overhead(ours, X, y, args.repeats)
    print(
        f"labs.autograd per node (GC off): Value(1.0) {why['value_init_us']['labs']:.2f} us vs "
        f"micrograd {why['value_init_us']['micrograd']:.2f} us; a * b {why['mul_us']['labs']:.2f} us vs "
        f"{why['mul_us']['micrograd']:.2f} us. backward() of the unfused MLP graph "
        f"({why['mlp_graph_nodes']} nodes): topological_order {why['topological_order_ms']:.1f} ms, "
        f"reset + isfinite passes {why['reset_and_isfinite_passes_ms']:.1f} ms"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "python": platform.python_version(),
                "machine": platform.machine(),
                "repeats": args.repeats,
                "warmup": args.warmup,
                "results": rows,
                "labs_autograd_overhead": why,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
