"""Bad input to ``labs``: a property-based fuzz of every module's public API.

Every public function and class of every ``labs`` module (its ``__all__``, or
the functions and classes it defines under public names), and every public
method of an instance made with good arguments, is called with arguments drawn
by hypothesis from a pool that mixes the wrong (``None``, text, ragged or empty
lists, booleans), the extreme (``2**62``, negative sizes, ``nan``, ``inf``,
``1e308``) and the plausible. Each call ends in one of:

- **named**: a ``ValueError``, ``TypeError``, ``IndexError`` or ``KeyError``
  (subclasses included), an exception class a ``labs`` module defines, or one
  a ``raise`` statement of ``labs`` raised on purpose, with its message (the
  naive softmax's documented ``OverflowError`` is the lesson of Lab 2);
- **crash**: any other exception, raised from inside (``AttributeError``,
  ``ZeroDivisionError``, ``struct.error``, ``MemoryError``, ``OverflowError``...);
- **hang**: the call ran past :data:`DEADLINE` (a watchdog stops it);
- **silent**: it returned NaN where no argument held NaN, or an infinity where
  no argument held one (numbers, nested containers, and ``nan``/``inf`` in text);
- **ok**: anything else.

The test asserts the issue's figures over its run: at most
:data:`MAX_CRASHES` crashes, no hang, no silent result, and prints the tally
(run with ``-s`` to see it). Small example counts keep the file to seconds.
"""

from __future__ import annotations

import collections
import ctypes
import dataclasses
import importlib
import inspect
import linecache
import math
import os
import pkgutil
import random
import re
import threading
import time

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import labs
import labs.attention
import labs.autograd
import labs.block_sharing
import labs.nn
import labs.paged_attention
import labs.tiny_lm

# Examples per callable (about 2,300 calls in all, over 150 callables), drawn the same way on every run; a deeper,
# random run: LABS_FUZZ_EXAMPLES=300 LABS_FUZZ_RANDOM=1 pytest -s tests/test_fuzz_labs.py
EXAMPLES = int(os.environ.get("LABS_FUZZ_EXAMPLES", "15"))
DERANDOMIZE = not os.environ.get("LABS_FUZZ_RANDOM")
DEADLINE = 1.0  # seconds of CPU a call may use before it counts as a hang
MAX_CRASHES = 50
# Not fuzzed: the command line (a process, argparse's SystemExit; tests/test_checks.py covers it).
SKIP = {"labs.checks.main"}
# Callables whose infinite results are their documented meaning, not a silent failure.
INFINITY_MEANT = {
    "labs.attention.to_float32",  # a float64 past float32's range rounds to +-inf, as IEEE 754 (and numpy) does
}
# Callables whose good calls take a large part of a second: fewer examples.
FEWER = {"labs.fp8.incoherence_errors": 3, "labs.nn.train": 8}
LABS_DIR = os.path.dirname(labs.__file__) + os.sep
MODULES = sorted(m.name for m in pkgutil.iter_modules(labs.__path__, "labs."))


class Hang(BaseException):
    """Raised into a call that ran past the deadline (a BaseException: no ``except Exception`` eats it)."""


def _cpu_seconds(thread: int):
    """A function giving the CPU time ``thread`` has used (its wall time where the platform has no per-thread clock)."""
    try:
        clock = time.pthread_getcpuclockid(thread)
    except (AttributeError, OSError):
        return time.monotonic
    return lambda: time.clock_gettime(clock)


def guarded(call):
    """Run ``call()``; once it has used DEADLINE seconds of CPU, a watchdog thread raises :class:`Hang` in it.

    CPU time, not wall time: a loaded machine slows a call, and only a call that
    keeps working counts as a hang. The exception is set with CPython's
    ``PyThreadState_SetAsyncExc`` and arrives at the next bytecode the call
    runs, so a pure-Python loop stops without the cost of tracing every line. It
    is set again every 0.1 s until the call has ended, in case it landed in a
    callback (the garbage collector's) that swallowed it.
    """
    ident = threading.get_ident()
    used = _cpu_seconds(ident)
    start = used()
    lock = threading.Lock()
    done = threading.Event()
    fired = []

    def watchdog():
        while not done.wait(0.05):
            if used() - start > DEADLINE:
                break
        while True:
            with lock:
                if done.is_set():
                    return
                fired.append(True)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(Hang))
            if done.wait(0.1):
                return

    watcher = threading.Thread(target=watchdog, daemon=True)
    watcher.start()
    try:
        return call()
    finally:
        with lock:
            done.set()
            if fired:  # a Hang set but not yet raised must not land in the caller
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
        watcher.join()


def public_api(module_name: str) -> list[tuple[str, object]]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == module_name
    ]
    return [
        (f"{module_name}.{n}", getattr(module, n)) for n in names if callable(getattr(module, n)) and f"{module_name}.{n}" not in SKIP
    ]


def _reference_value():
    return labs.autograd.Value(2.0)


# The pool of arguments. Sizes stay small, except the deliberate extremes.
FLOATS = st.one_of(
    st.floats(-10, 10), st.sampled_from([0.0, -0.0, 1.0, -1000.0, 1000.0, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan])
)
FINITE = st.floats(-10, 10)
INTS = st.one_of(st.integers(-2, 9), st.sampled_from([2**62, -(2**62), 2**31, 10**6]))
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    INTS,
    FLOATS,
    st.text(max_size=4),
    st.builds(random.Random, st.integers(0, 3)),
    st.builds(_reference_value),
    st.sampled_from([lambda *a, **k: 0.0, len, object()]),
)
VECTORS = st.lists(FLOATS, max_size=5)
MATRICES = st.one_of(
    st.lists(st.lists(FLOATS, min_size=1, max_size=3), max_size=3),  # ragged allowed
    st.integers(1, 3).flatmap(lambda d: st.lists(st.lists(FINITE, min_size=d, max_size=d), min_size=1, max_size=3)),
)
ARGS = st.one_of(
    LEAVES,
    VECTORS,
    MATRICES,
    st.lists(INTS, max_size=4),
    st.tuples(INTS, INTS),
    st.lists(st.tuples(INTS, FINITE, FINITE), max_size=3),
    st.dictionaries(st.text(max_size=2), INTS, max_size=2),
)
# What a parameter's name says it takes: drawn half of the time, so that calls get past their first
# argument and reach the checks (and the loops) behind it; ARGS the other half.
BY_NAME = [
    (
        re.compile(
            r"^(n|d|t|num_\w+|\w*size\w*|block_[qk]|block_rows|width|steps|grid|head_dim|max_seq_len|seed|n_samples|"
            r"nin|nout|slot|src|dst|block|token|prefix_len|a|b|block_steps_\w+)$"
        ),
        INTS,
    ),
    (
        re.compile(
            r"^(logits|x|xs|prompt|block|seq_lengths|ref_counts|nouts|positions|k_vec|v_vec|block_table|"
            r"prompt_range|output_range)$"
        ),
        st.one_of(VECTORS, st.lists(INTS, max_size=4)),
    ),
    (re.compile(r"^(q|k|v|o|d_o|lse|a|b|X|history)$"), MATRICES),
    (re.compile(r"^(m|m_prev|m_curr|alpha|rate|outlier_std|h|lr|noise|scale|data)$"), FLOATS),
    (re.compile(r"^(rng)$"), st.builds(random.Random, st.integers(0, 3))),
    (
        re.compile(r"^(seq_id|parent|child|case|show|rankdir|prefer|title|name)$"),
        st.sampled_from(["a", "b", "parallel", "beam", "prefix", "both", "LR", "", None, 0]),
    ),
]


def argument(name: str):
    """The strategy for a parameter called ``name``."""
    for pattern, strategy in BY_NAME:
        if pattern.match(name):
            return st.one_of(strategy, ARGS)
    return ARGS


def instances() -> dict[str, object]:
    """A fresh, good instance of each class whose methods are fuzzed."""
    manager = labs.block_sharing.CachingBlockManager(4, 2)
    manager.add_sequence("a", [1, 2, 3])
    blocks = labs.paged_attention.BlockManager(4, 2)
    blocks.add_sequence("a")
    blocks.append("a", 3)
    table = labs.paged_attention.BlockTable(2, labs.paged_attention.BlockAllocator(8, 2))
    table.append_tokens(3)
    return {
        "labs.autograd.Value": labs.autograd.Value(0.5),
        "labs.attention.SoftmaxState": labs.attention.SoftmaxState(),
        "labs.block_sharing.CachingBlockManager": manager,
        "labs.paged_attention.BlockAllocator": labs.paged_attention.BlockAllocator(4, 2),
        "labs.paged_attention.BlockTable": table,
        "labs.paged_attention.BlockManager": blocks,
        "labs.paged_attention.PagedKVCache": labs.paged_attention.PagedKVCache(4, 2, 2),
        "labs.nn.MLP": labs.nn.MLP(2, [2, 1], rng=random.Random(0)),
        "labs.tiny_lm.TinyLM": labs.tiny_lm.TinyLM.random(labs.tiny_lm.ModelConfig(5, 4, 1, 2, 3)),
    }


def methods() -> list[tuple[str, str]]:
    """(class's full name, method name) of each public method of the classes in :func:`instances`."""
    out = []
    for name, obj in instances().items():
        for attr, value in vars(type(obj)).items():
            if not attr.startswith("_") and inspect.isfunction(value):
                out.append((name, attr))
    return out


def parameters(fn) -> tuple[int, list[str]]:
    """(how many are required, names) of ``fn``'s positional parameters (self excluded for bound methods)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 0, ["x", "y", "z"]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return sum(p.default is p.empty for p in positional), [p.name for p in positional]


def special_floats(value, limit: int = 20_000) -> set[str]:
    """Which of "nan", "+inf", "-inf" and "number" (any other int or float) occur in ``value``:
    numbers, containers, objects' fields, text."""
    found: set[str] = set()
    todo, seen = [value], set()
    while todo and limit > 0:
        limit -= 1
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, float):
            found.add("nan" if math.isnan(item) else ("+inf" if item > 0 else "-inf") if math.isinf(item) else "number")
        elif isinstance(item, int) and not isinstance(item, bool):
            found.add("number")
        elif isinstance(item, str):
            found.update(
                "nan" if word == "nan" else "-inf" if sign else "+inf" for sign, word in re.findall(r"(-?)\b(nan|inf)\b", item.lower())
            )
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            todo.extend(getattr(item, f.name) for f in dataclasses.fields(item))
        elif type(item).__module__.startswith("labs.") and hasattr(item, "__dict__"):
            todo.extend(vars(item).values())
    return found


def classify(call, args, name: str = "") -> tuple[str, str]:
    """(outcome, site) of one call; site names where a crash came from."""
    try:
        result = guarded(call)
        # Pictures draw when shown: draw them too.
        for attr in ("_repr_svg_", "_repr_html_", "description"):
            if type(result).__module__.startswith("labs.") and callable(getattr(result, attr, None)):
                result = (result, guarded(getattr(result, attr)))
                break
    except Hang:
        return "hang", ""
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        return "named", type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - the point is to see what comes out
        if type(exc).__module__.startswith("labs."):
            return "named", type(exc).__name__
        frame = exc.__traceback__
        while frame.tb_next:
            frame = frame.tb_next
        code = frame.tb_frame.f_code
        if code.co_filename.startswith(LABS_DIR) and linecache.getline(code.co_filename, frame.tb_lineno).lstrip().startswith(
            "raise "
        ):
            # Raised on purpose, with a message, and documented: softmax_naive's OverflowError is the lesson.
            return "named", type(exc).__name__
        return "crash", f"{type(exc).__name__} at {code.co_filename.rsplit('/', 1)[-1]}:{frame.tb_lineno} ({code.co_name})"
    given_in = special_floats(args)
    out = special_floats(result)
    # -inf is the max and the logsumexp of nothing (the online softmax's identity, m = -inf): silent
    # only when it came from numbers that were all finite.
    infinite_in = {"nan", "+inf", "-inf"} & given_in
    if name in INFINITY_MEANT:
        out -= {"+inf", "-inf"}
    if (
        ("nan" in out and "nan" not in given_in)
        or ("+inf" in out and not infinite_in)
        or ("-inf" in out and not infinite_in and "number" in given_in)
    ):
        return "silent", ", ".join(sorted(out - {"number"}))
    return "ok", ""


TALLY: collections.Counter = collections.Counter()
SITES: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)


def fuzz(name: str, make_call, fn) -> None:
    required, names = parameters(fn)

    @settings(
        max_examples=min(FEWER.get(name, EXAMPLES), EXAMPLES),
        derandomize=DERANDOMIZE,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def run(data):
        n = data.draw(st.integers(required, max(required, min(len(names), required + 2))))
        args = [data.draw(argument(name)) for name in names[:n]]
        outcome, site = classify(lambda: make_call(args), args, name)
        TALLY[outcome] += 1
        if outcome in ("crash", "hang", "silent"):
            SITES[outcome][f"{name}{tuple(args)!r:.120}" if outcome != "crash" else f"{name}: {site}"] += 1

    run()


def test_the_public_api_of_every_lab_answers_bad_input_with_named_errors():
    """14,833 fuzzed calls found 462 unhelpful crashes (48 sites), 18 hangs and 26 silent NaN/inf results."""
    for module in MODULES:
        for name, fn in public_api(module):
            fuzz(name, lambda args, fn=fn: fn(*args), fn)
    for cls, method in methods():
        fuzz(
            f"{cls}.{method}",
            lambda args, cls=cls, method=method: getattr(instances()[cls], method)(*args),
            getattr(instances()[cls], method),
        )
    report = "\n".join(
        [
            f"{dict(TALLY)}",
            *(f"{kind}: {site} x{count}" for kind in ("hang", "silent", "crash") for site, count in SITES[kind].most_common()),
        ]
    )
    print(report)
    assert TALLY["hang"] == 0 and TALLY["silent"] == 0 and TALLY["crash"] <= MAX_CRASHES, report


# The sites the fuzz named, each with the input that found it (every one failed before).
SITES_FOUND = {
    "to_float32(None): struct.error": (lambda: labs.attention.to_float32(None), TypeError, "x must be a real number"),
    "parse_block(None): AttributeError in doctest": (
        lambda: __import__("labs.checks").checks.parse_block(None),
        TypeError,
        "text must be a str",
    ),
    "hadamard(2**62): hang": (lambda: __import__("labs.fp8").fp8.hadamard(2**62), ValueError, "MAX_DIM"),
    "sample_workload(2**62): hang": (lambda: labs.paged_attention.sample_workload(2**62), ValueError, "MAX_COUNT"),
    "sharing_workload(2**31): hang": (lambda: labs.block_sharing.sharing_workload(2**31), ValueError, "MAX_COUNT"),
    "BlockTableDiagram(num_blocks=2**62): hang": (
        lambda: __import__("labs.block_table_svg").block_table_svg.BlockTableDiagram([("a", [0], 1)], num_blocks=2**62, block_size=4),
        ValueError,
        "MAX_DRAWN_BLOCKS",
    ),
    "BlockAllocator(2**31): MemoryError": (lambda: labs.paged_attention.BlockAllocator(2**31), ValueError, "MAX_COUNT"),
    "Neuron(10**6): hang": (lambda: labs.nn.Neuron(10**6), ValueError, "nin must be an int from 1 to"),
    "copy_block(-1, 0): scrambles the pool": (
        lambda: labs.block_sharing.CachingBlockManager(2, 2).copy_block(-1, 0),
        ValueError,
        "invalid physical block id -1",
    ),
    "fp8.matmul of (1, 2) by (1, 2)": (
        lambda: __import__("labs.fp8").fp8.matmul([[1.0, 2.0]], [[3.0, 4.0]]),
        ValueError,
        "expected a's 2 columns to match b's rows",
    ),
    "fp8.rmse of (1, 2) and (1, 1) was 0.0": (
        lambda: __import__("labs.fp8").fp8.rmse([[1.0, 2.0]], [[1.0]]),
        ValueError,
        "expected one shape",
    ),
    "fp8.rmse([], []): ZeroDivisionError": (lambda: __import__("labs.fp8").fp8.rmse([], []), ValueError, "non-empty"),
    "train(None, ...): AttributeError": (lambda: labs.nn.train(None, [[0.0, 0.0]], [1]), TypeError, "model must be a Module"),
    "build_neuron(Value=float): AttributeError": (lambda: labs.autograd.build_neuron(float), TypeError, "tanh"),
    "describe_workload of floats: 'mean -inf' in its text": (
        lambda: labs.block_sharing.describe_workload([(-1e308, 1.0), (-1e308, 1.0)]),
        TypeError,
        "workload[0][0] (prompt_len)",
    ),
    "with_outliers(2, 2, None): AttributeError": (
        lambda: __import__("labs.fp8").fp8.with_outliers(2, 2, None),
        TypeError,
        "rng must be a random.Random",
    ),
}


def test_each_site_the_fuzz_found_raises_a_named_error():
    """One call per site, so a regression fails here by name whatever the fuzz draws."""
    wrong = {}
    for site, (call, kind, message) in SITES_FOUND.items():
        try:
            guarded(call)
        except kind as exc:
            if message not in str(exc):
                wrong[site] = f"{type(exc).__name__}: {exc}"
            continue
        except BaseException as exc:  # noqa: BLE001 - reported below (Hang: ran past the deadline)
            wrong[site] = f"{type(exc).__name__}: {exc}"
            continue
        wrong[site] = "no error"
    assert not wrong, wrong
    pool = labs.block_sharing.CachingBlockManager(4, 2)
    pool.add_sequence("a", [1, 2, 3])
    before = list(pool.pool)
    try:
        pool.copy_block(-1, 0)
    except ValueError:
        pass
    assert pool.pool == before  # [3, 4, None, None] before: the pool was scrambled
