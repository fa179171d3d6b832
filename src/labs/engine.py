"""A serving engine in the shape of vLLM v1: scheduler, KV cache manager and model runner, one step at a time.

Lab 4. ``LLMEngine.step()`` is nano-vLLM's (``nanovllm/engine/llm_engine.py``):
the scheduler picks a prefill or a decode batch (admitting and preempting as
KV blocks allow), the model runner computes it over paged K/V, and the
scheduler records one token per request, finishing and freeing those
done. A token is greedy, or drawn with the request's own seeded generator
(``labs.sampling``, vLLM's ``SamplingParams``' temperature, top_k and seed).
Generation through the engine equals ``labs.tiny_lm.dense_generate`` with
the same parameters token for token, however requests are batched, paged,
prefix-cached or preempted: ``tests/test_engine.py`` holds that oracle.
"""

from __future__ import annotations

import itertools
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass

from labs.kv_cache_manager import KVCacheManager
from labs.model_runner import ModelRunner
from labs.paged_attention import DEFAULT_BLOCK_SIZE
from labs.sampling import SamplingParams
from labs.scheduler import FINISHED, InvalidRequestError, Request, RequestTooLongError, Scheduler


class EngineStalledError(RuntimeError):
    """A step planned no work while requests wait or run (a schedule that never admits), or
    ``max_steps`` passed with requests unfinished: stopping beats looping forever."""


@dataclass(frozen=True)
class StepOutput:
    """What one ``step()`` did: ``kind`` ("prefill", "decode" or "idle"), ``new_tokens``
    (request id -> the token it generated), and the ids ``preempted`` and ``finished``."""

    kind: str
    new_tokens: dict
    preempted: tuple
    finished: tuple


@contextmanager
def interrupts_after():
    """Hold a KeyboardInterrupt (SIGINT: Ctrl+C, the page's Stop) that arrives inside the block; raise it after.

    A step schedules (admits, allocates, preempts), samples (advancing each request's generator)
    and records its tokens: stopped between two of these, the engine would hold a half-made step,
    and its text would no longer equal dense generation. Where Python takes no signal handler
    (a thread other than the main one), the block runs as it is.

    >>> with interrupts_after():
    ...     total = sum(range(10))
    >>> total
    45
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    except (ValueError, OSError):  # this Python takes no handler for SIGINT here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt


@dataclass(frozen=True)
class EngineStats:
    """Running counts: steps, tokens generated, blocks in use / cached / free, prefix hit rate (tokens), preemptions, evictions."""

    steps: int
    tokens_generated: int
    blocks_in_use: int
    blocks_cached: int
    blocks_free: int
    prefix_hit_rate: float
    preemptions: int
    evictions: int


@dataclass(frozen=True)
class BlockView:
    """One physical block for a picture: who holds it (request ids), and whether the prefix cache keys it."""

    block: int
    holders: tuple
    cached: bool

    @property
    def state(self) -> str:
        """``"in use"`` (held by a running request), ``"cached"`` (free, still holding a prefix) or ``"free"``."""
        return "in use" if self.holders else ("cached" if self.cached else "free")


class LLMEngine:
    """Serving of a TinyLM over a pool of ``num_blocks`` KV blocks, greedy unless a request says otherwise.

    Args:
        model: a ``labs.tiny_lm.TinyLM``.
        num_blocks: physical blocks in the KV pool (per layer and head), >= 1.
        block_size: token slots per block, B (vLLM's default 16).
        max_num_seqs: the most requests in one batch, >= 1.
        schedule: the scheduler's step, a function of a Scheduler returning a
            SchedulerOutput (default ``labs.scheduler.schedule``).
        attention: the decode attention, with ``paged_decode_attention``'s
            arguments (default ``labs.model_runner.paged_decode_attention``).

    >>> from labs.tiny_lm import ModelConfig, TinyLM, dense_generate
    >>> model = TinyLM.random(ModelConfig(vocab_size=6, d_model=8, n_layer=1, n_head=2, max_positions=16))
    >>> engine = LLMEngine(model, num_blocks=4, block_size=2, max_num_seqs=2)
    >>> outs = engine.generate([[1, 2, 3], [1, 2, 4]], max_new_tokens=4)
    >>> outs == [dense_generate(model, [1, 2, 3], 4), dense_generate(model, [1, 2, 4], 4)]
    True
    >>> engine.stats.preemptions > 0, engine.stats.tokens_generated
    (True, 8)
    >>> from labs.sampling import SamplingParams
    >>> warm = SamplingParams(temperature=0.8, seed=5)
    >>> engine.generate([[1, 2, 3]], max_new_tokens=4, sampling_params=warm) == [dense_generate(model, [1, 2, 3], 4, sampling_params=warm)]
    True
    """

    def __init__(
        self, model, num_blocks: int, block_size: int = DEFAULT_BLOCK_SIZE, max_num_seqs: int = 8, schedule=None, attention=None
    ):
        self.runner = ModelRunner(model, num_blocks, block_size, attention)  # first: it checks the model
        self.model = model
        self.kv = KVCacheManager(num_blocks, block_size)
        self.scheduler = Scheduler(self.kv, max_num_seqs, schedule)
        self.requests: dict = {}  # request id -> Request, every request ever added
        self._ids = itertools.count()
        self._steps = 0
        self._tokens = 0

    def add_request(self, prompt, max_new_tokens: int, stop_ids=(), request_id=None, sampling_params: SamplingParams | None = None):
        """Queue a request; return its id.

        Args:
            prompt: text (encoded by the model's tokenizer) or (prompt_len,) token ids.
            max_new_tokens: tokens to generate at most, >= 1.
            stop_ids: token ids that end the request (kept in the output).
            request_id: any hashable; default 0, 1, 2, ... in order of addition.
            sampling_params: a ``labs.sampling.SamplingParams``; None for greedy.

        Raises InvalidRequestError for a duplicate id, an empty prompt,
        max_new_tokens < 1 or sampling_params that are not a SamplingParams; RequestTooLongError when prompt + max_new_tokens
        passes the model's max_positions or could never fit the pool;
        the tokenizer's error for a character outside its vocabulary.
        """
        ids = self.model.tokenizer.encode(prompt) if isinstance(prompt, str) else prompt
        rid = next(self._ids) if request_id is None else request_id
        if rid in self.requests:
            raise InvalidRequestError(f"request id {rid!r} is taken; expected a new id")
        if sampling_params is not None and not isinstance(sampling_params, SamplingParams):
            raise InvalidRequestError(
                f"request {rid!r}: sampling_params is a {type(sampling_params).__name__}; "
                f"expected a labs.sampling.SamplingParams or None (greedy)"
            )
        request = Request(rid, ids, max_new_tokens, stop_ids, sampling_params)
        vocab = self.model.config.vocab_size
        for t in request.prompt_ids + list(request.stop_ids):
            if t >= vocab:
                raise InvalidRequestError(f"request {rid!r}: token id {t} is outside the vocabulary 0 .. {vocab - 1}")
        positions = len(request.prompt_ids) + max_new_tokens
        if positions > self.model.config.max_positions:
            raise RequestTooLongError(
                f"request {rid!r}: {len(request.prompt_ids)} prompt tokens + max_new_tokens "
                f"{max_new_tokens} = {positions} positions; the model has max_positions = "
                f"{self.model.config.max_positions}"
            )
        self.scheduler.add(request)
        self.requests[rid] = request
        return rid

    def has_unfinished_requests(self) -> bool:
        """True while a request waits or runs."""
        return self.scheduler.has_unfinished()

    def step(self) -> StepOutput:
        """Schedule one batch, run it, record its tokens; return a StepOutput ("idle" when nothing is left).

        A step is whole or not at all: a KeyboardInterrupt (the page's Stop) that arrives while it
        runs is raised once it has ended (see :func:`interrupts_after`), so a stopped engine goes on
        with ``step()`` as if it had never been stopped.
        """
        with interrupts_after():
            return self._step()

    def _step(self) -> StepOutput:
        if not self.scheduler.has_unfinished():
            return StepOutput("idle", {}, (), ())
        plan = self.scheduler.schedule()
        if not plan.requests and not plan.preempted:
            sched = self.scheduler
            raise EngineStalledError(
                f"step {self._steps}: the schedule ran no request while {len(sched.waiting)} wait and "
                f"{len(sched.running)} run; expected a prefill of the front of waiting or a decode of the running"
            )
        tokens = self.runner.execute(plan.requests, self.kv)
        finished = self.scheduler.update(plan.requests, tokens)
        self._steps += 1
        self._tokens += len(tokens)
        return StepOutput(
            plan.kind,
            {r.request_id: t for r, t in zip(plan.requests, tokens)},
            tuple(r.request_id for r in plan.preempted),
            tuple(r.request_id for r in finished),
        )

    def generate(self, prompts, max_new_tokens: int, stop_ids=(), max_steps: int | None = None, sampling_params=None) -> list:
        """Serve every prompt to the end; return each one's output, text for a text prompt, else token ids.

        ``sampling_params``: None (greedy), one SamplingParams for every prompt, or a
        list of them (or None), one per prompt, as vLLM's ``LLM.generate`` takes.

        Raises EngineStalledError when a step runs nothing, or when ``max_steps``
        (default: 4 x the tokens asked for + 10, far more than a correct schedule takes)
        steps pass with requests unfinished.
        """
        if sampling_params is None or isinstance(sampling_params, SamplingParams):
            sampling_params = [sampling_params] * len(prompts)
        elif len(sampling_params) != len(prompts):
            raise InvalidRequestError(
                f"{len(sampling_params)} sampling_params for {len(prompts)} prompts; expected one, or one per prompt"
            )
        rids = [self.add_request(p, max_new_tokens, stop_ids, sampling_params=sp) for p, sp in zip(prompts, sampling_params)]
        limit = 4 * len(prompts) * max_new_tokens + 10 if max_steps is None else max_steps
        for _ in range(limit):
            if not self.has_unfinished_requests():
                break
            self.step()
        if self.has_unfinished_requests():
            raise EngineStalledError(
                f"{limit} steps and {sum(not self.is_finished(r) for r in rids)} requests "
                f"still unfinished; expected every request done (max_steps = {limit})"
            )
        outs = []
        for prompt, rid in zip(prompts, rids):
            ids = self.requests[rid].output_ids
            outs.append(self.model.tokenizer.decode(ids) if isinstance(prompt, str) else list(ids))
        return outs

    @property
    def stats(self) -> EngineStats:
        """The running counts, as an EngineStats."""
        free = self.kv.num_free
        return EngineStats(
            self._steps,
            self._tokens,
            self.kv.num_blocks - free,
            self.kv.num_cached,
            free,
            self.kv.prefix_hit_rate,
            self.scheduler.num_preemptions,
            self.kv.num_evicted,
        )

    def block_pool_view(self) -> list[BlockView]:
        """Every physical block: (num_blocks,) BlockViews, block id order."""
        holders = {b: [] for b in range(self.kv.num_blocks)}
        for rid, table in self.kv.blocks.tables.items():
            for b in table:
                holders[b].append(rid)
        cached = set(self.kv.blocks.cached.values())
        return [BlockView(b, tuple(holders[b]), b in cached) for b in range(self.kv.num_blocks)]

    def output(self, request_id) -> list[int]:
        """The tokens request ``request_id`` generated so far; KeyError if unknown."""
        return list(self.requests[request_id].output_ids)

    def is_finished(self, request_id) -> bool:
        """True once request ``request_id`` finished."""
        return self.requests[request_id].status == FINISHED
