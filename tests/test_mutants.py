"""The mistakes learners really make, applied to each lab's reference solution: every one is caught.

Each mutant is the page's reference solution with one classic bug put in (a
textual replacement, checked to apply exactly once). It is run as the page
runs it, then the page's checks run against it with the page's own engine
(labs.checks): at least one named check must fail, and the test names which.
The check must be one of the exercise that holds the bug (the exercise whose
reference solution the edit changes): a failure only under a later exercise
would send the learner to the wrong place. Sources for each mistake are given
beside it.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from labs.checks import doctest_blocks, parse_block, run_blocks
from tests.pages import LAB_NAMES, all_exercises, checks_by_exercise, read_page, reference_solutions

RECURSIVE_TOPO = """\
        topo, visited = [], set()

        def build(node):  # the lecture's recursive version
            if node not in visited:
                visited.add(node)
                for child in node._prev:
                    build(child)
                topo.append(node)

        build(self)
        self.grad = 1.0"""
# Subtraction and division given a _backward of their own, as a learner may write them instead of
# the compositions; {grad} is filled in with the mistake.
SUB_WITH_BACKWARD = """\
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad {assign} 1.0{times}
            other.grad {assign} -1.0{times}

        out._backward = _backward
        return out
"""
DIV_WITH_BACKWARD = """\
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data / other.data, (self, other), "/")

        def _backward():
            self.grad {assign} 1.0 / other.data{times}
            other.grad {assign} -self.data / other.data**2{times}

        out._backward = _backward
        return out
"""
NO_OUT_GRAD = {"assign": "+=", "times": ""}  # the local derivative alone
OVERWRITES = {"assign": "=", "times": " * out.grad"}  # = instead of +=
CHAIN_RULE = "micrograd engine.py: every _backward multiplies by out.grad (the chain rule)"
ACCUMULATE = "micrograd issue #2: a node used twice must accumulate (+=)"

ITERATIVE_TOPO = """\
        topo, visited, stack = [], set(), [(self, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                topo.append(node)  # after all of its children
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child in node._prev)
        self.grad = 1.0"""

FA2_BACKWARD = "Dao 2023, FlashAttention-2, Algorithm 2"
SCALE_CHAIN_RULE = "S = scale * Q K^T: the chain rule puts scale into dQ and dK (flash-attn's softmax_scale)"

# (page, mistake, [(reference text, mutated text)], checks that must fail (at least these), source)
MUTANTS = [
    (
        "micrograd.md",
        "a node used twice overwrites its gradient (= instead of +=)",
        [
            (
                "            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad",
                "            self.grad = 1.0 * out.grad\n            other.grad = 1.0 * out.grad",
            )
        ],
        ["Reused node"],
        "micrograd issue #2; the lecture's a + a",
    ),
    (
        "micrograd.md",
        "+: the local derivative not multiplied by out.grad",
        [
            (
                "            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad",
                "            self.grad += 1.0\n            other.grad += 1.0",
            )
        ],
        ["Bias gradient"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "*: the local derivative not multiplied by out.grad",
        [
            (
                "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
                "            self.grad += other.data\n            other.grad += self.data",
            )
        ],
        ["Input x1 gradient", "Weight w1 gradient"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "*: a node used twice overwrites its gradient (= instead of +=)",
        [
            (
                "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
                "            self.grad = other.data * out.grad\n            other.grad = self.data * out.grad",
            )
        ],
        ["Product reused"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "tanh: the local derivative not multiplied by out.grad",
        [("self.grad += (1.0 - t**2) * out.grad", "self.grad += 1.0 - t**2")],
        ["tanh inside a graph"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "tanh: a node used twice overwrites its gradient (= instead of +=)",
        [("self.grad += (1.0 - t**2) * out.grad", "self.grad = (1.0 - t**2) * out.grad")],
        ["tanh reused"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "each factor's gradient from its own value, not the other factor's",
        [
            (
                "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
                "            self.grad += self.data * out.grad\n            other.grad += other.data * out.grad",
            )
        ],
        ["Input x1 gradient", "Weight w1 gradient"],
        "nn-zero-to-hero lecture 1, the product rule",
    ),
    (
        "micrograd.md",
        "tanh's derivative from the input, not the output",
        [("(1.0 - t**2) * out.grad", "(1.0 - self.data**2) * out.grad")],
        ["tanh backward"],
        "the lecture's 1 - tanh(x)**2",
    ),
    (
        "micrograd.md",
        "the walk in topological order, not reversed",
        [("for node in reversed(topo):", "for node in topo:")],
        ["Bias gradient", "Deep chain"],
        "micrograd engine.py: reversed(topo)",
    ),
    (
        "micrograd.md",
        "no seed gradient (do/do = 1 never set)",
        [("        self.grad = 1.0\n        for node", "        for node")],
        ["Output gradient"],
        "micrograd engine.py: self.grad = 1",
    ),
    (
        "micrograd.md",
        "a topological sort without a visited set: a node reached twice runs its _backward twice",
        [
            (
                "            elif node not in visited:\n                visited.add(node)\n                stack.append((node, True))",
                "            else:\n                stack.append((node, True))",
            )
        ],
        ["Inner node reused"],
        "micrograd engine.py build_topo: visited; found by the learner review (passed 33 / 33)",
    ),
    (
        "micrograd.md",
        "a pre-order walk (each node before its children, not after all of its parents)",
        [
            ("                topo.append(node)  # after all of its children\n", "                pass\n"),
            (
                "                visited.add(node)\n                stack.append((node, True))",
                "                visited.add(node)\n                topo.append(node)\n                stack.append((node, True))",
            ),
            ("for node in reversed(topo):", "for node in topo:"),
        ],
        ["Inner node reused"],
        "topological order: a node after all of its parents; found by the learner review (passed 33 / 33)",
    ),
    (
        "micrograd.md",
        "a topological sort that recurses",
        [(ITERATIVE_TOPO, RECURSIVE_TOPO)],
        ["Deep chain"],
        "micrograd issue #90 (recursion depth); pyodide issues #2840, #5959",
    ),
    # Exercise 2 (micrograd.md): the operations a network needs.
    (
        "micrograd.md",
        "power rule: the gradient x**k instead of k * x**(k - 1)",
        [("self.grad += k * self.data ** (k - 1) * out.grad", "self.grad += self.data**k * out.grad")],
        ["Power rule", "Division", "Reversed division"],
        "the power rule; micrograd engine.py __pow__",
    ),
    (
        "micrograd.md",
        "**: the local derivative not multiplied by out.grad",
        [("self.grad += k * self.data ** (k - 1) * out.grad", "self.grad += k * self.data ** (k - 1)")],
        ["Power inside a graph"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "**: a node used twice overwrites its gradient (= instead of +=)",
        [("self.grad += k * self.data ** (k - 1) * out.grad", "self.grad = k * self.data ** (k - 1) * out.grad")],
        ["Power reused"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "relu: the local derivative not multiplied by out.grad",
        [("self.grad += (self.data > 0) * out.grad", "self.grad += float(self.data > 0)")],
        ["relu inside a graph"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "relu: a node used twice overwrites its gradient (= instead of +=)",
        [("self.grad += (self.data > 0) * out.grad", "self.grad = (self.data > 0) * out.grad")],
        ["relu reused"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "exp: the local derivative not multiplied by out.grad",
        [("self.grad += e * out.grad", "self.grad += e")],
        ["exp inside a graph"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "exp: a node used twice overwrites its gradient (= instead of +=)",
        [("self.grad += e * out.grad", "self.grad = e * out.grad")],
        ["exp reused"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "- with a _backward of its own: the local derivative not multiplied by out.grad",
        [("        return self + (-other)\n", SUB_WITH_BACKWARD.format(**NO_OUT_GRAD))],
        ["Subtraction inside a graph"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "- with a _backward of its own: = instead of +=",
        [("        return self + (-other)\n", SUB_WITH_BACKWARD.format(**OVERWRITES))],
        ["Subtraction inside a graph"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "/ with a _backward of its own: the local derivative not multiplied by out.grad",
        [("        return self * other**-1\n", DIV_WITH_BACKWARD.format(**NO_OUT_GRAD))],
        ["Division inside a graph"],
        CHAIN_RULE,
    ),
    (
        "micrograd.md",
        "/ with a _backward of its own: = instead of +=",
        [("        return self * other**-1\n", DIV_WITH_BACKWARD.format(**OVERWRITES))],
        ["Division inside a graph"],
        ACCUMULATE,
    ),
    (
        "micrograd.md",
        "relu's gradient from its output's value (out.data), not whether the input was > 0",
        [("self.grad += (self.data > 0) * out.grad", "self.grad += out.data * out.grad")],
        ["relu gradient"],
        "micrograd engine.py: (out.data > 0) * out.grad, misread as out.data",
    ),
    (
        "micrograd.md",
        "relu passes the gradient everywhere, also where it is off",
        [("self.grad += (self.data > 0) * out.grad", "self.grad += out.grad")],
        ["relu off"],
        "the ReLU's derivative is 0 for x < 0",
    ),
    (
        "micrograd.md",
        "exp's gradient from the input, not e**x",
        [("self.grad += e * out.grad", "self.grad += self.data * out.grad")],
        ["exp gradient"],
        "d e**x / dx = e**x",
    ),
    (
        "micrograd.md",
        "__rsub__ computes self - other",
        [("return other + (-self)", "return self - other")],
        ["Reversed subtraction"],
        "nn-zero-to-hero issue #4 (__rsub__ sign)",
    ),
    (
        "micrograd.md",
        "__rsub__ without a Value for the number: other - self calls __rsub__ again",
        [("return other + (-self)", "return other - self")],
        ["Reversed subtraction", "Trained network"],
        "RecursionError: int - Value hands back to Value.__rsub__",
    ),
    (
        "micrograd.md",
        "__rtruediv__ inverted: self / other",
        [("return other * self**-1", "return self * other**-1")],
        ["Reversed division"],
        "Python data model: __rtruediv__(self, other) is other / self",
    ),
    (
        "micrograd.md",
        "__sub__ with the operands swapped",
        [("return self + (-other)", "return other + (-self)")],
        ["Subtraction"],
        "a - b = a + (-b)",
    ),
    (
        "micrograd.md",
        "a composition that builds a new leaf: no gradient flows back through /",
        [("return self * other**-1", "return Value(self.data / (other.data if isinstance(other, Value) else other))")],
        ["Division", "Trained network"],
        "the starter's own placeholder, left in",
    ),
    (
        "micrograd.md",
        "__neg__ without a Value: the number's negation, a leaf",
        [("return self * -1", "return Value(-self.data)")],
        ["Negation", "Subtraction", "Reversed subtraction"],
        "micrograd engine.py: __neg__ is self * -1",
    ),
    (
        "online_softmax.md",
        "the rescaling factor inverted: exp(m_new - m)",
        [("math.exp(m - m_new)", "math.exp(m_new - m)")],
        ["Rescaling factor"],
        "Milakov & Gimelshein 2018, d_j = d_{j-1} e^{m_{j-1} - m_j} + ...",
    ),
    (
        "online_softmax.md",
        "alpha NaN when both maxima are -inf (no guard)",
        [("alpha = 1.0 if m_new == -math.inf else math.exp(m - m_new)", "alpha = math.exp(m - m_new)")],
        ["Fully masked row"],
        "flash-attention and flashinfer issues on NaN for fully masked rows",
    ),
    (
        "online_softmax.md",
        "the running max is not a max (the latest logit)",
        [("m_new = max(m, x)", "m_new = x")],
        ["Running max"],
        "Milakov & Gimelshein 2018, m_j = max(m_{j-1}, x_j)",
    ),
    (
        "online_softmax.md",
        "the denominator not rescaled when the max grows",
        [("d = d * alpha + term", "d = d + term")],
        ["Mixed row"],
        "FlashAttention-2 Algorithm 1, the rescaled running sum",
    ),
    (
        "online_softmax.md",
        "flash_attention: the rescaling factor inverted, exp(m_new - m[t]): NaN everywhere",
        [("alpha = math.exp(m[t] - m_new)", "alpha = math.exp(m_new - m[t])")],
        ["One tile", "Ragged tiles"],
        "FlashAttention-2 Algorithm 1: e^{m_old - m_new} <= 1",
    ),
    (
        "online_softmax.md",
        "flash_attention: alpha applied to neither the running sum nor the accumulator",
        [("l[t] = l[t] * alpha + sum(p)", "l[t] = l[t] + sum(p)"), ("[a * alpha + sum(", "[a + sum(")],
        ["Ragged tiles", "Logsumexp", "Extreme logits"],
        "FlashAttention-2 Algorithm 1, line 9-10: diag(e^{m_old - m_new})",
    ),
    (
        "online_softmax.md",
        "flash_attention: alpha applied to the running sum but not to the accumulator",
        [("[a * alpha + sum(", "[a + sum(")],
        ["Ragged tiles", "Extreme logits"],
        "FlashAttention-2 Algorithm 1, line 10: O rescaled by diag(e^{m_old - m_new})",
    ),
    (
        "online_softmax.md",
        "flash_attention: the division by the running sum forgotten",
        [("out.append([a / l[t] for a in acc[t]])", "out.append(acc[t])")],
        ["One tile", "Ragged tiles"],
        "FlashAttention-2 Algorithm 1, line 12: O_i = diag(l)^-1 O_i",
    ),
    (
        "online_softmax.md",
        "flash_attention: the accumulator divided by the running sum after every tile",
        [
            ("out.append([a / l[t] for a in acc[t]])", "out.append(acc[t])"),
            ("                m[t] = m_new\n", "                m[t] = m_new\n                acc[t] = [a / l[t] for a in acc[t]]\n"),
        ],
        ["Ragged tiles", "Extreme logits"],
        "FlashAttention-2 section 3.1.1: the un-scaled output, divided once at the end",
    ),
    (
        "online_softmax.md",
        "flash_attention: L = log(l), without the running max",
        [("lse.append(m[t] + math.log(l[t]))", "lse.append(math.log(l[t]))")],
        ["Logsumexp", "Extreme logits"],
        "FlashAttention-2 Algorithm 1, line 13: L_i = m_i + log(l_i)",
    ),
    (
        "online_softmax.md",
        "flash_attention: causal mask aligned top-left (j <= i) instead of bottom-right",
        [
            (
                "offset = n_k - n_q  # bottom-right causal mask: query i sees key j iff j <= i + offset\n    out, lse",
                "offset = 0\n    out, lse",
            )
        ],
        ["Causal, more keys", "Causal, more queries", "Query that sees no key"],
        "flash-attn >= 2.1 README: causal mask aligned to the bottom right",
    ),
    (
        "online_softmax.md",
        "flash_attention: no guard for a row that has seen no key (exp(-inf - -inf) is NaN)",
        [
            (
                "                if m_new == -math.inf:\n"
                "                    continue  # no key seen yet: nothing to add, and exp(-inf - -inf) is NaN\n",
                "",
            )
        ],
        ["Query that sees no key"],
        "flash-attention and flashinfer issues on NaN for fully masked rows",
    ),
    (
        "online_softmax.md",
        "flash_attention: the scale it is given ignored (always 1 / sqrt(d))",
        [("    if scale is None:\n        scale = 1.0 / math.sqrt(len(k[0]))", "    scale = 1.0 / math.sqrt(len(k[0]))")],
        ["Softmax scale"],
        "flash-attn flash_attn_func: softmax_scale, the scaling of QK^T, default 1 / sqrt(headdim)",
    ),
    # Lab 2, exercise 3: FlashAttention-2's backward pass, P recomputed from L.
    (
        "online_softmax.md",
        "flash_attention_backward: dS = P ∘ dP, without - D_i (the softmax's backward half done)",
        [("p[u][w] * (dp[u][w] - big_d[i])", "p[u][w] * dp[u][w]")],
        ["Gradients, one tile"],
        FA2_BACKWARD + ": dS = P ∘ (dP - D_i)",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: the scale forgotten in dQ",
        [("dq[i][c] += scale * sum(", "dq[i][c] += sum(")],
        ["Gradients, softmax scale"],
        SCALE_CHAIN_RULE,
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: the scale forgotten in dK",
        [("dk[j][c] += scale * sum(", "dk[j][c] += sum(")],
        ["Gradients, softmax scale"],
        SCALE_CHAIN_RULE,
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: the scale applied twice in dQ and dK",
        [
            ("dq[i][c] += scale * sum(", "dq[i][c] += scale * scale * sum("),
            ("dk[j][c] += scale * sum(", "dk[j][c] += scale * scale * sum("),
        ],
        ["Gradients, softmax scale"],
        SCALE_CHAIN_RULE,
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: dV set (=) instead of accumulated across query blocks",
        [("dv[j][c] += sum(", "dv[j][c] = sum(")],
        ["Gradients, ragged tiles"],
        FA2_BACKWARD + ": dV_j <- dV_j + P^T dO_i, over every query block",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: dK set (=) instead of accumulated across query blocks",
        [("dk[j][c] += scale * sum(", "dk[j][c] = scale * sum(")],
        ["Gradients, ragged tiles"],
        FA2_BACKWARD + ": dK_j <- dK_j + dS^T Q_i, over every query block",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: dQ set (=) instead of accumulated across key blocks",
        [("dq[i][c] += scale * sum(", "dq[i][c] = scale * sum(")],
        ["Gradients, ragged tiles"],
        FA2_BACKWARD + ": dQ_i <- dQ_i + dS K_j (an atomic add), over every key block",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: the causal mask dropped from the recomputed scores (masked P not 0)",
        [
            (
                "attention_score(scale, q[i], k[j], i, j) if not causal or j <= i + offset else -math.inf\n",
                "attention_score(scale, q[i], k[j], i, j)\n",
            )
        ],
        ["Gradients, causal"],
        FA2_BACKWARD + "; flash-attn >= 2.1: causal mask aligned to the bottom right",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: causal mask aligned top-left (j <= i) instead of bottom-right",
        [
            (
                "offset = n_k - n_q  # bottom-right causal mask: query i sees key j iff j <= i + offset\n    big_d",
                "offset = 0\n    big_d",
            )
        ],
        ["Gradients, causal"],
        "flash-attn >= 2.1 README: causal mask aligned to the bottom right",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: P recomputed as exp(S), without subtracting L",
        [("math.exp(x - lse[i])", "math.exp(x)")],
        ["Gradients, one tile"],
        FA2_BACKWARD + ": P_i = exp(S_i - L_i)",
    ),
    (
        "online_softmax.md",
        "flash_attention_backward: dP transposed (V dO^T: a row per key, not per query)",
        [
            (
                "dp = [[sum(a * b for a, b in zip(d_o[i], v[j])) for j in cols] for i in rows]",
                "dp = [[sum(a * b for a, b in zip(d_o[i], v[j])) for i in rows] for j in cols]",
            )
        ],
        ["Gradients, one tile"],
        FA2_BACKWARD + ": dP_i = dO_i V_j^T",
    ),
    (
        "paged_attention.md",
        "t < 0 does not fault (block_table[-1] is read)",
        [("if not 0 <= t < num_tokens:", "if t >= num_tokens:")],
        ["Page fault below zero"],
        "vLLM issues on block tables read past their ends",
    ),
    (
        "paged_attention.md",
        "off by one at t = num_tokens",
        [("if not 0 <= t < num_tokens:", "if not 0 <= t <= num_tokens:")],
        ["Page fault in the last block"],
        "vLLM: slot = block_table[t // B] * B + t % B for t < num_tokens",
    ),
    (
        "paged_attention.md",
        "the physical block id not scaled by the block size",
        [("return block_table[logical] * block_size + offset", "return block_table[logical] + offset")],
        ["Second block", "Third block"],
        "Kwon et al. 2023, section 4.2 (block table translation)",
    ),
    (
        "paged_attention.md",
        "the block size fixed at vLLM's default, 16, not the one given",
        [
            (
                "logical, offset = divmod(t, block_size)\n    return block_table[logical] * block_size + offset",
                "logical, offset = divmod(t, 16)\n    return block_table[logical] * 16 + offset",
            )
        ],
        ["Another block size"],
        "vLLM: block_size is an engine setting (default 16), not a constant",
    ),
    (
        "paged_attention.md",
        "the wrong exception type (IndexError, not PageFault)",
        [("raise PageFault(", "raise IndexError(")],
        ["Page fault past the end", "Page fault below zero"],
        "vLLM: a named error, not a bare IndexError",
    ),
    # Exercise 2: copy-on-write and the prefix cache.
    (
        "paged_attention.md",
        "copy-on-write without dropping the old block's reference",
        [("            self.allocator.free(src)  # the other sequences keep theirs\n", "")],
        ["Old block's reference dropped", "No copy for the last owner"],
        "Kwon et al. 2023, section 4.4: the original block's reference count is decreased by one",
    ),
    (
        "paged_attention.md",
        "no copy when the last block is shared (writing in place)",
        [("elif self.allocator.ref_count(table[-1]) > 1:", "elif False:")],
        ["Copy on write", "New block for the writer", "Each sequence reads its own tokens", "Slots after copy-on-write"],
        "Kwon et al. 2023, section 4.4 (copy-on-write); vLLM's block manager append_slots",
    ),
    (
        "paged_attention.md",
        "a copy even when the block is not shared (reference count 1)",
        [("elif self.allocator.ref_count(table[-1]) > 1:", "elif self.allocator.ref_count(table[-1]) >= 1:")],
        ["No copy for the last owner", "No copy when not shared"],
        "vLLM: copy-on-write only when the block's reference count is above 1",
    ),
    (
        "paged_attention.md",
        "a new block for the writer, but its slots not copied",
        [("            self.copy_block(src, dst)\n", "")],
        ["Each sequence reads its own tokens"],
        "vLLM returns (src, dst) so the cache engine copies the block",
    ),
    (
        "paged_attention.md",
        "the block hash not chained over the prefix",
        [("return hash((parent_hash, tuple(tokens)))", "return hash(tuple(tokens))")],
        ["Hash chained over the prefix", "Same tokens at another position miss"],
        "vLLM design docs, Automatic Prefix Caching: a block is identified by its tokens and its prefix",
    ),
    (
        "paged_attention.md",
        "every block keyed from no parent (same tokens at another position hit)",
        [("parent = block_hash(parent, chunk)", "parent = block_hash(None, chunk)")],
        ["Same tokens at another position miss"],
        "vLLM: hash(parent_block_hash, block tokens)",
    ),
    (
        "paged_attention.md",
        "a partly filled block enters the prefix cache",
        [("if len(chunk) < B:", "if False:")],
        ["Partly filled block not cached"],
        "vLLM design docs, Automatic Prefix Caching: only full blocks are cached",
    ),
    (
        "paged_attention.md",
        "a cache hit that does not add a reference",
        [("                        self.allocator.share(block)\n", "")],
        ["Hit adds a reference"],
        "Kwon et al. 2023, section 4.4: reference counts on shared blocks",
    ),
    # vLLM v1's prefix cache: what the given free_sequence must keep doing.
    (
        "paged_attention.md",
        "freed blocks dropped from the prefix cache (the cache ends with the request)",
        [
            (
                "        return [b for b in reversed(table) if self.allocator.free(b) == 0]",
                "        freed = [b for b in reversed(table) if self.allocator.free(b) == 0]\n"
                "        self.cached = {k: b for k, b in self.cached.items() if b not in freed}\n"
                "        return freed",
            )
        ],
        ["Prefix outlives its request", "Least recently used evicted first", "Recently used prefix survives"],
        "vLLM design docs, Automatic Prefix Caching: freed blocks stay cached until evicted",
    ),
    (
        "paged_attention.md",
        "a finished sequence's blocks freed head first",
        [("for b in reversed(table) if", "for b in table if")],
        ["Least recently used evicted first"],
        "vllm/v1/core/single_type_kv_cache_manager.py free: reversed(req_blocks), tail blocks freed first",
    ),
    # Lab 4, exercise 1: the scheduler's step.
    (
        "serving.md",
        "preempting the oldest running request instead of the newest",
        [("victim = queue.pop() if queue else request", "victim = queue.popleft() if queue else request")],
        ["Newest preempted first"],
        "vLLM v1 scheduler.py: preempted_req = self.running.pop(); nano-vLLM: running.pop()",
    ),
    (
        "serving.md",
        "admitting past the block budget (no can_allocate)",
        [
            (
                "        if not kv.can_allocate(request):\n            break  # first come, first served: nobody overtakes the front\n",
                "",
            )
        ],
        ["Block budget"],
        "nano-vLLM Scheduler.schedule: admission stops when not block_manager.can_allocate(seq)",
    ),
    (
        "serving.md",
        "admitting past max_num_seqs",
        [("while scheduler.waiting and len(scheduler.running) < scheduler.max_num_seqs:", "while scheduler.waiting:")],
        ["Batch size limit"],
        "vLLM and nano-vLLM: max_num_seqs bounds the running batch",
    ),
    (
        "serving.md",
        "a preempted request loses the tokens it generated",
        [
            (
                "            victim.num_preemptions += 1\n",
                "            victim.num_preemptions += 1\n            victim.output_ids.clear()\n",
            )
        ],
        ["Preempted request keeps its tokens"],
        "Kwon et al. 2023, section 4.5: recompute the generated tokens with the prompt",
    ),
    (
        "serving.md",
        "a preempted request queued at the back of waiting",
        [("scheduler.waiting.appendleft(victim)", "scheduler.waiting.append(victim)")],
        ["Preempted request waits at the front"],
        "vLLM v1 scheduler.py: self.waiting.prepend_request(preempted_req)",
    ),
    # Lab 4, exercise 2: attention split by block and merged.
    (
        "serving.md",
        "O not rescaled by the merge's factor",
        [("o = [a * alpha + b * beta for a, b in zip(o, o_j)]", "o = [a + b * beta for a, b in zip(o, o_j)]")],
        ["Merge across blocks"],
        "vLLM paged_attention_v2_reduce_kernel: each partition's output rescaled by exp(m_i - m)",
    ),
    (
        "serving.md",
        "l not rescaled by the merge's factor",
        [("l = l * alpha + l_j * beta", "l = l + l_j * beta")],
        ["Merge across blocks"],
        "Milakov & Gimelshein 2018: d_j = d_{j-1} e^{m_{j-1} - m_j} + ...",
    ),
    (
        "serving.md",
        "the running max never updated",
        [("        m = m_new\n", "")],
        ["Merge across blocks"],
        "flash-attention and flashinfer issues: a stale running max",
    ),
    (
        "serving.md",
        "the last, partly filled block read past num_tokens",
        [("n = min(B, num_tokens - j * B)", "n = B")],
        ["Partly filled last block"],
        "vLLM issues on block tables read past their end",
    ),
    (
        "serving.md",
        "the scale forgotten",
        [
            (
                "scores = [scale * sum(a * b for a, b in zip(q, k)) for k in keys]",
                "scores = [sum(a * b for a, b in zip(q, k)) for k in keys]",
            )
        ],
        ["Scale"],
        "Vaswani et al. 2017: softmax(QK^T / sqrt(d_k)); vLLM passes scale to paged_attention",
    ),
]


def solution(page: str) -> str:
    # Every exercise of the page, in page order (micrograd's exercise 2 extends exercise 1's Value).
    return all_exercises(read_page(page))


def exercise_of(page: str, edits: list[tuple[str, str]]) -> int:
    """The exercise (from 0) whose reference solution holds every edit's text."""
    solutions = reference_solutions(read_page(page))
    (exercise,) = {n for before, _ in edits for n, code in enumerate(solutions) if before in code}
    return exercise


def failing_checks(page: str, code: str, up_to: set[str] | None = None) -> list[str]:
    """Run ``code`` as the page's cell, then the page's checks; the names of those that do not pass.

    ``up_to``: check names; the blocks after the last block that holds one of them are not run (a
    later block cannot change an earlier one's result, and micrograd's last trains a network)."""
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(compile(code, "<exercise>", "exec"), namespace)
        except Exception:  # noqa: BLE001 - as in the page: the cell's demo lines raised, what it defined stays
            pass
    blocks = doctest_blocks(read_page(page))
    if up_to is not None:
        last = max(i for i, block in enumerate(blocks) for c in parse_block(block, i) if c.name in up_to)
        blocks = blocks[: last + 1]
    results = run_blocks(blocks, namespace)
    return [r.check.name for r in results if not r.check.setup and r.status != "passed"]


@pytest.mark.parametrize("page", [f"{name}.md" for name in LAB_NAMES])
def test_the_reference_solutions_pass_every_check(page):
    assert failing_checks(page, solution(page)) == []


@pytest.mark.parametrize("page, mistake, edits, caught_by, source", MUTANTS, ids=[m[1] for m in MUTANTS])
def test_every_classic_mistake_fails_a_named_check(page, mistake, edits, caught_by, source):
    code = solution(page)
    for before, after in edits:
        assert code.count(before) == 1, f"the reference solution changed: {before!r} is not in it once"
        code = code.replace(before, after)
    failed = failing_checks(page, code, up_to=set(caught_by))
    assert failed, f"no check catches: {mistake} ({source})"
    assert set(caught_by) <= set(failed), f"{mistake}: expected {caught_by} among the failures, got {failed}"
    own = checks_by_exercise(read_page(page))[exercise_of(page, edits)]
    assert set(failed) & set(own), (
        f"{mistake}: only checks of another exercise fail ({failed}); exercise {exercise_of(page, edits) + 1}'s are {own}"
    )


def test_a_failed_error_bound_says_by_how_much_not_true_or_false():
    """Lab 4's attention checks compared an error with 1e-12 and, failing, said "expected True, got
    False" (found by a learner's try): they now show how far the output is off."""
    (mistake,) = [m for m in MUTANTS if m[0] == "serving.md" and m[1] == "the scale forgotten"]
    code = solution("serving.md")
    for before, after in mistake[2]:
        code = code.replace(before, after)
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<exercise>", "exec"), namespace)
    results = {r.check.name: r for r in run_blocks(doctest_blocks(read_page("serving.md")), namespace)}
    assert results["Scale"].status == "failed"
    assert re.fullmatch(r"'off by \d\.?\d*(e-?\d+)?'", results["Scale"].got.strip()), results["Scale"].got
