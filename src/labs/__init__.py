"""Reference implementations for the AI-systems lab guide.

Pure Python (standard library only) so that the same code imports in CPython,
where pytest runs it, and in Pyodide 0.26.2 (CPython 3.12 on WebAssembly),
where the site installs it as a wheel.

Modules:

- :mod:`labs.autograd` -- micrograd-style scalar autograd (Karpathy, 2020).
- :mod:`labs.attention` -- softmax, online softmax (Milakov & Gimelshein,
  2018), tiled FlashAttention forward and backward passes (Dao et al., 2022;
  Dao, 2023); :mod:`labs.attention_grads`, the references its backward pass is
  checked against (central differences, and Lab 1's autograd).
- :mod:`labs.paged_attention` -- PagedAttention block tables and a paged
  KV cache (Kwon et al., SOSP 2023).
- Lab 4, a serving engine in the shape of vLLM v1 and nano-vLLM: :mod:`labs.scheduler`,
  :mod:`labs.kv_cache_manager`, :mod:`labs.model_runner`, :mod:`labs.engine`,
  :mod:`labs.sampling` (greedy or seeded sampling, as vLLM's ``SamplingParams``),
  :mod:`labs.serving_sim` (the paper's setting as a cost model), and :mod:`labs.block_pool_svg`
  (the block pool, drawn).
"""

__version__ = "0.1.0"
