"""One whole training step, minitx vs the same model in PyTorch eager, in one process.

    PYTHONPATH=$PWD python3 benchmarks/bench_train_step.py [--presets seed004-small base gpu-best]

A step is: forward, cross-entropy (label smoothing 0.1, padding ignored), backward,
gradient clipping to norm 1, Adam update. Models: the seed004-small and base presets and the
gpu-best recipe's model. All three drop out attention weights (0.1, 0.1, 0.3): the fused
attention kernels draw that mask themselves (before 2026-11-23 they could not, and attention
took its unfused path in all three). Three runs
per model on the same batch: minitx with the fused kernels, minitx with MINITX_FUSED=0 (its
CuPy reference path), and the same model written below in PyTorch, module for module with
minitx's parameter names (tests/test_torch_parity.py checks that the two compute the same
numbers), run eager and, on cuda, through ``torch.compile`` in its default mode and in
``mode="reduce-overhead"`` (CUDA graphs: PyTorch's own answer to launch-bound steps), compiling
the forward and the loss together (and so their backward); the clipping and the fused Adam stay
eager, where minitx's graph run holds the whole step. Their compile time is spent in the warm-up
steps and left out of the figure; ``--no-compile`` skips both. On cuda a fourth minitx run, "minitx graphs", replays the step from a CUDA graph
(minitx.train.graphs, sync-free, products through minitx.blas; needs nvmath-python;
``--no-graphs`` skips it). ``--precision tf32`` lets float32 matrix products use TF32 tensor cores on both sides
(minitx.backend.allow_tf32, torch.backends.cuda.matmul.allow_tf32); ``--precision bf16`` runs
every forward and loss under autocast to bfloat16 (minitx.autocast, torch.autocast), float32 master
weights on both sides: every run of a table is in one precision. The batch is Multi30k-like: about 6k target tokens, sentences of 16-32 tokens, a
10k vocabulary on both sides. Reported: median step time (CUDA events, after warm-up; on cuda each
sample times ``--block`` steps back to back, 4 by default, as a training loop runs them: neither
side's step waits for the GPU, so the host issues the next while the GPU works, and a sample of
one step would charge a host-bound run, PyTorch eager's, the issuing the loop hides), target
tokens/s, and the ratios; ``--rounds N`` times every run N times, each round in a new order,
and reports the median of its rounds (a host-bound run such as PyTorch eager moves with the host
from one minute to the next; the rounds show by how much). Prints a table and writes JSON (default
benchmarks/results/train-step-<gpu>-<date>.json).

``--device cpu`` times the CPU recipes' models (cpu-quick, cpu-long) at their own batch size
(1,600 tokens, a 5k vocabulary), minitx on NumPy against PyTorch's CPU build, each with the
machine's default threads; there is one minitx run (no kernels on the CPU).
``--smoke`` shrinks everything to a tiny model and batch: it checks this script, its numbers
mean nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install

import numpy as np  # noqa: E402

from bench_kernels import Timer, default_out  # noqa: E402

TINY = dict(d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=32, max_len=16)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--presets", nargs="+", default=None,
                        help="Transformer presets (seed004-small, base) or translation recipes (gpu-best: "
                             "the model that recipe trains). Default: seed004-small base gpu-best on cuda, "
                             "cpu-quick cpu-long on cpu")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--smoke", action="store_true", help="tiny model and batch (checks the script only)")
    parser.add_argument("--tokens", type=int, default=None, help="target tokens per batch (default 6144 on "
                                                                 "cuda, 1600 on cpu)")
    parser.add_argument("--length", type=int, default=32, help="longest sentence")
    parser.add_argument("--vocab", type=int, default=None, help="vocabulary (default 10000 on cuda, 5000 on cpu)")
    parser.add_argument("--steps", type=int, default=20, help="timed samples (median)")
    parser.add_argument("--block", type=int, default=None,
                        help="steps back to back in each timed sample, their mean (default 4 on cuda, 1 on cpu)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1,
                        help="time every run this many times, each round in a new order; a run's figure is the "
                             "median of its rounds (each round: the median of --steps steps)")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile runs (cuda only)")
    parser.add_argument("--no-graphs", action="store_true", help="skip minitx's captured step (cuda only; it "
                                                                "needs nvmath-python)")
    parser.add_argument("--precision", choices=("fp32", "tf32", "bf16"), default="fp32",
                        help="float32 matrix products in full float32, or on TF32 tensor cores, or mixed "
                             "precision: the forward and loss under autocast to bfloat16 (cuda only; both sides)")
    parser.add_argument("--out", help="JSON path (default benchmarks/results/train-step-<gpu>-<date>.json)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.steps < 1:
        parser.error(f"--rounds and --steps must be at least 1, got {args.rounds} and {args.steps}")
    if args.block is None:
        args.block = 4 if args.device == "cuda" else 1
    if args.block < 1:
        parser.error(f"--block must be at least 1, got {args.block}")
    return args


def make_batch(tokens, length, vocab, seed=0):
    """src [B, S], tgt [B, T + 1] (BOS=1 first), padded with 0, lengths in [length/2, length]."""
    rng = np.random.default_rng(seed)
    batch = max(1, tokens // length)

    def sentences(extra):
        ids = rng.integers(4, vocab, (batch, length + extra))
        lengths = rng.integers(length // 2, length + 1, batch) + extra
        ids[np.arange(length + extra)[None, :] >= lengths[:, None]] = 0
        return ids

    tgt = sentences(1)
    tgt[:, 0] = 1
    return sentences(0), tgt


# ---------------------------------------------------------------- minitx


def model_settings(name):
    """Transformer keyword arguments of a preset, or of the model a translation recipe trains."""
    from minitx.nn.transformer import PRESETS
    from minitx.translate.recipes import RECIPES, build_config, model_arguments

    if name in PRESETS:
        return dict(PRESETS[name])
    if name in RECIPES:
        return model_arguments(build_config(name))
    raise SystemExit(f"unknown preset or recipe {name!r}: choose from {sorted(PRESETS) + sorted(RECIPES)}")


def minitx_step(cfg, src, tgt, device, autocast=None):
    """minitx's eager step; ``autocast`` a dtype name: forward and loss under minitx.autocast."""
    import minitx
    import minitx.functional as F
    from minitx import optim
    from minitx.nn import Transformer

    minitx.manual_seed(0)
    model = Transformer(cfg["src_vocab"], cfg["tgt_vocab"], device=device,
                        **{k: v for k, v in cfg.items() if k not in ("src_vocab", "tgt_vocab")})
    params = list(model.parameters())
    opt = optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    src_t, tgt_in = minitx.tensor(src, device=device), minitx.tensor(tgt[:, :-1], device=device)
    tgt_out = minitx.tensor(np.ascontiguousarray(tgt[:, 1:]), device=device)

    def step():
        with minitx.autocast(autocast) if autocast else contextlib.nullcontext():
            logits = model(src_t, tgt_in)
            loss = F.cross_entropy(logits, tgt_out, ignore_index=0, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(params, 1.0)
        opt.step()
    return step, sum(int(np.prod(p.shape)) for p in params)


def minitx_graphs_step(cfg, src, tgt, device, autocast=None):
    """The same step, sync-free and replayed from a CUDA graph (minitx.train.graphs.StepGraphs:
    the first call runs eagerly, the second captures, every later one replays)."""
    import minitx
    import minitx.functional as F
    from minitx import optim, sync
    from minitx.data.batching import Batch
    from minitx.nn import Transformer
    from minitx.train.graphs import StepGraphs

    minitx.manual_seed(0)
    model = Transformer(cfg["src_vocab"], cfg["tgt_vocab"], device=device,
                        **{k: v for k, v in cfg.items() if k not in ("src_vocab", "tgt_vocab")})
    params = list(model.parameters())
    opt = optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    batch = Batch(src=src, tgt_in=np.ascontiguousarray(tgt[:, :-1]), tgt_out=np.ascontiguousarray(tgt[:, 1:]),
                  n_src_tokens=int((src != 0).sum()), n_tgt_tokens=int((tgt[:, 1:] != 0).sum()))

    def loss_fn(model, batch):
        with minitx.autocast(autocast) if autocast else contextlib.nullcontext():
            logits = model(batch.src, batch.tgt_in)
            loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=0, label_smoothing=0.1)
        return loss, batch.n_tgt_tokens

    graphs = StepGraphs(model, loss_fn, opt, sync.DeferredChecks(device), lambda b: b.n_tgt_tokens, clip_norm=1.0)
    return (lambda: graphs(batch)), sum(int(np.prod(p.shape)) for p in params)


# ---------------------------------------------------------------- the PyTorch twin


def torch_model(torch, cfg):
    """minitx.nn.Transformer rebuilt in PyTorch, module for module, with the same parameter
    names and shapes (so ``load_state_dict`` takes minitx's weights): post- or pre-norm, fused
    q/k/v projection, learned or sinusoidal positions, shared and tied embeddings, ReLU or
    GELU (tanh form), key-padding and causal masks."""
    nn, tF = torch.nn, torch.nn.functional
    d, heads, p = cfg["d_model"], cfg["num_heads"], cfg["dropout"]
    p_att = p if cfg.get("attention_dropout") is None else cfg["attention_dropout"]  # minitx's default
    p_act = p if cfg.get("activation_dropout") is None else cfg["activation_dropout"]
    norm_first = cfg.get("norm_first", False)
    act = {"relu": tF.relu, "gelu": lambda x: tF.gelu(x, approximate="tanh")}[cfg.get("activation", "relu")]

    class Attention(nn.Module):
        def __init__(self, self_attention):
            super().__init__()
            self.self_attention = self_attention
            if self_attention:
                self.qkv = nn.Linear(d, 3 * d)
            else:
                self.q, self.kv = nn.Linear(d, d), nn.Linear(d, 2 * d)
            self.out = nn.Linear(d, d)

        def split(self, x, parts):
            b, length, _ = x.shape
            return x.view(b, length, parts, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)

        def forward(self, x, memory=None, mask=None):
            if self.self_attention:
                q, k, v = self.split(self.qkv(x), 3)
            else:
                (q,), (k, v) = self.split(self.q(x), 1), self.split(self.kv(memory), 2)
            o = tF.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p_att if self.training else 0.0)
            return self.out(o.transpose(1, 2).reshape(x.shape))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1, self.linear2 = nn.Linear(d, cfg["d_ff"]), nn.Linear(cfg["d_ff"], d)

        def forward(self, x):
            return self.linear2(tF.dropout(act(self.linear1(x)), p_act, self.training))

    class Layer(nn.Module):
        def __init__(self, decoder):
            super().__init__()
            self.self_attn, self.feed_forward = Attention(True), FeedForward()
            self.cross_attn = Attention(False) if decoder else None
            self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(3 if decoder else 2))

        def residual(self, i, x, sublayer):
            if norm_first:  # x + Dropout(f(LN(x)))
                return x + tF.dropout(sublayer(self.norms[i](x)), p, self.training)
            return self.norms[i](x + tF.dropout(sublayer(x), p, self.training))  # LN(x + Dropout(f(x)))

        def forward(self, x, mask, memory=None, memory_mask=None):
            x = self.residual(0, x, lambda h: self.self_attn(h, mask=mask))
            if self.cross_attn is not None:
                x = self.residual(1, x, lambda h: self.cross_attn(h, memory, mask=memory_mask))
            return self.residual(len(self.norms) - 1, x, self.feed_forward)

    class LearnedPositions(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(cfg["max_len"], d))

    def sinusoid_table():
        position = torch.arange(cfg["max_len"])[:, None]
        frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2) / d)
        table = torch.zeros(cfg["max_len"], d)
        table[:, 0::2], table[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
        return table

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(cfg["src_vocab"], d)
            self.tgt_embed = self.src_embed if cfg.get("share_embeddings") else nn.Embedding(cfg["tgt_vocab"], d)
            if cfg["positional"] == "learned":
                self.src_pos, self.tgt_pos = LearnedPositions(), LearnedPositions()
            else:  # a constant, like minitx's table (not in the state dict)
                self.register_buffer("src_table", sinusoid_table(), persistent=False)
                self.register_buffer("tgt_table", sinusoid_table(), persistent=False)
            self.encoder_layers = nn.ModuleList(Layer(False) for _ in range(cfg["num_encoder_layers"]))
            self.decoder_layers = nn.ModuleList(Layer(True) for _ in range(cfg["num_decoder_layers"]))
            if norm_first:
                self.encoder_norm, self.decoder_norm = nn.LayerNorm(d), nn.LayerNorm(d)
            if cfg.get("tie_output"):
                self.output_bias = nn.Parameter(torch.zeros(cfg["tgt_vocab"])) if cfg.get("output_bias", True) else None
            else:
                self.output = nn.Linear(d, cfg["tgt_vocab"], bias=cfg.get("output_bias", True))
            for w in self.parameters():
                if w.dim() > 1:
                    nn.init.xavier_uniform_(w)

        def positions(self, side):
            if cfg["positional"] == "learned":
                return getattr(self, f"{side}_pos").weight
            return getattr(self, f"{side}_table")

        def embed(self, table, positions, ids):
            return tF.dropout(table(ids) * math.sqrt(d) + positions[: ids.shape[1]], p, self.training)

        def forward(self, src, tgt_in):
            src_mask = (src != 0)[:, None, None, :]
            length = tgt_in.shape[1]
            causal = torch.ones(length, length, dtype=torch.bool, device=src.device).tril()
            tgt_mask = (tgt_in != 0)[:, None, None, :] & causal
            x = self.embed(self.src_embed, self.positions("src"), src)
            for layer in self.encoder_layers:
                x = layer(x, src_mask)
            if norm_first:
                x = self.encoder_norm(x)
            y = self.embed(self.tgt_embed, self.positions("tgt"), tgt_in)
            for layer in self.decoder_layers:
                y = layer(y, tgt_mask, x, src_mask)
            if norm_first:
                y = self.decoder_norm(y)
            if cfg.get("tie_output"):
                return tF.linear(y, self.tgt_embed.weight, self.output_bias)
            return self.output(y)

    return Model()


def torch_step(torch, cfg, src, tgt, device, compile_mode=None, autocast=None):
    """PyTorch's step; compile_mode None for eager, else torch.compile's mode ("default",
    "reduce-overhead"); ``autocast`` a dtype name: forward and loss under torch.autocast to it."""
    torch.manual_seed(0)
    model = torch_model(torch, cfg).to(device)
    params = list(model.parameters())
    try:
        opt = torch.optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9, fused=device != "cpu")
    except (TypeError, RuntimeError):
        opt = torch.optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    src_t = torch.as_tensor(src, device=device)
    tgt_in = torch.as_tensor(tgt[:, :-1], device=device)
    tgt_out = torch.as_tensor(np.ascontiguousarray(tgt[:, 1:]), device=device)

    def forward_and_loss(src_t, tgt_in, tgt_out):
        with torch.autocast(device, getattr(torch, autocast)) if autocast else contextlib.nullcontext():
            logits = model(src_t, tgt_in)
            return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                                                     ignore_index=0, label_smoothing=0.1)

    # compiled: the forward and the loss as one function, and so their backward; clipping and Adam stay eager
    loss_of = forward_and_loss if compile_mode is None else torch.compile(forward_and_loss, mode=compile_mode)

    def step():
        loss = loss_of(src_t, tgt_in, tgt_out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
    return step, sum(p.numel() for p in params)


# ---------------------------------------------------------------- main


@contextlib.contextmanager
def environment(**values):
    """Set environment variables for the block (minitx reads MINITX_FUSED at every op)."""
    previous = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in previous.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def set_precision(precision, torch):
    """One float32 matrix-product precision for every run: 'tf32' lets cuBLAS round the inputs of
    float32 products to TF32 (minitx and PyTorch alike), 'fp32' and 'bf16' forbid it (bf16's
    autocast products are bfloat16; the rest stay exact float32)."""
    from minitx import backend

    backend.allow_tf32(precision == "tf32")
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        torch.backends.cudnn.allow_tf32 = precision == "tf32"


def time_in_rounds(plan, rounds, warmup, steps, free, say, block=1):
    """{label: ([median ms of each round], parameter count)} for ``plan``, a list of (label,
    environment, timer, build), where build() returns (step, parameter count); ``say(label,
    ms, r)`` hears each figure as it comes, or the error of a graph run that failed. Each of a
    round's ``steps`` samples is ``block`` steps back to back (Timer).

    Each round times every run once, the first in plan order, each later one starting one run
    further down the list: a drift of the host or the GPU over a table's minutes falls on every
    run alike, and the spread of a run's rounds is there to read. A run just built takes
    ``warmup`` steps first (at least 2 for minitx: the graph run takes an eager step, then its
    capture), a run timed before takes one. With one round each run is built, timed and freed
    in turn; with more, all stay alive between rounds. A graph run that fails (its capture or a
    replay) is reported and left out of the results and of the later rounds."""
    times, alive, failed = {}, {}, set()
    for r in range(rounds):
        live = [run for run in plan if run[0] not in failed]
        for label, env, timer, build in live[r % len(live):] + live[:r % len(live)]:
            error = None
            with environment(**env):
                fresh = label not in alive
                if fresh:
                    alive[label] = build()
                step, n_params = alive[label]
                first = max(warmup, 2) if label.startswith("minitx") else warmup
                try:
                    ms = timer(step, first if fresh else 1, steps, block)
                except Exception as caught:  # noqa: BLE001 (a capture not proven in this precision: say so, go on)
                    if label != "minitx graphs":
                        raise
                    error = caught
            if error is not None:
                failed.add(label)
                times.pop(label, None)
                say(label, error, r)
                del alive[label], step, error  # the error's traceback holds the step's frames
                free()
                continue
            times.setdefault(label, ([], n_params))[0].append(ms)
            say(label, ms, r)
            if rounds == 1:
                del alive[label], step
                free()
    return {label: times[label] for label, *_ in plan if label in times}


def main(argv=None):
    args = parse_args(argv)
    cuda = args.device == "cuda"
    if args.precision == "bf16" and not cuda:
        raise SystemExit("bench_train_step.py: --precision bf16 needs --device cuda (bfloat16 on NumPy is "
                         "emulated, and its timing would mean nothing)")
    autocast = "bfloat16" if args.precision == "bf16" else None
    presets = args.presets or (["cpu-quick", "cpu-long"] if not cuda and not args.smoke
                               else ["seed004-small", "base", "gpu-best"])
    tokens = args.tokens or (64 if args.smoke else 6144 if cuda else 1600)
    length, vocab = (8, 50) if args.smoke else (args.length, args.vocab or (10000 if cuda else 5000))
    src, tgt = make_batch(tokens, length, vocab)
    target_tokens = int((tgt[:, 1:] != 0).sum())
    cp = torch = None
    if cuda:
        import cupy as cp

        gpu = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
        gpu = gpu.decode() if isinstance(gpu, bytes) else gpu
        minitx_timer = Timer("cupy", cp)
    else:
        gpu, minitx_timer = "cpu", Timer("cpu")
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            print("PyTorch not importable: its column is left out", file=sys.stderr)
    set_precision(args.precision, torch)
    from minitx import blas

    epilogues = cuda and blas.epilogues_on()  # (the graphs' products only: a GPU's)
    print(f"{gpu}: batch src {src.shape}, tgt {tgt.shape}, {target_tokens} target tokens, "
          f"{args.precision} products{', biases in cuBLASLt epilogues' if epilogues else ''}", flush=True)

    rows = []
    main_run = "minitx fused" if cuda else "minitx"
    for name in presets:
        cfg = dict(model_settings(name), src_vocab=vocab, tgt_vocab=vocab)
        if args.smoke:
            cfg.update(TINY)
        row = dict(preset=name, target_tokens=target_tokens, batch=list(src.shape) + [tgt.shape[1] - 1])
        # on the CPU there are no kernels: MINITX_FUSED=0 would time the same path again
        runs = [("minitx fused", "1"), ("minitx MINITX_FUSED=0", "0")] if cuda else [("minitx", "1")]
        if cuda and not args.no_graphs:
            if blas.available():
                runs.append(("minitx graphs", "1"))
            else:
                print("  minitx graphs: left out, nvmath-python is not importable", file=sys.stderr)
        plan = [(label, {"MINITX_FUSED": fused}, minitx_timer,
                 functools.partial(minitx_graphs_step if label == "minitx graphs" else minitx_step,
                                   cfg, src, tgt, args.device, autocast=autocast))
                for label, fused in runs]
        torch_runs = [("torch eager", None)] if torch is not None else []
        if torch_runs and cuda and not args.no_compile:
            torch_runs += [("torch compile", "default"), ("torch reduce-overhead", "reduce-overhead")]
        plan += [(label, {}, Timer("torch", torch) if cuda else Timer("cpu"),
                  functools.partial(torch_step, torch, cfg, src, tgt, args.device, mode, autocast=autocast))
                 for label, mode in torch_runs]

        def free():
            if cp is not None:
                cp.get_default_memory_pool().free_all_blocks()
            if torch is not None and cuda:
                torch.cuda.empty_cache()

        def say(label, ms, r):
            when = f"  (round {r + 1})" if args.rounds > 1 else ""
            if isinstance(ms, Exception):
                print(f"  {name:14s} {label:22s} failed{when}: {type(ms).__name__}: {ms}", file=sys.stderr)
            else:
                print(f"  {name:14s} {label:22s} {ms:9.2f} ms  {target_tokens / (ms * 1e-3):10.0f} tok/s{when}",
                      flush=True)

        for label, (ms_list, n_params) in time_in_rounds(plan, args.rounds, args.warmup, args.steps, free,
                                                         say, args.block).items():
            ms = statistics.median(ms_list)
            row[label] = dict(ms=ms, tokens_per_s=target_tokens / (ms * 1e-3), params=n_params, rounds=ms_list)
        for label, _ in torch_runs:
            if label in row and row[label]["params"] != row[main_run]["params"]:
                print(f"  warning: parameter counts differ: {label} {row[label]['params']:,} vs minitx "
                      f"{row[main_run]['params']:,}", file=sys.stderr)
        main_ms = row[main_run]["ms"]
        if cuda:
            row["fused_vs_unfused"] = row["minitx MINITX_FUSED=0"]["ms"] / main_ms
        row["torch_vs_minitx"] = row["torch eager"]["ms"] / main_ms if "torch eager" in row else None
        row["compile_vs_minitx"] = row["torch compile"]["ms"] / main_ms if "torch compile" in row else None
        row["reduce_overhead_vs_minitx"] = (row["torch reduce-overhead"]["ms"] / main_ms
                                            if "torch reduce-overhead" in row else None)
        for key, label in (("torch_vs_graphs", "torch eager"), ("compile_vs_graphs", "torch compile"),
                           ("reduce_overhead_vs_graphs", "torch reduce-overhead")):
            row[key] = (row[label]["ms"] / row["minitx graphs"]["ms"]
                        if label in row and "minitx graphs" in row else None)
        rows.append(row)

    nan = float("nan")
    def cell(value, spec):
        return format(nan if value is None else value, spec)

    print(f"\n{'preset':14s} {'params':>12s} {main_run:>14s} {'FUSED=0':>12s} {'torch':>12s} {'compile':>12s} "
          f"{'reduce-ovh':>12s} {'fused/unfused':>14s} {'torch/minitx':>12s} {'compile/minitx':>14s} "
          f"{'r-o/minitx':>11s} {'graphs':>12s} {'torch/graphs':>12s} {'compile/graphs':>14s} {'r-o/graphs':>11s}   "
          "(tokens/s; ratios of step times, > 1: minitx faster)")
    for r in rows:
        print(f"{r['preset']:14s} {r[main_run]['params']:12,d} {r[main_run]['tokens_per_s']:14.0f} "
              f"{cell(r.get('minitx MINITX_FUSED=0', {}).get('tokens_per_s'), '12.0f')} "
              f"{cell(r.get('torch eager', {}).get('tokens_per_s'), '12.0f')} "
              f"{cell(r.get('torch compile', {}).get('tokens_per_s'), '12.0f')} "
              f"{cell(r.get('torch reduce-overhead', {}).get('tokens_per_s'), '12.0f')} "
              f"{cell(r.get('fused_vs_unfused'), '14.2f')} {cell(r['torch_vs_minitx'], '12.2f')} "
              f"{cell(r['compile_vs_minitx'], '14.2f')} {cell(r['reduce_overhead_vs_minitx'], '11.2f')} "
              f"{cell(r.get('minitx graphs', {}).get('tokens_per_s'), '12.0f')} {cell(r['torch_vs_graphs'], '12.2f')} "
              f"{cell(r['compile_vs_graphs'], '14.2f')} {cell(r['reduce_overhead_vs_graphs'], '11.2f')}")
    report = dict(device=gpu, tokens=tokens, length=length, vocab=vocab, steps=args.steps, block=args.block,
                  warmup=args.warmup,
                  rounds=args.rounds, precision=args.precision, epilogues=epilogues,
                  torch_version=getattr(torch, "__version__", None), cupy_version=getattr(cp, "__version__", None),
                  results=rows)
    out = Path(args.out) if args.out else default_out("train-step", gpu)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=float))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
