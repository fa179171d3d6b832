"""Lab 4's engine: the oracle (engine == dense generation, greedy or seeded sampling, token for token), the scheduler's
rules, split-by-block decode attention against dense attention, and the named errors."""

from __future__ import annotations

import math
import random
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from labs.attention import PartialAttention, attention
from labs.engine import LLMEngine
from labs.kv_cache_manager import KVCacheManager
from labs.model_runner import paged_decode_attention
from labs.paged_attention import PagedKVCache, PageFault
from labs.sampling import SamplingParams
from labs.scheduler import FINISHED, RUNNING, WAITING, InvalidRequestError, Request, RequestTooLongError, Scheduler
from labs.tiny_lm import ModelConfig, TinyLM, dense_generate

# A tiny model keeps an example in tens of milliseconds: 2 layers, 2 heads of 4, vocabulary 7 (a small
# vocabulary makes repeated prompt blocks, hence prefix-cache hits, common).
CONFIG = ModelConfig(vocab_size=7, d_model=8, n_layer=2, n_head=2, max_positions=40)
MODEL = TinyLM.random(CONFIG, seed=3)
ORACLE = settings(
    max_examples=25,
    deadline=None,
    database=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)

# What the generated cases did, across the oracle's examples: each must happen in some case.
SEEN = {"preemption": 0, "eviction": 0, "prefix hit": 0, "stop": 0, "sampled request preempted": 0}

# Greedy (None or temperature 0) or sampled; each sampled request has a seed of its own.
sampling = st.one_of(
    st.none(),
    st.builds(SamplingParams, st.just(1.0), st.none(), st.integers(0, 2**32 - 1)),
    st.builds(SamplingParams, st.sampled_from([0.0, 0.6, 1.0, 2.0]), st.sampled_from([None, 1, 2, 3]), st.integers(0, 2**32 - 1)),
)


@st.composite
def workloads(draw):
    """Prompts with shared prefixes, output lengths, and a pool from just big enough for one request to roomy."""
    block_size = draw(st.sampled_from([1, 2, 3, 4]))
    prefixes = [draw(st.lists(st.integers(0, 6), min_size=0, max_size=9)) for _ in range(2)]
    n = draw(st.integers(1, 5))
    requests = []
    for _ in range(n):
        prefix = prefixes[draw(st.integers(0, 1))]
        tail = draw(st.lists(st.integers(0, 6), min_size=0 if prefix else 1, max_size=5))
        requests.append((prefix + tail, draw(st.integers(1, 8)), draw(sampling)))
    longest = max(len(p) + m - 1 for p, m, _ in requests)
    smallest = -(-longest // block_size)  # the pool must hold the longest request alone
    num_blocks = smallest + draw(st.sampled_from([0, 0, 1, 1, 2, 3, 12]))  # mostly tight: preemption
    max_num_seqs = draw(st.integers(1, 4))
    stop_ids = tuple(draw(st.lists(st.integers(0, 6), max_size=1)))
    return block_size, num_blocks, max_num_seqs, requests, stop_ids


@ORACLE
@given(workloads())
def test_the_engine_generates_what_dense_generation_generates(case):
    block_size, num_blocks, max_num_seqs, requests, stop_ids = case
    engine = LLMEngine(MODEL, num_blocks=num_blocks, block_size=block_size, max_num_seqs=max_num_seqs)
    rids = [engine.add_request(p, m, stop_ids, sampling_params=sp) for p, m, sp in requests]
    while engine.has_unfinished_requests():
        out = engine.step()
        # Every block in use is held by a running request, and no request holds more than it has tokens for.
        for view in engine.block_pool_view():
            assert all(engine.requests[r].status == RUNNING for r in view.holders)
        assert engine.stats.blocks_in_use + engine.stats.blocks_free == num_blocks
        assert out.kind in ("prefill", "decode")
    for rid, (prompt, max_new, sp) in zip(rids, requests):
        assert engine.output(rid) == dense_generate(MODEL, prompt, max_new, stop_ids, sp), (rid, prompt, max_new, sp)
        assert engine.is_finished(rid)
        request = engine.requests[rid]
        if request.generator is not None:  # one draw per generated token, none again on recompute
            SEEN["sampled request preempted"] += request.num_preemptions > 0
            assert request.generator.getstate() == _advanced(sp.seed, len(request.output_ids))
    stats = engine.stats
    assert stats.blocks_in_use == 0 and stats.tokens_generated == sum(len(engine.output(r)) for r in rids)
    SEEN["preemption"] += stats.preemptions > 0
    SEEN["eviction"] += stats.evictions > 0
    SEEN["prefix hit"] += stats.prefix_hit_rate > 0
    SEEN["stop"] += any(len(engine.output(r)) < m for r, (_, m, _) in zip(rids, requests))


def _advanced(seed, draws):
    """The state of random.Random(seed) after ``draws`` calls to random()."""
    g = random.Random(seed)
    for _ in range(draws):
        g.random()
    return g.getstate()


def test_the_oracle_cases_preempted_evicted_and_hit_the_prefix_cache():
    if not any(SEEN.values()):  # run alone: run the oracle first
        test_the_engine_generates_what_dense_generation_generates()
    assert all(SEEN.values()), SEEN


def test_a_sampled_request_writes_the_same_text_alone_or_preempted_in_a_batch():
    warm = SamplingParams(temperature=3.0, seed=11)  # the random model is peaked: a high temperature varies it
    prompt = [1, 2, 3, 4, 5]
    alone = LLMEngine(MODEL, num_blocks=16, block_size=2).generate([prompt], 8, sampling_params=warm)[0]
    crowded = LLMEngine(MODEL, num_blocks=7, block_size=2, max_num_seqs=4)  # 7 blocks: one request's 12 slots
    others = [[6, 5, 4], [1, 2, 3, 4, 6], [2, 2]]
    ids = [crowded.add_request(p, 8, sampling_params=SamplingParams(temperature=3.0, seed=i)) for i, p in enumerate(others)]
    mine = crowded.add_request(prompt, 8, sampling_params=warm)
    while crowded.has_unfinished_requests():
        crowded.step()
    assert crowded.requests[mine].num_preemptions > 0  # recomputed, and still the same draws
    assert crowded.output(mine) == alone == dense_generate(MODEL, prompt, 8, sampling_params=warm)
    assert len({tuple(alone)} | {tuple(crowded.output(i)) for i in ids}) > 1
    assert alone != dense_generate(MODEL, prompt, 8)  # sampled, not greedy


def test_bad_sampling_params_raise_named_errors():
    from labs.sampling import InvalidSamplingParamsError, sample

    for bad, message in [
        ({"temperature": -0.1}, "temperature = -0.1; expected a finite number >= 0"),
        ({"temperature": math.nan}, "temperature = nan"),
        ({"temperature": math.inf}, "temperature = inf"),
        ({"temperature": "0.7"}, "temperature = '0.7'"),
        ({"top_k": 0}, "top_k = 0; expected an int >= 1, or None"),
        ({"top_k": 2.0}, "top_k = 2.0"),
        ({"top_k": True}, "top_k = True"),
        ({"seed": 1.5}, "seed = 1.5; expected an int, or None"),
        ({"seed": "42"}, "seed = '42'"),
    ]:
        with pytest.raises(InvalidSamplingParamsError, match=message):
            SamplingParams(**bad)
    assert issubclass(InvalidSamplingParamsError, ValueError)
    with pytest.raises(InvalidRequestError, match="sampling_params is a dict; expected a labs.sampling.SamplingParams"):
        LLMEngine(MODEL, num_blocks=4, block_size=2).add_request([1], 2, sampling_params={"temperature": 0.7})
    with pytest.raises(TypeError, match="needs its own random.Random"):
        sample([0.0, 1.0], SamplingParams(temperature=1.0))
    with pytest.raises(TypeError, match="params is a float; expected a labs.sampling.SamplingParams"):
        sample([0.0, 1.0], 0.7)
    with pytest.raises(ValueError, match="give no distribution at temperature 1.0"):
        sample([0.0, math.nan], SamplingParams(temperature=1.0), random.Random(0))
    with pytest.raises(ValueError, match="give no distribution"):
        sample([0.0, math.inf], SamplingParams(temperature=1.0), random.Random(0))
    with pytest.raises(InvalidRequestError, match="2 sampling_params for 1 prompts"):
        LLMEngine(MODEL, num_blocks=4, block_size=2).generate([[1]], 2, sampling_params=[None, None])


def test_sampling_draws_from_the_tempered_top_k_softmax():
    from labs.sampling import sample

    g, n = random.Random(0), 2000
    logits = [0.0, math.log(3.0), -50.0]  # p = 1/4, 3/4, ~0 at temperature 1
    counts = [0, 0, 0]
    for _ in range(n):
        counts[sample(logits, SamplingParams(temperature=1.0), g)] += 1
    assert abs(counts[1] / n - 0.75) < 0.04 and counts[2] == 0  # 4 standard deviations: 0.039
    hot = [sample(logits, SamplingParams(temperature=2.0), g) for _ in range(n)]  # p ∝ 1, sqrt(3): 0.634 for token 1
    assert abs(hot.count(1) / n - math.sqrt(3) / (1 + math.sqrt(3))) < 0.045
    top2 = {sample([5.0, 1.0, 4.0, 4.9], SamplingParams(temperature=100.0, top_k=2), g) for _ in range(200)}
    assert top2 == {0, 3}  # nearly uniform over the two largest, never the others
    assert {sample([2.0, 2.0, 1.0], SamplingParams(temperature=1.0, top_k=1), g) for _ in range(50)} == {0}  # ties: lower id
    assert sample([1.0, 7.0, 3.0], SamplingParams(temperature=1e-300), g) == 1  # tiny temperature: no overflow, the max


def test_a_pool_of_one_request_serves_many_by_preempting_and_loses_no_token():
    prompts = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [2, 2, 2], [6, 5, 4, 3, 2, 1]]
    engine = LLMEngine(MODEL, num_blocks=5, block_size=2, max_num_seqs=4)  # 5 blocks: 10 slots, one request's worth
    outs = engine.generate(prompts, max_new_tokens=5)
    assert outs == [dense_generate(MODEL, p, 5) for p in prompts]
    assert engine.stats.preemptions > 0 and engine.stats.evictions > 0


def test_a_shared_prefix_is_computed_once():
    system = [1, 2, 3, 4, 5, 6, 0, 1]  # two full blocks of 4
    engine = LLMEngine(MODEL, num_blocks=16, block_size=4, max_num_seqs=1)
    a = engine.add_request(system + [2], 2)
    b = engine.add_request(system + [3], 2)
    while engine.has_unfinished_requests():
        engine.step()
    assert engine.requests[b].num_preemptions == 0
    assert engine.kv.prefix_hits == 8 and engine.kv.prefix_queries == 18
    assert engine.output(b) == dense_generate(MODEL, system + [3], 2)
    assert engine.output(a) == dense_generate(MODEL, system + [2], 2)


def test_a_prompt_cached_to_its_end_still_computes_its_last_token():
    prompt = [1, 2, 3, 4]  # exactly one block
    engine = LLMEngine(MODEL, num_blocks=8, block_size=4)
    engine.generate([prompt], 3)
    engine.add_request(prompt, 3, request_id="again")
    request = engine.requests["again"]
    engine.scheduler.schedule()
    assert request.num_computed_tokens == 0  # vLLM v1: hits stop before the last token
    engine.runner.execute([request], engine.kv)


# --------------------------------------------------------------------------- the scheduler's rules


def _scheduler(num_blocks, block_size=2, max_num_seqs=8):
    return Scheduler(KVCacheManager(num_blocks, block_size), max_num_seqs)


def test_admission_is_first_come_first_served_and_stops_at_the_first_that_does_not_fit():
    s = _scheduler(num_blocks=4)
    big, small = Request("big", [1] * 7, 1), Request("small", [2], 1)
    s.add(Request("first", [3, 3, 3], 2)), s.add(big), s.add(small)
    out = s.schedule()
    assert out.kind == "prefill" and [r.request_id for r in out.requests] == ["first"]
    assert [r.request_id for r in s.waiting] == ["big", "small"]  # small would fit; it does not overtake
    assert big.status == WAITING


def test_the_batch_holds_at_most_max_num_seqs():
    s = _scheduler(num_blocks=20, max_num_seqs=2)
    for i in range(3):
        s.add(Request(i, [i], 3))
    assert [r.request_id for r in s.schedule().requests] == [0, 1]
    s.update(s.running, [5, 5])
    out = s.schedule()  # the batch is full: decode, not admission
    assert out.kind == "decode" and [r.request_id for r in out.requests] == [0, 1]


def test_decode_preempts_the_most_recently_admitted_and_puts_it_first_in_line():
    s = _scheduler(num_blocks=3, block_size=2)
    a, b, c = Request("a", [1, 2], 4), Request("b", [3], 4), Request("c", [4], 4)
    for r in (a, b, c):
        s.add(r)
    s.update(s.schedule().requests, [0, 0, 0])  # a: its block full, b and c: half full; no block left
    out = s.schedule()  # a needs a block for its 3rd token: c, the newest, goes; b has room in its block
    assert [r.request_id for r in out.preempted] == ["c"] and [r.request_id for r in out.requests] == ["a", "b"]
    assert list(s.waiting)[0] is c and c.status == WAITING and c.num_computed_tokens == 0
    assert c.output_ids == [0] and c.num_preemptions == 1  # its token is kept, to be prefilled again
    assert s.kv.can_allocate(c) is False


def test_a_lone_request_that_cannot_grow_preempts_itself_and_comes_back():
    s = _scheduler(num_blocks=2, block_size=2)
    r = Request("r", [1, 2, 3], 2)
    s.add(r)
    s.update(s.schedule().requests, [4])  # 4 slots, 3 used
    out = s.schedule()
    assert out.requests == [r] and not out.preempted  # the 4th slot is free
    s.update(out.requests, [5])
    assert r.status == FINISHED and s.kv.num_free == 2


def test_update_finishes_at_a_stop_token_and_frees_the_blocks():
    s = _scheduler(num_blocks=6)
    r = Request("r", [1, 2, 3], 10, stop_ids=(6,))
    s.add(r)
    done = s.update(s.schedule().requests, [6])
    assert done == [r] and r.status == FINISHED and r.output_ids == [6] and s.kv.num_free == 6


# --------------------------------------------------------------------------- split-by-block attention


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(st.integers(1, 4), st.integers(1, 9), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_paged_decode_attention_equals_dense_attention(block_size, num_tokens, head_dim, seed):
    rng = random.Random(seed)
    num_blocks = -(-num_tokens // block_size) + 2
    table = rng.sample(range(num_blocks), num_blocks - 2)  # scattered physical blocks
    cache = PagedKVCache(num_blocks, block_size, head_dim)
    keys = [[rng.uniform(-3, 3) for _ in range(head_dim)] for _ in range(num_tokens)]
    values = [[rng.uniform(-3, 3) for _ in range(head_dim)] for _ in range(num_tokens)]
    for t in range(num_tokens):
        cache.write(table[t // block_size] * block_size + t % block_size, keys[t], values[t])
    q = [rng.uniform(-3, 3) for _ in range(head_dim)]
    scale = 1.0 / math.sqrt(head_dim)
    got = paged_decode_attention(q, cache, table, num_tokens, scale)
    (want,) = attention([q], keys, values, scale=scale)
    assert max(abs(a - b) for a, b in zip(got, want)) <= 1e-12


def test_paged_decode_attention_survives_scores_of_a_thousand():
    cache = PagedKVCache(2, 1, 1)
    cache.write(0, [1000.0], [1.0]), cache.write(1, [-1000.0], [5.0])
    assert paged_decode_attention([1.0], cache, [1, 0], 2, 1.0) == [1.0]  # exp(2000) is never taken


def test_paged_decode_attention_raises_a_page_fault_past_the_table():
    cache = PagedKVCache(2, 2, 1)
    with pytest.raises(PageFault, match=r"num_tokens = 3.*1 blocks of 2 slots"):
        paged_decode_attention([1.0], cache, [0], 3, 1.0)
    with pytest.raises(PageFault, match="num_tokens = 0"):
        paged_decode_attention([1.0], cache, [0], 0, 1.0)


def test_the_partial_attention_merge_is_associative_with_an_identity():
    parts = [PartialAttention(1.0, 2.0, (1.0, 2.0)), PartialAttention(3.0, 1.5, (0.5, -1.0)), PartialAttention(-2.0, 4.0, (3.0, 3.0))]
    left = parts[0].merge(parts[1]).merge(parts[2])
    right = parts[0].merge(parts[1].merge(parts[2]))
    assert left.m == right.m and math.isclose(left.d, right.d, rel_tol=1e-15)
    assert all(math.isclose(a, b, rel_tol=1e-15) for a, b in zip(left.o, right.o))
    assert PartialAttention().merge(parts[0]) == parts[0] == parts[0].merge(PartialAttention())
    with pytest.raises(ValueError, match="lengths 2 and 1"):
        parts[0].merge(PartialAttention(0.0, 1.0, (1.0,)))


# --------------------------------------------------------------------------- named errors


def test_bad_requests_raise_named_errors():
    engine = LLMEngine(MODEL, num_blocks=3, block_size=2)
    with pytest.raises(InvalidRequestError, match="max_new_tokens = 0; expected an int >= 1"):
        engine.add_request([1, 2], 0)
    with pytest.raises(InvalidRequestError, match="the prompt is empty"):
        engine.add_request([], 3)
    with pytest.raises(InvalidRequestError, match=r"prompt_ids\[1\] = -1"):
        engine.add_request([1, -1], 3)
    with pytest.raises(InvalidRequestError, match="token id 7 is outside the vocabulary 0 .. 6"):
        engine.add_request([1, 7], 3)
    with pytest.raises(RequestTooLongError, match="need 4 blocks of 2 slots; the pool has only 3"):
        engine.add_request([1, 2, 3, 4, 5], 3)  # 7 slots
    with pytest.raises(RequestTooLongError, match="max_positions = 40"):
        LLMEngine(MODEL, num_blocks=40, block_size=2).add_request([1] * 30, 11)
    engine.add_request([1], 1, request_id="x")
    with pytest.raises(InvalidRequestError, match="request id 'x' is taken"):
        engine.add_request([1], 1, request_id="x")
    assert issubclass(RequestTooLongError, ValueError)


def test_text_prompts_go_through_the_tokenizer():
    engine = LLMEngine(MODEL, num_blocks=8, block_size=4)
    text = MODEL.tokenizer.decode([1, 2, 3])
    (out,) = engine.generate([text], max_new_tokens=3)
    assert out == MODEL.tokenizer.decode(dense_generate(MODEL, [1, 2, 3], 3))


# --------------------------------------------------------------------------- the paper-scale simulation


def test_the_simulation_pool_is_the_papers_fifteen_thousand_seven_hundred_slots():
    from labs import serving_sim as sim

    assert sim.KV_BYTES_PER_TOKEN == 819_200  # the paper's "800 KB" per token of OPT-13B
    assert sim.KV_POOL_BYTES // sim.KV_BYTES_PER_TOKEN == 15_728  # Table 1: 15.7K slots


def test_drawn_lengths_do_not_depend_on_the_rate_and_are_not_the_datasets_means():
    """The page prints one sample's means for every rate of a dataset, beside Fig. 11's."""
    from labs.serving_sim import DATASETS, MAX_SEQ_LEN, draw_requests

    slow, fast = draw_requests("sharegpt", 24, 0.5), draw_requests("sharegpt", 24, 4.0)
    assert [(p, o) for _, p, o in slow] == [(p, o) for _, p, o in fast]
    assert all(p <= MAX_SEQ_LEN // 2 and p + o <= MAX_SEQ_LEN for _, p, o in slow)
    mean_out = sum(o for _, _, o in slow) / len(slow)
    assert round(mean_out) != round(DATASETS["sharegpt"][1])  # drawn: 415 here, not Fig. 11's 338


def test_a_fully_cached_prompt_recomputes_its_last_block_not_only_its_last_token():
    """vLLM v1 looks up num_tokens - 1 tokens; hits are whole blocks, so (n - 1) // B blocks hit."""
    from labs.kv_cache_manager import KVCacheManager
    from labs.scheduler import Request

    kv = KVCacheManager(num_blocks=6, block_size=4)
    kv.allocate(Request("a", list(range(8)), 1))
    kv.allocate(Request("b", list(range(8)), 1))  # the same 8 tokens: 2 full blocks cached
    assert kv.blocks.num_hit_blocks["b"] == (8 - 1) // 4 == 1  # the second block is computed again


def test_paged_allocation_batches_more_and_waits_less_than_a_static_reservation():
    from labs.serving_sim import draw_requests, simulate

    arrivals = draw_requests("alpaca", 60, rate=20.0)
    assert all(1 <= p and 1 <= o and p + o <= 2048 for _, p, o in arrivals)
    assert [t for t, _, _ in arrivals] == sorted(t for t, _, _ in arrivals)
    static, paged = simulate("alpaca", 20.0, "static", 60), simulate("alpaca", 20.0, "paged", 60)
    assert static.mean_batch <= 7 < paged.mean_batch  # 983 blocks / 128 per 2,048-slot reservation = 7
    assert paged.normalized_latency < static.normalized_latency
    slow = simulate("alpaca", 0.5, "paged", 10)  # requests alone: latency per token near the weights' read time
    assert 26e9 / 1555e9 <= slow.normalized_latency < 2 * 26e9 / 1555e9
    with pytest.raises(ValueError, match="unknown allocator"):
        simulate("alpaca", 1.0, "buddy")
    with pytest.raises(ValueError, match="unknown dataset"):
        draw_requests("imagenet", 1, 1.0)


def test_the_block_pool_view_shows_holders_cached_and_free_blocks():
    engine = LLMEngine(MODEL, num_blocks=6, block_size=2, max_num_seqs=2)
    engine.add_request([1, 2, 3, 4, 5], 1, request_id="a")  # 5 tokens: blocks 0, 1 full (cached), 2 partial
    engine.step()  # prefill; a finishes after its one token
    views = engine.block_pool_view()
    assert [v.state for v in views] == ["cached", "cached", "free", "free", "free", "free"]
    engine.add_request([1, 2, 3, 4, 6], 2, request_id="b")
    engine.step()
    views = engine.block_pool_view()
    assert views[0].holders == ("b",) and views[0].cached and views[0].state == "in use"
    stats = engine.stats
    assert (stats.blocks_in_use, stats.blocks_cached, stats.blocks_free) == (3, 2, 3)
    assert engine.kv.prefix_hits == 4 and engine.kv.prefix_queries == 10


def test_a_stop_inside_a_step_lands_after_it_and_the_text_stays_dense():
    """Tried as a learner: Stop mid-demo, then engine.step() to the end, gave other text than a run
    never stopped (a step stopped between sampling and recording its tokens). A SIGINT raised inside
    a step is now raised after it: the engine goes on as if never stopped."""
    import signal

    from labs.engine import LLMEngine, interrupts_after
    from labs.sampling import SamplingParams
    from labs.tiny_lm import ModelConfig, TinyLM, dense_generate

    model = TinyLM.random(ModelConfig(vocab_size=17, d_model=8, n_layer=1, n_head=2, max_positions=40), seed=3)
    prompts = [[1, 2, 3, 4, 5], [1, 2, 3, 6]]
    params = [SamplingParams(temperature=0.8, seed=5), SamplingParams(temperature=0.8, seed=6)]
    engine = LLMEngine(model, num_blocks=12, block_size=4, max_num_seqs=2)
    for prompt, sp in zip(prompts, params, strict=True):
        engine.add_request(prompt, 12, sampling_params=sp)
    runner_execute = engine.runner.execute
    stops = []

    def execute_then_stop(*args):  # the Stop arrives while the step samples
        tokens = runner_execute(*args)
        if len(stops) < 3:
            stops.append(True)
            signal.raise_signal(signal.SIGINT)
        return tokens

    engine.runner.execute = execute_then_stop
    interrupted = 0
    while engine.has_unfinished_requests():
        try:
            engine.step()
        except KeyboardInterrupt:
            interrupted += 1
    assert interrupted == 3
    outputs = [r.output_ids for r in sorted(engine.scheduler.finished, key=lambda r: r.request_id)]
    assert outputs == [dense_generate(model, p, 12, sampling_params=sp) for p, sp in zip(prompts, params, strict=True)]
    with interrupts_after():  # and nothing held is raised when no Stop came
        pass


def test_the_pool_picture_is_never_scaled_down_so_its_labels_stay_readable_on_a_phone():
    """At 390 px the picture, scaled to its box, had labels of about 7 px (a learner's try): it is
    drawn at its own size (11 px text) in a box that scrolls sideways."""
    from labs.block_pool_svg import BlockPoolDiagram
    from labs.engine import BlockView

    html = BlockPoolDiagram([BlockView(i, ("a",) if i < 3 else (), False) for i in range(16)])._repr_html_()
    width = re.search(r'viewBox="0 0 (\d+) \d+"', html)[1]
    assert f"min-width:{width}px" in html and 'font-size="11"' in html
    assert html.startswith('<div class="block-pool-picture" style="overflow-x:auto">')
