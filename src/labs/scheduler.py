"""A serving scheduler: requests wait, run, finish; KV blocks decide who runs, and who is preempted.

Lab 4, in the shape of nano-vLLM's ``Scheduler`` (GeeeekExplorer/nano-vllm,
``nanovllm/engine/scheduler.py``) and vLLM v1's (``vllm/v1/core/sched/scheduler.py``).
A :class:`Request` is *waiting*, *running* or *finished*. Each engine step
runs one batch, either a **prefill** (newly admitted requests: every token
of theirs the prefix cache did not hold) or a **decode** (one token for
every running request), as nano-vLLM does (vLLM v1 mixes both in one batch).

Admission is first come, first served: the front of ``waiting`` is admitted
while the batch has room (``max_num_seqs``) and the KV pool has its blocks;
the first request that does not fit stops admission (no overtaking).
A decode step needs one new block for each request whose last block is full.
When none is free, the most recently admitted running request is
**preempted by recompute** (Kwon et al., SOSP 2023, section 4.5: first come,
first served, the latest-arrived preempted first, all of its blocks or none; the
paper swaps or recomputes, vLLM v1 only recomputes): its blocks are freed and it
goes back to the *front* of
``waiting``, keeping the tokens it generated. Readmitted, its prompt and
output are prefilled again (what the prefix cache still holds is not
recomputed), so no token is lost or repeated.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WAITING = "waiting"  # a Request's status
RUNNING = "running"
FINISHED = "finished"


class InvalidRequestError(ValueError):
    """A request the engine cannot serve as given: bad token ids, max_new_tokens < 1, a duplicate id.

    >>> Request(0, [1, 2], max_new_tokens=0)
    Traceback (most recent call last):
    labs.scheduler.InvalidRequestError: request 0: max_new_tokens = 0; expected an int >= 1
    """


class RequestTooLongError(InvalidRequestError):
    """A request whose tokens could never fit the KV pool (or the model's positions), even alone.

    Admitting it would preempt it forever; vLLM rejects such a prompt the same way.
    """


@dataclass(eq=False)
class Request:
    """One generation request and its progress.

    Args:
        request_id: any hashable id, unique within an engine.
        prompt_ids: (prompt_len,) token ids, prompt_len >= 1.
        max_new_tokens: tokens to generate at most, >= 1.
        stop_ids: token ids that end the request (the stop token is kept in the output).
        sampling_params: a ``labs.sampling.SamplingParams`` (temperature, top_k, seed);
            None for greedy.

    Attributes:
        generator: the request's own ``random.Random`` for a sampled request
            (None when greedy), made from the seed once, here: a preempted request
            keeps it, so on readmission its draws continue where they stopped.
        output_ids: tokens generated so far.
        status: ``"waiting"``, ``"running"`` or ``"finished"``.
        num_computed_tokens: leading tokens of ``all_token_ids`` whose keys and
            values are in the KV cache (after a prefill or decode step, all but
            the token just sampled).
        num_preemptions: times this request was preempted.

    Raises InvalidRequestError for an empty prompt, a non-int token or max_new_tokens < 1.

    >>> r = Request("a", [5, 6], max_new_tokens=3)
    >>> r.all_token_ids, r.status, r.num_tokens
    ([5, 6], 'waiting', 2)
    """

    request_id: object
    prompt_ids: list
    max_new_tokens: int
    stop_ids: tuple = ()
    sampling_params: object = None
    output_ids: list = field(default_factory=list)
    status: str = WAITING
    num_computed_tokens: int = 0
    num_preemptions: int = 0
    generator: object = field(default=None, repr=False)

    def __post_init__(self):
        rid = self.request_id
        if isinstance(self.prompt_ids, (str, bytes)) or not hasattr(self.prompt_ids, "__iter__"):
            raise InvalidRequestError(f"request {rid!r}: prompt_ids must be a list of token ids, got {self.prompt_ids!r:.60}")
        self.prompt_ids = list(self.prompt_ids)
        self.stop_ids = tuple(self.stop_ids)
        for name, ids in (("prompt_ids", self.prompt_ids), ("stop_ids", self.stop_ids)):
            for i, t in enumerate(ids):
                if isinstance(t, bool) or not isinstance(t, int) or t < 0:
                    raise InvalidRequestError(f"request {rid!r}: {name}[{i}] = {t!r}; expected a token id (an int >= 0)")
        if not self.prompt_ids:
            raise InvalidRequestError(f"request {rid!r}: the prompt is empty; expected at least one token")
        m = self.max_new_tokens
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise InvalidRequestError(f"request {rid!r}: max_new_tokens = {m!r}; expected an int >= 1")
        params = self.sampling_params
        if params is not None and not params.is_greedy and self.generator is None:
            self.generator = params.make_generator()  # one per request: its draws ignore the rest of the batch

    @property
    def all_token_ids(self) -> list[int]:
        """Prompt then output: (num_tokens,) token ids."""
        return self.prompt_ids + self.output_ids

    @property
    def num_tokens(self) -> int:
        """len(prompt_ids) + len(output_ids)."""
        return len(self.prompt_ids) + len(self.output_ids)

    @property
    def is_done(self) -> bool:
        """True once max_new_tokens were generated or the last one is a stop token."""
        return len(self.output_ids) >= self.max_new_tokens or bool(self.output_ids and self.output_ids[-1] in self.stop_ids)


@dataclass
class SchedulerOutput:
    """One step's plan: ``kind`` ("prefill" or "decode"), the ``requests`` to run, and those ``preempted``."""

    kind: str
    requests: list
    preempted: list


class Scheduler:
    """Waiting, running and finished requests over one KV cache manager.

    Args:
        kv: a ``labs.kv_cache_manager.KVCacheManager`` (the block pool and prefix cache).
        max_num_seqs: the most requests running at once, >= 1 (vLLM v1's
            ``max_num_seqs``, which caps ``len(self.running)``; nano-vLLM's caps
            the requests scheduled in one step).
        schedule_fn: a function of the scheduler that plans one step and
            returns a SchedulerOutput; None for :func:`schedule`.

    >>> from labs.kv_cache_manager import KVCacheManager
    >>> s = Scheduler(KVCacheManager(num_blocks=4, block_size=2), max_num_seqs=2)
    >>> for rid in "abc":
    ...     s.add(Request(rid, [1, 2, 3], max_new_tokens=2))
    >>> out = s.schedule(); out.kind, [r.request_id for r in out.requests]  # two fit the batch
    ('prefill', ['a', 'b'])
    """

    def __init__(self, kv, max_num_seqs: int = 8, schedule_fn=None):
        if isinstance(max_num_seqs, bool) or not isinstance(max_num_seqs, int) or max_num_seqs < 1:
            raise ValueError(f"max_num_seqs = {max_num_seqs!r}; expected an int >= 1")
        self.kv = kv
        self.max_num_seqs = max_num_seqs
        self.waiting: deque = deque()
        self.running: list = []  # in admission order: the last one is preempted first
        self.finished: list = []
        self.num_preemptions = 0
        self.schedule_fn = schedule if schedule_fn is None else schedule_fn  # Lab 4's exercise 1 plugs in here

    def add(self, request: Request) -> None:
        """Queue a request at the back of ``waiting``.

        Raises RequestTooLongError if its longest state, prompt + max_new_tokens - 1
        tokens in the cache (the last token sampled is never stored), needs more
        blocks than the pool has.
        """
        need = self.kv.blocks_for(len(request.prompt_ids) + request.max_new_tokens - 1)
        if need > self.kv.num_blocks:
            raise RequestTooLongError(
                f"request {request.request_id!r}: {len(request.prompt_ids)} prompt tokens + {request.max_new_tokens} "
                f"new need {need} blocks of {self.kv.block_size} slots; the pool has only {self.kv.num_blocks}"
            )
        request.status = WAITING
        self.waiting.append(request)

    def has_unfinished(self) -> bool:
        """True while some request waits or runs."""
        return bool(self.waiting or self.running)

    def schedule(self) -> SchedulerOutput:
        """One step's plan, made by ``schedule_fn`` (the module's :func:`schedule` unless given)."""
        return self.schedule_fn(self)

    def update(self, requests, tokens) -> list:
        """Record one sampled token per request run this step; finish and free the done ones.

        Args:
            requests: the step's SchedulerOutput.requests.
            tokens: (len(requests),) the token sampled for each.

        Returns the requests that finished this step.
        """
        done = []
        for request, token in zip(list(requests), tokens, strict=True):  # a copy: it may be self.running
            request.num_computed_tokens = request.num_tokens  # the step stored every token's K/V
            request.output_ids.append(token)
            if request.is_done:
                request.status = FINISHED
                self.kv.free(request)
                self.running.remove(request)
                self.finished.append(request)
                done.append(request)
        return done


def schedule(scheduler: Scheduler) -> SchedulerOutput:
    """Admit waiting requests (a prefill step) or else give each running one a slot (a decode step).

    Prefill: admit the front of ``waiting`` while fewer than max_num_seqs
    run and its blocks are free; the first that does not fit stops admission
    (first come, first served). Decode: in admission order, each running
    request gets the slot for its last token; when that needs a block and
    none is free, the most recently admitted request not yet served this step
    is preempted (all its blocks freed, back to the *front* of waiting, its
    generated tokens kept) — or the request itself, if it is the last.
    Source: nano-vLLM's ``Scheduler.schedule`` (prefill first, then decode,
    preempting ``running.pop()``, the newest); vLLM v1 does the same under its
    default FCFS policy (its priority policy preempts the lowest priority).

    Args:
        scheduler: a :class:`Scheduler`; its waiting, running, kv and
            num_preemptions are updated in place.

    Returns a SchedulerOutput; its requests are in admission order. Raises
    OutOfBlocksError only if the KV cache manager's can_* and its allocations disagree.

    >>> from labs.kv_cache_manager import KVCacheManager
    >>> s = Scheduler(KVCacheManager(num_blocks=4, block_size=2), max_num_seqs=3)
    >>> for i, rid in enumerate("abc"):  # 3 tokens each: 2 blocks of 2 slots, no prefix in common
    ...     s.add(Request(rid, [3 * i, 3 * i + 1, 3 * i + 2], max_new_tokens=2))
    >>> out = schedule(s); [r.request_id for r in out.requests], [r.request_id for r in s.waiting]
    (['a', 'b'], ['c'])
    """
    admitted, preempted = [], []
    while scheduler.waiting and len(scheduler.running) < scheduler.max_num_seqs:
        request = scheduler.waiting[0]
        if not scheduler.kv.can_allocate(request):
            break  # first come, first served: nobody overtakes the front
        scheduler.waiting.popleft()
        scheduler.kv.allocate(request)  # sets num_computed_tokens to the prefix-cache hit
        request.status = RUNNING
        scheduler.running.append(request)
        admitted.append(request)
    if admitted:
        return SchedulerOutput("prefill", admitted, preempted)

    queue, scheduled = deque(scheduler.running), []
    while queue:
        request = queue.popleft()
        while not scheduler.kv.can_append(request):
            victim = queue.pop() if queue else request  # the most recently admitted
            scheduler.kv.free(victim)  # recompute later: its blocks go, its tokens stay
            victim.status, victim.num_computed_tokens = WAITING, 0
            victim.num_preemptions += 1
            scheduler.waiting.appendleft(victim)
            preempted.append(victim)
            if victim is request:
                break
        else:
            scheduler.kv.append_slot(request)
            scheduled.append(request)
    scheduler.running = scheduled
    scheduler.num_preemptions += len(preempted)
    return SchedulerOutput("decode", scheduled, preempted)
