"""The paper's setting at its own scale: Lab 4's Scheduler driving a cost model of OPT-13B on one A100-40GB.

Kwon et al., "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023, section 6: requests arrive as a Poisson process, with
ShareGPT's or Alpaca's lengths (Fig. 11). The paper replays the datasets' own lengths;
here they are drawn, exponential around Fig. 11's means (:func:`draw_requests`), so a
small sample's means differ from the datasets'. The metric is
the **normalised latency**, the mean over requests of end-to-end latency divided by
output length (section 6.1), plotted against the request rate (Fig. 12).

Nothing is computed on tokens here: the same :class:`labs.scheduler.Scheduler`
admits, decodes and preempts, over one of two KV pools of the same size:

- ``"paged"``: :class:`labs.kv_cache_manager.KVCacheManager`, blocks of 16 taken as tokens arrive;
- ``"static"``: every request reserves the model's maximum length (MAX_SEQ_LEN slots) when
  admitted, with iteration-level scheduling: the paper's Orca (Max) baseline (section 6.1).
  FasterTransformer, with request-level batching, does worse in the paper; Orca (Pow2) and
  Orca (Oracle), which reserve less, do better.

A step's time is a roofline: max(FLOPs / peak FLOP/s, bytes / HBM bandwidth), the
bytes being the weights, read once per step, plus the keys and values the batch reads.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from labs.kv_cache_manager import KVCacheManager
from labs.paged_attention import check_int
from labs.scheduler import Request, Scheduler

# OPT-13B (Zhang et al. 2022, Table 1; the facebook/opt-13b config): 40 layers, hidden size 5,120.
N_LAYER, D_MODEL = 40, 5120
N_PARAMS = 13e9
BYTES_FP16 = 2
WEIGHT_BYTES = N_PARAMS * BYTES_FP16  # 26 GB of FP16 weights
# Kwon et al. section 3: 2 (K and V) x 5,120 x 40 layers x 2 bytes = 800 KB per token for OPT-13B.
KV_BYTES_PER_TOKEN = 2 * D_MODEL * N_LAYER * BYTES_FP16
# Kwon et al. Table 1: OPT-13B on one A100 (40 GB) leaves 12 GB for the KV cache (15.7K slots:
# 12 GiB / 800 KiB = 15,728, which this reproduces).
KV_POOL_BYTES = 12 * 2**30
# NVIDIA A100 datasheet (40 GB): HBM2 bandwidth 1,555 GB/s, FP16 Tensor Core peak 312 TFLOP/s.
HBM_BYTES_PER_S = 1555e9
PEAK_FLOPS = 312e12
BLOCK_SIZE = 16  # vLLM's default block size
MAX_SEQ_LEN = 2048  # OPT's max_position_embeddings: the static baselines reserve this per request
# vLLM's default max_num_seqs in v0.1.0 (the paper's version), and v1's on an A100 (get_batch_defaults in
# vllm/engine/arg_utils.py: 1,024 on GPUs of >= 70 GiB that are not A100s).
MAX_NUM_SEQS = 256
# Mean (prompt, output) lengths in tokens, Kwon et al. Fig. 11: ShareGPT 161.31 / 337.99, Alpaca
# 19.31 / 58.45 (read from the figure; section 6.1's text checks their ratios: ShareGPT has 8.4x longer
# prompts and 5.8x longer outputs on average).
DATASETS = {"sharegpt": (161.31, 337.99), "alpaca": (19.31, 58.45)}


class StaticReservation:
    """A KV pool where each request reserves ``max_seq_len`` slots at admission: the paper's Orca (Max).

    The same interface as KVCacheManager, so the Scheduler drives either.
    """

    def __init__(self, num_blocks: int, block_size: int = BLOCK_SIZE, max_seq_len: int = MAX_SEQ_LEN):
        self.num_blocks = check_int("num_blocks", num_blocks, 1)
        self.block_size = check_int("block_size", block_size, 1)
        check_int("max_seq_len", max_seq_len, 1)
        self.reserve = -(-max_seq_len // block_size)
        if self.reserve > num_blocks:  # no request could ever be admitted: the scheduler would wait forever
            raise ValueError(
                f"a reservation of {max_seq_len} slots takes {self.reserve} blocks of {block_size}; the pool has only {num_blocks}"
            )
        self.num_free = num_blocks
        self._held: set = set()

    def blocks_for(self, num_tokens: int) -> int:
        """ceil(num_tokens / B)."""
        return -(-num_tokens // self.block_size)

    def can_allocate(self, request) -> bool:
        """True when a whole max-length reservation is free."""
        return self.num_free >= self.reserve

    def allocate(self, request) -> int:
        """Reserve max_seq_len slots; nothing is cached, so 0 tokens are computed already."""
        self.num_free -= self.reserve
        self._held.add(request.request_id)
        request.num_computed_tokens = 0
        return 0

    def can_append(self, request) -> bool:
        """Always: the reservation holds every token up to max_seq_len."""
        return True

    def append_slot(self, request) -> None:
        """Nothing to take: the slot was reserved at admission."""

    def free(self, request) -> None:
        """Give the reservation back."""
        self._held.remove(request.request_id)
        self.num_free += self.reserve


@dataclass(frozen=True)
class SimResult:
    """One simulated run: ``normalized_latency`` (s/token, mean over requests), the mean batch size of decode
    steps, preemptions, and the simulated seconds."""

    rate: float
    allocator: str
    normalized_latency: float
    mean_batch: float
    preemptions: int
    seconds: float


def draw_requests(dataset: str, num_requests: int, rate: float, seed: int = 0) -> list[tuple[float, int, int]]:
    """(arrival s, prompt_len, output_len) per request: Poisson arrivals at ``rate`` req/s, lengths drawn.

    Lengths are exponential around the dataset's means (Fig. 11's long tails), at least 1, the prompt
    at most MAX_SEQ_LEN // 2 and prompt + output at most MAX_SEQ_LEN; the paper used the datasets'
    own lengths, so a sample's means are not Fig. 11's. The lengths do not depend on ``rate``
    (each gap takes one draw from the same generator whatever the rate).

    Raises ValueError for an unknown dataset, rate <= 0 or num_requests < 1.

    >>> [(round(t, 3), p, o) for t, p, o in draw_requests("alpaca", 2, rate=1.0, seed=1)]
    [(0.0, 3, 110), (1.443, 6, 40)]
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}: expected one of {sorted(DATASETS)}")
    if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate = {rate!r}; expected requests per second > 0")
    if isinstance(num_requests, bool) or not isinstance(num_requests, int) or num_requests < 1:
        raise ValueError(f"num_requests = {num_requests!r}; expected an int >= 1")
    mean_in, mean_out = DATASETS[dataset]
    rng, t, out = random.Random(seed), 0.0, []
    for i in range(num_requests):
        if i:
            t += rng.expovariate(rate)  # Poisson process: exponential gaps (section 6.1)
        p = min(MAX_SEQ_LEN // 2, max(1, round(rng.expovariate(1 / mean_in))))
        o = min(MAX_SEQ_LEN - p, max(1, round(rng.expovariate(1 / mean_out))))
        out.append((t, p, o))
    return out


def step_seconds(kind: str, requests) -> float:
    """Roofline time of one step: max(FLOPs / peak, bytes / bandwidth).

    A prefill computes 2 x N_params FLOPs per uncached token; a decode one token per request. Both read
    the weights once and the keys and values of every token the batch attends to.
    """
    if kind not in ("prefill", "decode"):
        raise ValueError(f"kind = {kind!r}; expected 'prefill' or 'decode'")
    requests = list(requests)
    if not all(isinstance(r, Request) for r in requests):
        raise TypeError("requests must be labs.scheduler.Request objects")
    if kind == "prefill":
        tokens = sum(r.num_tokens - r.num_computed_tokens for r in requests)
    else:
        tokens = len(requests)
    kv_bytes = sum(r.num_tokens for r in requests) * KV_BYTES_PER_TOKEN
    return max(2 * N_PARAMS * tokens / PEAK_FLOPS, (WEIGHT_BYTES + kv_bytes) / HBM_BYTES_PER_S)


def simulate(dataset: str, rate: float, allocator: str = "paged", num_requests: int = 200, seed: int = 0) -> SimResult:
    """Serve ``num_requests`` drawn requests at ``rate`` req/s; return the normalised latency.

    ``allocator`` is ``"paged"`` or ``"static"``; the KV pool is KV_POOL_BYTES either way. Raises
    ValueError for an unknown allocator, besides draw_requests' errors.

    >>> fast = simulate("alpaca", rate=2.0, num_requests=20)
    >>> fast.preemptions, 0.01 < fast.normalized_latency < 0.03  # seconds per output token
    (0, True)
    """
    if allocator not in ("paged", "static"):
        raise ValueError(f"unknown allocator {allocator!r}: expected 'paged' or 'static'")
    arrivals = draw_requests(dataset, num_requests, rate, seed)
    num_blocks = KV_POOL_BYTES // (KV_BYTES_PER_TOKEN * BLOCK_SIZE)
    kv = KVCacheManager(num_blocks, BLOCK_SIZE) if allocator == "paged" else StaticReservation(num_blocks)
    scheduler = Scheduler(kv, MAX_NUM_SEQS)
    # Each request's tokens are its own id, so no two requests share a prefix-cache block.
    requests = [Request(i, [i] * p, o) for i, (_, p, o) in enumerate(arrivals)]
    clock, nxt, finish, batches = 0.0, 0, {}, []
    while len(finish) < num_requests:
        while nxt < num_requests and arrivals[nxt][0] <= clock:
            scheduler.add(requests[nxt])
            nxt += 1
        if not scheduler.has_unfinished():
            clock = arrivals[nxt][0]  # idle until the next arrival
            continue
        plan = scheduler.schedule()
        if not plan.requests:  # cannot happen while every request fits the pool alone; never spin
            raise RuntimeError(f"step at {clock:.3f} s scheduled nothing with {len(scheduler.waiting)} waiting")
        clock += step_seconds(plan.kind, plan.requests)
        if plan.kind == "decode":
            batches.append(len(plan.requests))
        for r in scheduler.update(plan.requests, [r.request_id for r in plan.requests]):
            finish[r.request_id] = clock
    latency = sum((finish[i] - arrivals[i][0]) / arrivals[i][2] for i in range(num_requests)) / num_requests
    return SimResult(rate, allocator, latency, sum(batches) / max(1, len(batches)), scheduler.num_preemptions, clock)


def latency_vs_rate(dataset: str, rates, num_requests: int = 200, seed: int = 0) -> list[tuple[float, float, float]]:
    """The paper's Fig. 12 in miniature: (rate, static normalised latency, paged normalised latency) per rate.

    The same requests (same seed) are served at every rate by both allocators. Raises as :func:`simulate`.

    >>> [(r, s > p) for r, s, p in latency_vs_rate("alpaca", [20.0], num_requests=40)]
    [(20.0, True)]
    """
    return [
        (
            rate,
            simulate(dataset, rate, "static", num_requests, seed).normalized_latency,
            simulate(dataset, rate, "paged", num_requests, seed).normalized_latency,
        )
        for rate in rates
    ]
