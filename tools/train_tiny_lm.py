"""Train Lab 4's tiny language model (labs.tiny_lm) on this guide's own pages, and export its weights.

    python tools/train_tiny_lm.py corpus   # once: docs/*.md prose -> tools/corpus/guide.txt (frozen)
    python tools/train_tiny_lm.py train    # PyTorch on the CPU, 2 threads: -> src/labs/data/tiny_lm.{bin,json}

The corpus is written once and committed: the pages will change, the corpus the shipped weights were
trained on must not (``corpus`` refuses to overwrite it without --force). Its last 10 % of characters
are the held-out split, never trained on.

The torch model below is the same architecture as labs.tiny_lm, nanoGPT's GPT with ReLU and the
parameter names labs.tiny_lm.parameter_shapes lists. Training is deterministic on one machine: a fixed
seed, a fixed number of threads, batches drawn from a seeded generator. Needs torch (not a dependency
of the guide): ``pip install torch`` into a virtualenv of its own, with ``src`` on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import re
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tools" / "corpus" / "guide.txt"
DATA = ROOT / "src" / "labs" / "data"
HELD_OUT_FRACTION = 0.10
MIN_CHAR_COUNT = 20  # rarer non-ASCII characters (symbols used a few times in the pages) are dropped

sys.path.insert(0, str(ROOT / "src"))
from labs.tiny_lm import ModelConfig, parameter_shapes  # noqa: E402

# --- the corpus: the pages' prose --------------------------------------------------------------

# Colon fences (:::{dropdown}, :::{grid-item-card}, ...) hold prose: their contents stay. Backtick
# fences hold code, doctests, tables and raw HTML: they go, except check hints, which are prose.
PROSE_FENCES = {"{check-hints}", "{note}", "{tip}", "{admonition}", "{warning}", "{important}", "{seealso}"}


def _prose_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[0] == "---":  # front matter
        end = lines.index("---", 1)
        lines = lines[end + 1 :]
    out, fence = [], None  # fence: the backtick run that closes the block being skipped
    in_math = False
    for line in lines:
        stripped = line.strip()
        if fence is not None:
            if stripped == fence:
                fence = None
            continue
        m = re.match(r"^(`{3,})\s*(\S*)", stripped)
        if m:
            if m.group(2) in PROSE_FENCES:
                continue  # drop the fence line; the hints below are kept (the closing fence is dropped too)
            fence = m.group(1)
            continue
        if stripped.startswith("```"):
            continue
        if stripped == "$$" or (stripped.startswith("$$") and stripped.endswith("$$") and len(stripped) > 4):
            if stripped == "$$":
                in_math = not in_math
            continue
        if in_math or stripped.startswith(":::") or re.match(r"^:[\w-]+:", stripped) or stripped.startswith("|"):
            continue
        if stripped.startswith("<!--") or stripped.startswith("(") and stripped.endswith(")="):  # comments, labels
            continue
        out.append(stripped)
    return out


def _inline(text: str) -> str:
    text = re.sub(r"\{[\w:-]+\}`([^`]*)`", r"\1", text)  # {role}`text` -> text
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) -> text
    text = re.sub(r"\$[^$]+\$", "", text)  # inline math: dropped
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"(?<!\w)\*(\S[^*]*?)\*(?!\w)", r"\1", text)  # *emphasis*
    text = re.sub(r"^#+\s*", "", text)  # headings
    text = re.sub(r"^[-*]\s+", "", text)  # list bullets
    text = re.sub(r"^\d+\.\s+", "", text)  # numbered items
    text = re.sub(r"\s+([,.;:])", r"\1", text)  # a space left where math was
    return re.sub(r"\s+", " ", text).strip()


def build_corpus(docs: Path) -> str:
    """The prose of docs/*.md (sorted by name), one paragraph per line, rare non-ASCII characters dropped.

    Printable ASCII always stays (dropping a rare capital would cut words: "Jupyter", "Your").
    """
    paragraphs = []
    for page in sorted(docs.glob("*.md")):
        current: list[str] = []
        for line in _prose_lines(page.read_text("utf-8")) + [""]:
            if line:
                current.append(line)
            elif current:
                paragraph = _inline(" ".join(current))
                if len(paragraph) > 1:
                    paragraphs.append(paragraph)
                current = []
    text = "\n".join(paragraphs) + "\n"
    counts = collections.Counter(text)
    return "".join(c for c in text if " " <= c <= "~" or c == "\n" or counts[c] >= MIN_CHAR_COUNT)


def split(text: str) -> tuple[str, str]:
    """(train, held-out): the held-out split is the last 10 % of characters."""
    cut = len(text) - int(len(text) * HELD_OUT_FRACTION)
    return text[:cut], text[cut:]


# --- the model, in torch -----------------------------------------------------------------------


def make_gpt(config: ModelConfig, dropout: float = 0.0):
    """nanoGPT's GPT with a ReLU MLP and labs.tiny_lm's parameter names; returns an nn.Module.

    ``dropout`` (nanoGPT's, on the embeddings and each residual branch) acts in training only: the
    corpus is small (about 100k characters) and the model would learn it by heart.
    """
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(config.d_model, 3 * config.d_model)
            self.c_proj = nn.Linear(config.d_model, config.d_model)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T, config.n_head, config.head_dim).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # scale 1/sqrt(hs)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(config.d_model, config.d_mlp)
            self.c_proj = nn.Linear(config.d_mlp, config.d_model)

        def forward(self, x):
            return self.c_proj(torch.relu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(config.d_model), Attention()
            self.ln_2, self.mlp = nn.LayerNorm(config.d_model), MLP()

        def forward(self, x):
            x = x + F.dropout(self.attn(self.ln_1(x)), dropout, self.training)
            return x + F.dropout(self.mlp(self.ln_2(x)), dropout, self.training)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(config.vocab_size, config.d_model)
            self.wpe = nn.Embedding(config.max_positions, config.d_model)
            self.h = nn.ModuleList(Block() for _ in range(config.n_layer))
            self.ln_f = nn.LayerNorm(config.d_model)
            for name, p in self.named_parameters():  # nanoGPT's initialization
                if name.endswith("bias"):
                    nn.init.zeros_(p)
                elif p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * config.n_layer) if name.endswith("c_proj.weight") else 0.02
                    nn.init.normal_(p, 0.0, std)

        def forward(self, idx):  # idx (B, T) -> logits (B, T, vocab)
            T = idx.shape[1]
            if T > config.max_positions:
                raise ValueError(f"sequence of {T} tokens; max_positions is {config.max_positions}")
            x = F.dropout(self.wte(idx) + self.wpe(torch.arange(T, device=idx.device)), dropout, self.training)
            for block in self.h:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.T  # LM head tied to wte

    return GPT()


def _torch_name(name: str) -> str:
    return name + ".weight" if name in ("wte", "wpe") else name


def export_flat(gpt, config: ModelConfig) -> list[float]:
    """The weights in labs.tiny_lm.parameter_shapes order, as Python floats."""
    state = gpt.state_dict()
    flat: list[float] = []
    for name, shape in parameter_shapes(config):
        tensor = state[_torch_name(name)]
        if tuple(tensor.shape) != shape:
            raise ValueError(f"{name} has shape {tuple(tensor.shape)}; expected {shape}")
        flat += tensor.double().flatten().tolist()
    return flat


def load_into(gpt, config: ModelConfig, flat: list[float]) -> None:
    """Set ``gpt``'s weights from a flat list in parameter_shapes order (in the module's dtype)."""
    import torch

    state, at = {}, 0
    for name, shape in parameter_shapes(config):
        n = math.prod(shape)
        state[_torch_name(name)] = torch.tensor(flat[at : at + n], dtype=torch.float64).view(shape)
        at += n
    gpt.load_state_dict(state, strict=True)


def from_labs(model):
    """A float64 torch GPT holding a labs.tiny_lm.TinyLM's weights (for comparing the two)."""
    import torch

    gpt = make_gpt(model.config).to(torch.float64)
    flat: list[float] = []
    for name, _ in parameter_shapes(model.config):
        w = model.params[name]
        flat += [v for row in w for v in row] if isinstance(w[0], list) else list(w)
    load_into(gpt, model.config, flat)
    return gpt


def windows_loss(gpt, ids, length: int) -> float:
    """Mean next-character loss (nats) over ``ids`` cut into consecutive windows of ``length`` + 1 ids.

    Each window predicts its last ``length`` ids from the ones before them inside the window
    (windows overlap by one id, so every id after the first is predicted once).
    """
    import torch
    from torch.nn import functional as F

    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(ids) - 1, length):
            chunk = torch.tensor(ids[start : start + length + 1]).unsqueeze(0)
            logits = gpt(chunk[:, :-1])
            total += F.cross_entropy(logits[0], chunk[0, 1:], reduction="sum").item()
            count += chunk.shape[1] - 1
    return total / count


# --- training ------------------------------------------------------------------------------------


def train(args) -> None:
    import torch
    from torch.nn import functional as F

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    text = CORPUS.read_text("utf-8")
    train_text, held_text = split(text)
    vocab = "".join(sorted(set(text)))
    stoi = {c: i for i, c in enumerate(vocab)}
    train_ids = torch.tensor([stoi[c] for c in train_text])
    held_ids = [stoi[c] for c in held_text]
    config = ModelConfig(
        vocab_size=len(vocab), d_model=args.d_model, n_layer=args.n_layer, n_head=args.n_head, max_positions=args.context
    )
    gpt = make_gpt(config, args.dropout)
    n_params = sum(p.numel() for p in gpt.parameters())
    print(
        f"corpus {len(text)} chars (train {len(train_text)}, held-out {len(held_text)}), vocab {len(vocab)}, {n_params} parameters",
        flush=True,
    )
    opt = torch.optim.AdamW(gpt.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.1)
    batches = torch.Generator().manual_seed(args.seed)  # the fixed data order
    T = config.max_positions
    recent: list[float] = []
    started = time.perf_counter()
    for step in range(args.steps):
        # Linear warm-up, then cosine decay to a tenth (nanoGPT's schedule).
        warm = 100
        lr = (
            args.lr * (step + 1) / warm
            if step < warm
            else args.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * (step - warm) / (args.steps - warm))))
        )
        for group in opt.param_groups:
            group["lr"] = lr
        starts = torch.randint(0, len(train_ids) - T - 1, (args.batch,), generator=batches)
        x = torch.stack([train_ids[s : s + T] for s in starts])
        y = torch.stack([train_ids[s + 1 : s + T + 1] for s in starts])
        loss = F.cross_entropy(gpt(x).view(-1, config.vocab_size), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gpt.parameters(), 1.0)
        opt.step()
        recent = (recent + [loss.item()])[-100:]
        if step % 500 == 0 or step == args.steps - 1:
            gpt.eval()
            held = windows_loss(gpt, held_ids, T)
            gpt.train()
            print(
                f"step {step:5d}  train loss {sum(recent) / len(recent):.4f}  held-out {held:.4f}  lr {lr:.2e}  "
                f"{time.perf_counter() - started:6.1f} s",
                flush=True,
            )
    train_seconds = time.perf_counter() - started
    gpt.eval()
    held_float32 = windows_loss(gpt, held_ids, T)

    # What ships: float16 weights. Every loss recorded below is the shipped model's, in float64.
    flat = export_flat(gpt, config)
    raw = struct.pack(f"<{len(flat)}e", *flat)
    shipped = list(struct.unpack(f"<{len(flat)}e", raw))
    gpt64 = make_gpt(config).to(torch.float64)
    load_into(gpt64, config, shipped)
    gpt64.eval()
    held_loss = windows_loss(gpt64, held_ids, T)
    slice_ids = held_ids[: args.slice + 1]
    slice_loss = windows_loss(gpt64, slice_ids, T)
    meta = {
        "config": {k: getattr(config, k) for k in ("vocab_size", "d_model", "n_layer", "n_head", "max_positions")},
        "vocab": vocab,
        "n_params": n_params,
        "format": "little-endian float16, labs.tiny_lm.parameter_shapes order, matrices (n_out, n_in) row-major",
        "corpus": "tools/corpus/guide.txt",
        "corpus_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "corpus_chars": len(text),
        "held_out_start": len(train_text),
        "seed": args.seed,
        "steps": args.steps,
        "batch_size": args.batch,
        "learning_rate": args.lr,
        "dropout": args.dropout,
        "threads": args.threads,
        "torch": torch.__version__,
        "train_seconds": round(train_seconds, 1),
        "train_loss": round(sum(recent) / len(recent), 6),
        "train_loss_note": "mean of the last 100 steps' batch losses, float32 weights, nats per character",
        "held_out_loss": held_loss,
        "held_out_loss_float32_weights": held_float32,
        "held_out_loss_note": "nats per character over the whole held-out split in windows of max_positions, "
        "the shipped float16 weights evaluated in float64",
        "held_out_slice": {
            "start": 0,
            "chars": len(slice_ids),
            "loss": slice_loss,
            "note": "the first `chars` characters of the held-out split, one window; "
            "labs.tiny_lm.cross_entropy must give `loss` (float64)",
        },
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tiny_lm.bin").write_bytes(raw)
    (out / "tiny_lm.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(json.dumps({k: v for k, v in meta.items() if k != "vocab"}, indent=1), flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus", help="write tools/corpus/guide.txt from docs/*.md")
    c.add_argument("--force", action="store_true", help="overwrite the frozen corpus")
    t = sub.add_parser("train", help="train and export src/labs/data/tiny_lm.{bin,json}")
    t.add_argument("--steps", type=int, default=5000)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--seed", type=int, default=1337)
    t.add_argument("--dropout", type=float, default=0.2)
    t.add_argument("--threads", type=int, default=1)  # on a shared 2-core machine, 2 threads ran 3-10x slower
    t.add_argument("--d-model", type=int, default=64)
    t.add_argument("--n-layer", type=int, default=2)
    t.add_argument("--n-head", type=int, default=4)
    t.add_argument("--context", type=int, default=128)
    t.add_argument("--slice", type=int, default=128, help="characters of the held-out slice the tests recompute")
    t.add_argument("--out", default=str(DATA), help="folder for tiny_lm.bin and tiny_lm.json (default: the package data)")
    args = parser.parse_args(argv)
    if args.command == "corpus":
        if CORPUS.exists() and not args.force:
            parser.error(
                f"{CORPUS.relative_to(ROOT)} exists and is frozen (the shipped weights were trained on it); "
                "--force to rebuild it, then retrain"
            )
        CORPUS.parent.mkdir(parents=True, exist_ok=True)
        text = build_corpus(ROOT / "docs")
        CORPUS.write_text(text, "utf-8")
        print(
            f"{CORPUS.relative_to(ROOT)}: {len(text)} characters, {len(set(text))} distinct, "
            f"sha256 {hashlib.sha256(text.encode('utf-8')).hexdigest()}"
        )
    else:
        train(args)


if __name__ == "__main__":
    main()
