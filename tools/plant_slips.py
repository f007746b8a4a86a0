"""Plant one-line slips in a scratch copy of minitx and see whether the tests notice.

    python tools/plant_slips.py [--ops] [--only NAME ...] [--list]

A test suite that passes proves little until it fails on a wrong program. Each slip below is
a small, plausible mistake in a place where one once went unnoticed (a comparison turned
round, an index dropped, a flag not carried along); for each, the script copies the committed
tree (``git archive HEAD``) into a temporary directory, changes that one line, runs the test
files that should guard it, and reports the first test that failed (the slip is *caught*) or
that they all passed (it *survived*: a test is missing). It exits 1 when a slip survives. The
changes never touch the working tree. ``--ops`` runs the ops' list instead (tools/op_slips.py:
one slip per op of issue 26, and the named ones of this list that guard ops).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Slip:
    name: str
    path: str
    old: str  # must occur exactly once in the file
    new: str
    tests: tuple  # the test files (or node ids) that should catch it


SLIPS = [
    Slip("an op recorded before x[index] = v sees x after the write", "minitx/autograd/writes.py",
         "        cell.node = old\n", "        pass\n",
         ("tests/ops/test_setitem.py",)),
    Slip("epoch-end commit saves the state before the epoch's end", "minitx/train/loop.py",
         "        self.save_last(state)\n        self.state = state\n",
         "        self.save_last()\n        self.state = state\n", ("tests/train",)),
    Slip("logged epoch loss divided by the batch count", "minitx/train/loop.py",
         '"train_loss": progress["epoch_loss"] / max(progress["epoch_weight"], 1)',
         '"train_loss": progress["epoch_loss"] / max(progress["batch"], 1)', ("tests/train",)),
    Slip("the epoch's loss sum not reset at its end", "minitx/train/loop.py",
         "batch=0, epoch_loss=0.0, epoch_weight=0)", "batch=0, epoch_weight=0)",
         ("tests/train",)),
    Slip("checkpoint loader: a member may reach past the file's end", "minitx/serialization.py",
         "info.header_offset + info.compress_size <= size", "info.header_offset <= size",
         ("tests/test_checkpoint_fuzz.py", "tests/test_serialization.py")),
    Slip("checkpoint loader: overlapping members allowed", "minitx/serialization.py",
         "self._check(total <= size, None", "self._check(total <= 2 * size, None",
         ("tests/test_checkpoint_fuzz.py", "tests/test_serialization.py")),
    Slip("anomaly mode: infinities never reported", "minitx/autograd/debug.py",
         "if not allow_inf and bool(xp.isinf(array).any()):", "if allow_inf and bool(xp.isinf(array).any()):",
         ("tests/test_autograd_debug.py",)),
    Slip("mask_tokens: random ids may be [MASK] itself", "minitx/nn/encoder.py",
         "rng.integers(low, high, int(randomized.sum()))", "rng.integers(low, high + 1, int(randomized.sum()))",
         ("tests/nn/test_encoder.py", "tests/encoder")),
    Slip("mask_tokens: random ids may be special tokens", "minitx/nn/encoder.py",
         "rng.integers(low, high, int(randomized.sum()))", "rng.integers(0, high, int(randomized.sum()))",
         ("tests/nn/test_encoder.py", "tests/encoder")),
    Slip("BPE: the highest-rank merge applied first", "minitx/data/bpe.py",
         "(best_rank is None or rank < best_rank)", "(best_rank is None or rank > best_rank)",
         ("tests/data/test_data_bpe.py",)),
    Slip("beam search: finished flags not reordered with their hypotheses", "minitx/translate/decoding.py",
         "finished = finished[origin] | (tokens == eos_id)", "finished = finished | (tokens == eos_id)",
         ("tests/translate/test_translate_decoding.py",)),
    Slip("greedy decoding: a sentence's own length cap ignored", "minitx/translate/decoding.py",
         "done = (tokens == eos_id) | (step + 1 >= caps)", "done = tokens == eos_id",
         ("tests/translate/test_translate_decoding.py",)),
    Slip("conv col2im: the padding cropped with the spatial axes' paddings reversed", "minitx/ops/conv.py",
         "slice(b, b + n) for (b, _), n in zip(self.padding, self.in_shape[2:])",
         "slice(b, b + n) for (b, _), n in zip(self.padding[::-1], self.in_shape[2:])", ("tests/ops/test_conv.py",)),
    Slip("avg_pool backward: dy divided by the full window whatever count_include_pad", "minitx/ops/conv.py",
         "dcols = xp.broadcast_to((dy / self.divisor)[:, :, None], self.cols_shape)",
         "dcols = xp.broadcast_to((dy / self.cols_shape[2])[:, :, None], self.cols_shape)", ("tests/ops/test_conv.py",)),
    Slip("gather backward: an index picked twice gets one gradient", "minitx/ops/indexing.py",
         "        add_at(dx, self.saved, _one_d(dy))\n",
         "        dx[self.saved] = _one_d(dy)\n", ("tests/ops/test_indexing.py",)),
    Slip("roll backward: an integer shift rolled forward again", "minitx/ops/shape.py",
         "isinstance(self.shift, (tuple, list)) else -self.shift", "isinstance(self.shift, (tuple, list)) else self.shift",
         ("tests/ops/test_indexing.py",)),
    Slip("sort backward: dy left in sorted order", "minitx/ops/scan.py",
         "xp.put_along_axis(dx, self.order, dy.reshape(self.order.shape), axis=self.scan_axis)",
         "dx[...] = dy.reshape(self.order.shape)", ("tests/ops/test_scan.py",)),
    Slip("cummax backward: a position that stays the maximum gets one gradient", "minitx/ops/scan.py",
         "add_at(dx, (self.index.reshape(length, rest), xp.arange(rest)[None, :]), front.reshape(length, rest))",
         "dx[self.index.reshape(length, rest), xp.arange(rest)[None, :]] = front.reshape(length, rest)",
         ("tests/ops/test_scan.py",)),
    Slip("batch and group norm backward: the mean(g) term dropped", "minitx/ops/norm.py",
         "return rstd * (g - _mean(g, axes) - xhat * _mean(g * xhat, axes))",
         "return rstd * (g - xhat * _mean(g * xhat, axes))", ("tests/ops/test_norms.py",)),
    Slip("rms norm backward: the projection on xhat dropped", "minitx/ops/norm.py",
         "dx = rrms * (g - xhat * mean_last(g, xhat)[..., None])", "dx = rrms * g",
         ("tests/ops/test_norms.py",)),
    Slip("batch norm: the running variance biased", "minitx/ops/norm.py",
         "self.batch_var = x.var(axis=axes) * (count / (count - 1))", "self.batch_var = x.var(axis=axes)",
         ("tests/ops/test_norms.py",)),
    Slip("PyTorch's optimizer state: a float step count kept a float", "minitx/optim/optimizer.py",
         "                value = int(value)\n", "                pass\n", ("tests/test_optim_torch_state.py",)),
    Slip("PyTorch's optimizer state: Adagrad's step-0 state kept (its sum counted twice)", "minitx/optim/optimizer.py",
         "            return {}  # made but not stepped", "            return converted  # made but not stepped",
         ("tests/test_optim_torch_state.py",)),
    Slip("PyTorch's optimizer state: Adam takes decoupled_weight_decay=True", "minitx/optim/optimizer.py",
         "if key in saved and saved[key] != fixed:", "if False:", ("tests/test_optim_torch_state.py",)),
    Slip("batched translation: outputs given to sentences in index order", "minitx/translate/evaluation.py",
         "for i, ids in zip(chunk, hyps):", "for i, ids in zip(sorted(chunk), hyps):",
         ("tests/translate/test_translate_decoding.py", "tests/translate/test_translate_bleu.py")),
    Slip('gradcheck: backward() fills .grad of every leaf in the graph', 'minitx/testing/gradcheck.py',
         '    xp = backend.get_array_module(out.data)\n    grads = autograd_grad(',
         '    xp = backend.get_array_module(out.data)\n    out.backward(xp.asarray(cotangent, dtype=out.dtype), '
         'retain_graph=True)\n    grads = autograd_grad(', ("tests/test_testing_tools.py",)),
    Slip('op_case: an integer output read as an integer where it is a bool', 'minitx/testing/factory.py',
         '        kind = "bool" if out.dtype == np.bool_ else "integer"',
         '        kind = "integer"', ("tests/test_testing_tools.py",)),
    Slip('float_arrays(distinct=True): grid points drawn with replacement', 'minitx/testing/strategies.py',
         '        ticks = start + rng.choice(window, size, replace=False)',
         '        ticks = start + rng.choice(window, size, replace=True)', ("tests/test_testing_tools.py",)),
    Slip('hygiene: a fresh_gradients op may hand dy on as its gradient', 'minitx/testing/gradcheck.py',
         '            for other, w in [("dy", dy)] + [(f"gradient {j}", h) for j, h in returned if j < k]:',
         '            for other, w in [(f"gradient {j}", h) for j, h in returned if j < k]:', ("tests/test_testing_tools.py",)),
    Slip('check_gradient_subsets: one tensor passed twice taken for two inputs', 'minitx/testing/checks.py',
         '        places.setdefault(id(inputs[i]), []).append(i)',
         '        places.setdefault(i, []).append(i)', ("tests/test_testing_tools.py",)),
    Slip("check_gradient_subsets: a non-leaf input's requires_grad switched off", 'minitx/testing/checks.py',
         '    inputs, fn = _as_leaves(inputs), _one_output(fn)',
         '    inputs, fn = list(inputs), _one_output(fn)', ("tests/test_testing_tools.py",)),
    Slip('hygiene: NaN counted as a change in bfloat16', 'minitx/testing/gradcheck.py',
         '    if backend.is_floating(now.dtype):',
         '    if now.dtype.kind == "f":', ("tests/test_testing_tools.py",)),
    Slip('gradcheck: a forward that writes into its input not noticed', 'minitx/testing/gradcheck.py',
         '    before = [(k, t.data.copy()) for k, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]',
         '    before = []', ("tests/test_testing_tools.py",)),
    Slip("gradcheck: empty inputs and outputs skipped, their gradient's shape unchecked", 'minitx/testing/gradcheck.py',
         '            _check_empty(fn, inputs, checked, n, rng.standard_normal(out_shape), atol, op_name)',
         '            continue', ("tests/test_testing_tools.py",)),
    Slip('gradcheck: directions=0 checks nothing and passes', 'minitx/testing/gradcheck.py',
         '    for name, value, minimum in (("full_jacobian_limit", full_jacobian_limit, 0), ("directions", directions, 1)):',
         '    for name, value, minimum in (("full_jacobian_limit", full_jacobian_limit, 0), ("directions", directions, 0)):', ("tests/test_testing_tools.py",)),
    Slip('float_arrays: an integer dtype taken', 'minitx/testing/strategies.py',
         '    if not backend.is_floating(dtype):  # a cast to int or bool would break every promise about the values',
         '    if not np.issubdtype(dtype, np.number):', ("tests/test_testing_tools.py",)),
    Slip('a resume that reads other data taken, its digest unchecked', 'minitx/train/rundir.py',
         '        differ = [split for split in digests if saved.get(split) != digests[split]]',
         '        differ = [split for split in digests if saved.get(split) is None]', ('tests/translate/test_translate_runs.py',)),
    Slip('--data-dir that does not exist: the data read from elsewhere', 'minitx/data/multi30k.py',
         '    if data_dir is not None:\n        return [_given_file(',
         '    if data_dir is not None and Path(data_dir).expanduser().is_dir():\n        return [_given_file(', ('tests/data',)),
    Slip('a resume with the target tokenizer missing learns it again unseen', 'minitx/translate/training.py',
         '    missing = [path.name for path in paths if not path.is_file()]',
         '    missing = [path.name for path in paths[:1] if not path.is_file()]', ('tests/translate/test_translate_runs.py',)),
    Slip('a start interrupted before config.json leaves a directory no run takes', 'minitx/train/rundir.py',
         '    if existing and all(path.name in start_files for path in existing):',
         '    if existing and overwrite and all(path.name in start_files for path in existing):', ('tests/translate/test_translate_cli.py',)),
    Slip('pairs with an empty side counted as longer than max_len', 'minitx/translate/training.py',
         '    return [src[i] for i in kept], [tgt[i] for i in kept], dropped - len(empty), empty',
         '    return [src[i] for i in kept], [tgt[i] for i in kept], dropped, empty', ('tests/translate/test_translate_training.py',)),
    Slip("a run extended past its max_steps keeps the stop's history record", 'minitx/train/loop.py',
         '        history = [r for r in self.history if r not in replaced] + [record]',
         '        history = self.history + [record]', ('tests/train/test_trainer.py',)),
    Slip('a Windows line end kept in every sentence', 'minitx/data/multi30k.py',
         '    return [line[:-1] if line.endswith("\\r") else line for line in lines]',
         '    return lines', ('tests/data',)),
    Slip("Ctrl-C after training says nothing was saved", 'minitx/translate/training.py',
         '        except KeyboardInterrupt as stop:\n            if isinstance(stop, TrainingInterrupted):',
         '        except ArithmeticError as stop:\n            if isinstance(stop, TrainingInterrupted):',
         ('tests/translate/test_translate_cli.py',)),
    Slip("embed_init='normal': the embeddings drawn from N(0, 1), not N(0, 1/d_model)", 'minitx/nn/transformer.py',
         '                init.normal_(embedding.weight, 0.0, d_model ** -0.5)',
         '                init.normal_(embedding.weight, 0.0, 1.0)', ('tests/nn/test_transformer.py',)),
    Slip("embed_init='normal': the padding row left drawn", 'minitx/nn/transformer.py',
         '                embedding.weight.data[pad_id] = 0.0', '                pass', ('tests/nn/test_transformer.py',)),
    Slip("source_eos: training's sources without their <eos>", 'minitx/translate/training.py',
         '    if source_eos:\n        src = [ids + [src_tok.eos_id]', '    if False:\n        src = [ids + [src_tok.eos_id]',
         ('tests/translate/test_text_form.py',)),
    Slip("source_eos: translated sources without their <eos>", 'minitx/translate/evaluation.py',
         '        encoded.append(ids + [src_tokenizer.eos_id] if ids and source_eos else ids)',
         '        encoded.append(ids)', ('tests/translate/test_text_form.py',)),
    Slip("a run's decoding forgets that its sources end with <eos>", 'minitx/translate/training.py',
         'search=config["beam_search"], text=text_form(config), source_eos=config["source_eos"])',
         'search=config["beam_search"], text=text_form(config), source_eos=False)', ('tests/translate/test_text_form.py',)),
    Slip("the published metric re-tokenizes a moses-lowercase model's own tokens", 'minitx/translate/training.py',
         '    published = written if text is not None and text.form == "moses-lowercase" and not isinstance(',
         '    published = None if text is not None and text.form == "moses-lowercase" and not isinstance(',
         ('tests/translate/test_text_form.py',)),
    Slip("the published references without normalize-punctuation", 'minitx/translate/text.py',
         '    return [tokenizer.tokenize(normalizer.normalize(line.lower()), escape=False, return_str=True) for line in lines]',
         '    return [tokenizer.tokenize(line.lower(), escape=False, return_str=True) for line in lines]',
         ('tests/translate/test_translate_bleu.py',)),
    Slip("a new run into another kind of run's directory is advised to --resume", 'minitx/train/lifecycle.py',
         '            if not overwrite:\n                _refuse_another_kind(', '            if False:\n                _refuse_another_kind(',
         ('tests/translate/test_cli_walk.py',)),
    Slip("op_case: a float output taken where the references return bool", 'minitx/testing/factory.py',
         '                if dtype.kind in "biu":  # (a comparison', '                if False:  # (a comparison',
         ('tests/test_testing_tools.py',)),
    Slip("a relative --data-dir recorded as typed", 'minitx/train/rundir.py',
         '        config["data_dir"] = str(found.resolve())',
         '        config["data_dir"] = str(found if from_run else config["data_dir"])',
         ('tests/translate/test_translate_runs.py',)),
    Slip("a pretraining resume trains on other data unseen", 'minitx/encoder/pretraining.py',
         '    check_data(config, {"train": train_text, "val": val_text}', '    (lambda *args: None)(config, {"train": train_text, "val": val_text}',
         ('tests/encoder/test_encoder_app.py',)),
    Slip("a pretraining start interrupted before config.json leaves a directory no run takes", 'minitx/encoder/pretraining.py',
         'start_files=("tokenizer.json",))', 'start_files=())', ('tests/encoder/test_encoder_app.py',)),
    Slip("a blank source line trained, where translate reads it as empty", 'minitx/translate/training.py',
         '    src = [src_tok.encode_ids(s) if s.strip() else [] for s, _ in pairs]',
         '    src = [src_tok.encode_ids(s) for s, _ in pairs]', ('tests/translate/test_translate_training.py',)),
    Slip("gradcheck: an op's second output left unchecked", 'minitx/testing/gradcheck.py',
         '        floating = [t for t in out if isinstance(t, Tensor) and backend.is_floating(t.dtype)]',
         '        floating = [t for t in out[:1] if isinstance(t, Tensor) and backend.is_floating(t.dtype)]',
         ('tests/test_testing_tools.py',)),
    Slip("patience: a run stops one epoch late", 'minitx/train/loop.py',
         '    if since >= patience:', '    if since > patience:', ('tests/train/test_trainer.py',)),
    Slip("patience: a resumed run that had stopped trains another epoch first", 'minitx/train/loop.py',
         ' or \\\n            patience_reason(self.history, self.patience)\n', '\n', ('tests/train/test_trainer.py',)),
    Slip("patience not passed from a translation run's configuration", 'minitx/translate/training.py',
         'patience=config["patience"],', 'patience=0,', ('tests/translate/test_translate_runs.py',)),
    Slip("check_gradients: the hygiene of a second output's op left unchecked", 'minitx/testing/gradcheck.py',
         '    for k, (op, made) in enumerate(ops.values()):', '    for k, (op, made) in enumerate(list(ops.values())[:1]):',
         ('tests/test_testing_tools.py',)),
    Slip("with source_eos, a cut source said longer than max_len", 'minitx/translate/evaluation.py',
         '                 if source_eos else f"the model', '                 if False else f"the model',
         ('tests/translate/test_translate_decoding.py',)),
    Slip("softmax: a +inf row maximum taken as 0, as a masked row's", 'minitx/ops/reduction.py',
         '    m = xp.where(m == -xp.inf, 0, m)', '    m = xp.where(xp.isinf(m), 0, m)',
         ('tests/ops/test_nn_ops.py', 'tests/kernels/test_dispatch.py')),
    Slip("logsumexp of a row holding +inf is NaN", 'minitx/ops/reduction.py',
         '        y = get_array_module(x).where(m == float("inf"), m, m + log_total)', '        y = m + log_total',
         ('tests/ops/test_nn_ops.py',)),
    Slip("layer_norm of empty rows sent to the kernels", 'minitx/ops/norm.py',
         '        if x.shape[-1] and kernels.enabled(x, w, b):', '        if kernels.enabled(x, w, b):',
         ('tests/kernels/test_dispatch.py',)),
    Slip("an embedding wider than the kernel's grid sent to it", 'minitx/ops/indexing.py',
         '        if kernels.enabled(dy) and dy.shape[-1] <= kernels.EMBEDDING_MAX_DIM:', '        if kernels.enabled(dy):',
         ('tests/kernels/test_dispatch.py',)),
    Slip("anomaly site: frame walk gives up after keep minitx frames", "minitx/autograd/debug.py",
         "                passed += 1\n", "                return inside\n", ("tests/test_autograd_debug.py",)),
    Slip("anomaly site: a file beside the package counts as inside it", "minitx/autograd/debug.py",
         "    return path.startswith(folder + os.sep)\n", "    return path.startswith(folder)\n",
         ("tests/test_autograd_debug.py",)),
    Slip("anomaly backward report reads the inputs' current data", "minitx/autograd/debug.py",
         "dy_note}\\n{_inputs(seen)}", "dy_note}\\n{_inputs([(_describe(t.data), _problem(t.data)) for t in fn.inputs])}",
         ("tests/test_autograd_debug.py",)),
    Slip("graph draws a stale root's old graph", "minitx/autograd/graph.py",
         "        refresh(root)\n", "        pass\n", ("tests/test_autograd_debug.py",)),
    Slip("learn.md claims views keep their values across a write", "docs/learn.md",
         "assert row.tolist() == [1.0, -2.0]", "assert row.tolist() == [0.0, 0.0]", ("tests/test_docs_code.py",)),
    Slip("engine never shows anomaly mode its summed gradients", "minitx/autograd/engine.py",
         "                hook(node, before_hooks, node._grad.data if accumulated else None)\n", "                pass\n",
         ("tests/test_autograd_debug.py",)),
    Slip("softmax reference zeros NaN and +inf rows", "tests/kernels/_reference.py",
         "    dead = m == -np.inf  # a row of -inf only (fully masked): zeros; a NaN or +inf in a row makes it NaN\n",
         "    dead = ~np.isfinite(m)\n", ("tests/kernels/test_ladder.py",)),
    Slip("mask_tokens: the extra masked position is added to batches that had one", "minitx/nn/encoder.py",
         "if mask_prob > 0 and not chosen.any() and maskable.any():",
         "if mask_prob > 0 and not chosen.all() and maskable.any():", ("tests/encoder/test_encoder_app.py",)),
    Slip("pretraining: an empty training or validation set let through", "minitx/encoder/pretraining.py",
         "        if not kept:  # nothing to train on, or a validation loss of nothing",
         "        if False:  # nothing to train on, or a validation loss of nothing", ("tests/encoder/test_encoder_app.py",)),
    Slip("masked_lm_scores: no masked position scores a loss of 0", "minitx/encoder/pretraining.py",
         '"val_loss": loss_sum / count if count else math.nan', '"val_loss": loss_sum / max(count, 1)',
         ("tests/encoder/test_encoder_app.py",)),
    Slip("pretraining: vocab_size leaves no learned piece", "minitx/encoder/pretraining.py",
         '"vocab_size": dict(low=len(SPECIAL_TOKENS) + len(BYTE_TOKENS) + 1),',
         '"vocab_size": dict(low=len(SPECIAL_TOKENS) + len(BYTE_TOKENS)),', ("tests/encoder/test_encoder_app.py",)),
    Slip("pretraining: the first epoch's batches built after the run directory is written",
         "minitx/encoder/pretraining.py",
         '    epochs = math.ceil(config["max_steps"] / len(batches(config["seed"], 0))) + 1\n    model = build_model('
         'config, vocab, device)\n    run.begin(lambda run_dir: tokenizer.save(tokenizer_path))\n',
         '    model = build_model(config, vocab, device)\n    run.begin(lambda run_dir: tokenizer.save(tokenizer_path))'
         '\n    epochs = math.ceil(config["max_steps"] / len(batches(config["seed"], 0))) + 1\n',
         ("tests/encoder/test_encoder_app.py",)),
    Slip("fine-tuning: chance stated as 0.5 whatever was scored", "minitx/encoder/finetuning.py",
         "    chance = max(translations, scored - translations) / scored", "    chance = 0.5",
         ("tests/encoder/test_encoder_app.py",)),
    Slip("finetune: warm-up longer than steps found only by WarmupCosine", "minitx/encoder/finetuning.py",
         'got {budgets}")\n    _check_schedule(config)\n', 'got {budgets}")\n', ("tests/encoder/test_encoder_app.py",)),
    Slip("neighbours: the lone '▁' counts as a word's piece", "minitx/encoder/neighbours.py",
         "if self.candidate[i] and self.piece(i) != WORD_BOUNDARY]", "if self.candidate[i]]",
         ("tests/encoder/test_encoder_app.py",)),
    Slip("pretrain --resume: a missing tokenizer.json is a bare [Errno 2]", "minitx/encoder/pretraining.py",
         "    tokenizer = _run_tokenizer(run_dir) if resume", "    tokenizer = load_tokenizer(tokenizer_path) if resume",
         ("tests/encoder/test_encoder_app.py",)),
    Slip("pretraining: empty lines kept", "minitx/encoder/pretraining.py",
         "train_ids, val_ids = [ids for ids in train_ids if len(ids) > 2]",
         "train_ids, val_ids = [ids for ids in train_ids if len(ids) > 1]", ("tests/encoder/test_encoder_app.py",)),
    Slip("a word tokenizer's detokenized words scored as Moses tokens", "minitx/translate/training.py",
         "        tgt_tok, WordTokenizer) else None", "        tgt_tok, type(None)) else None",
         ("tests/translate/test_translate_bleu.py",)),
    Slip("a checkpoint of another run refused naming that run's config.json", "minitx/translate/training.py",
         "    run_dir = path.parent if run_dir is None else Path(run_dir)", "    run_dir = path.parent",
         ("tests/translate/test_translate_runs.py",)),
    Slip("a translation's line break printed as a new line", "minitx/translate/evaluation.py",
         '            outputs[i] = _LINE_BREAKS.sub(" ", tgt_tokenizer.decode_ids(ids)).strip()',
         "            outputs[i] = tgt_tokenizer.decode_ids(ids).strip()", ("tests/translate/test_translate_decoding.py",)),
    Slip("translate_sentences: an unknown search decoded as gnmt", "minitx/translate/evaluation.py",
         '    if search not in ("gnmt", "fairseq"):', "    if False:", ("tests/translate/test_translate_decoding.py",)),
    Slip("decoding: a cap past the model's positions let through", "minitx/translate/decoding.py",
         "not 0 <= max_len <= model.max_len - 1:", "not 0 <= max_len:", ("tests/translate/test_translate_decoding.py",)),
    Slip("--checkpoint best.npz looked up in the current directory", "minitx/translate/training.py",
         'return Path(checkpoint) if "/" in checkpoint or os.sep in checkpoint else run_dir / checkpoint',
         "return Path(checkpoint)", ("tests/translate/test_translate_runs.py",)),
    Slip("anomaly mode keeps a walk's senders for the next", "minitx/autograd/debug.py",
         "        if node is None:\n            self._fed.clear()\n            return\n",
         "        if node is None:\n            return\n", ("tests/test_autograd_debug.py",)),
    Slip("fine-tuning: epochs count a short last batch as part of one", "minitx/encoder/finetuning.py",
         '"epochs": round(step / math.ceil(len(train[0]) / config["batch_size"]), 1)',
         '"epochs": round(step * min(config["batch_size"], len(train[0])) / len(train[0]), 1)',
         ("tests/encoder/test_encoder_app.py",)),
    Slip("a data file's byte-order mark read as part of sentence 1", "minitx/data/multi30k.py",
         '        return data.decode("utf-8").removeprefix("\\ufeff")', '        return data.decode("utf-8")',
         ("tests/data/test_data_multi30k.py", "tests/translate/test_translate_cli.py")),
    Slip("translate: a run's missing tokenizer a bare [Errno 2]", "minitx/translate/training.py",
         '    src_tok, tgt_tok = _saved_tokenizers(run_dir, "use the run",',
         '    src_tok, tgt_tok = (load_tokenizer(run_dir / "tokenizer.src.json"), load_tokenizer(run_dir / '
         '"tokenizer.tgt.json")) if True else _saved_tokenizers(run_dir, "use the run",',
         ("tests/translate/test_translate_runs.py",)),
    Slip("gradcheck: a nested output's tensors go unchecked", "minitx/testing/gradcheck.py",
         "        if nested:  # (its tensors would go unchecked)", "        if False:  # (its tensors would go unchecked)",
         ("tests/test_testing_tools.py",)),
    Slip("record.py: a finished run replaced by an unfinished one", "tools/gpu_session/record.py",
         "    if not finished and (recorded / \"results.json\").exists():",
         "    if False and (recorded / \"results.json\").exists():", ("tests/test_gpu_session.py",)),
    Slip("record.py: a run's BLEU not in bold, as the record's test reads it", "tools/gpu_session/record.py",
         "            print(f\"| {r['run']} | **{cell(r['bleu'])}** |", "            print(f\"| {r['run']} | {cell(r['bleu'])} |",
         ("tests/translate/test_recorded_runs.py",)),
    Slip("Trainer: a PyTorch-style scheduler's steps read as last_step", "minitx/train/loop.py",
         '    return schedule.last_step if hasattr(schedule, "last_step") else schedule.last_epoch',
         "    return schedule.last_step", ("tests/train/test_trainer.py",)),
    Slip("Trainer: a NumPy validation loss recorded as it came", "minitx/train/loop.py",
         '        val_loss = _number(self.validation_loss(self.model), "validation_loss(model)")',
         "        val_loss = self.validation_loss(self.model)", ("tests/train/test_trainer.py",)),
    Slip("RunLifecycle: a new run's configuration without its defaults", "minitx/train/lifecycle.py",
         "            config, self.changes = {**defaults, **config}, {}", "            config, self.changes = dict(config), {}",
         ("tests/train/test_lifecycle.py",)),
    Slip("RunLifecycle: a new run's unknown setting written to config.json", "minitx/train/lifecycle.py",
         "            if unknown:\n                raise ValueError(f\"a {kind} run has no setting",
         "            if False:\n                raise ValueError(f\"a {kind} run has no setting",
         ("tests/train/test_lifecycle.py",)),
    Slip("load_checkpoint: a model loaded to be used resets the random state", "minitx/train/checkpoints.py",
         '    if optimizer is not None and "rng" in state:', '    if "rng" in state:', ("tests/train/test_trainer.py",)),
    Slip("PolynomialLR: the power left out of the recursion", "minitx/optim/lr_scheduler.py",
         "        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power",
         "        decay = ((1.0 - t / total) / (1.0 - (t - 1) / total))", ("tests/test_lr_scheduler.py",)),
    Slip("ChainedScheduler steps its first scheduler only", "minitx/optim/lr_scheduler.py",
         "        for scheduler in self._schedulers:\n            scheduler.step()",
         "        for scheduler in self._schedulers[:1]:\n            scheduler.step()", ("tests/test_lr_scheduler.py",)),
    Slip("bfloat16 checkpoint entries load back as their uint16 bits", "minitx/serialization.py",
         "return array.view(backend.bfloat16()) if bfloat16 else array", "return array",
         ("tests/test_serialization.py",)),
    Slip("a bfloat16 Tensor's DLPack capsule left saying uint16", "minitx/interop.py",
         "_dlpack_dtype(capsule).code = _DL_BFLOAT", "_dlpack_dtype(capsule).code = _DL_UINT",
         ("tests/test_interop.py",)),
    Slip("save: a float8 array written that load cannot read back", "minitx/serialization.py",
         '    elif array.dtype.fields is None and not _names_itself(array.dtype):',
         '    elif False:', ("tests/test_serialization.py",)),
    Slip("a ChainedScheduler's first step not taken back inside a SequentialLR", "minitx/optim/lr_scheduler.py",
         '    if hasattr(scheduler, "_schedulers"):', "    if isinstance(scheduler, SequentialLR):",
         ("tests/test_lr_scheduler.py",)),
    Slip("a scheduler state of other inner states loaded by zip", "minitx/optim/lr_scheduler.py",
         "        if isinstance(inner, list) and len(inner) != len(self._schedulers):", "        if False:",
         ("tests/test_lr_scheduler.py",)),
    Slip("Trainer: a NumPy bool taken for a validation loss", "minitx/train/loop.py",
         "    if not isinstance(item, (bool, np.bool_, str, bytes)):", "    if not isinstance(value, (bool, str)):",
         ("tests/train/test_trainer.py",)),
    Slip("choose_final: the averaged model's loss as the hook returned it", "minitx/train/loop.py",
         '            candidates["averaged"] = _number(self.validation_loss(self.model), "validation_loss(model)")',
         '            candidates["averaged"] = self.validation_loss(self.model)', ("tests/train/test_trainer.py",)),
    Slip("Multi30k: a cached file that is not the release's read as it is", "minitx/data/multi30k.py",
         "    missing = [n for n in names if not (cache / n).is_file() or verify_file(cache / n) is False]",
         "    missing = [n for n in names if not (cache / n).is_file()]", ("tests/data/test_data_multi30k.py",)),
    Slip("Multi30k: a dropped connection taken for a whole file", "minitx/data/multi30k.py",
         "        if total is not None and received < total:", "        if False:", ("tests/data/test_data_multi30k.py",)),
    Slip("translate --no-progress: a download's bars drawn", "minitx/translate/training.py",
         'ensure_files(name, langs, config["data_dir"], progress=progress)', 'ensure_files(name, langs, config["data_dir"])',
         ("tests/translate/test_translate_runs.py",)),
    Slip("pretraining log: the vocabulary size's expression printed", "minitx/encoder/pretraining.py",
         '        f"left out); vocabulary {tokenizer.vocab_size} + [MASK]; "',
         '        "left out); vocabulary {tokenizer.vocab_size} + [MASK]; "', ("tests/encoder/test_encoder_app.py",)),
    Slip("evaluate: where its data came from left unsaid", "minitx/translate/__main__.py",
         '    print(f"evaluate: data read from {files[0].parent}", file=sys.stderr)', "    pass",
         ("tests/translate/test_translate_cli.py",)),
    Slip("matmul: a list operand on the right refused beside float64", "minitx/ops/_args.py",
         "    from_sequence = isinstance(a, (list, tuple)) or isinstance(b, (list, tuple))",
         "    from_sequence = isinstance(a, (list, tuple))", ("tests/ops/test_linalg.py",)),
    Slip("tensor: a torch parameter's copy asked for as a view, refused", "minitx/autograd/tensor.py",
         "    data = interop.as_array(data, copy=True)", "    data = interop.as_array(data)",
         ("tests/test_interop.py",)),
    Slip("trace_backward: every op numbered 0 in forward order", "minitx/autograd/debug.py",
         "        self._forwards += 1\n", "        pass\n", ("tests/test_autograd_debug.py",)),
    Slip("CyclicLR: triangular2's halving dropped", "minitx/optim/lr_scheduler.py",
         "            return 1 / (2.0 ** (x - 1))", "            return 1.0", ("tests/test_lr_scheduler.py",)),
    Slip("CyclicLR: the down phase's length taken from step_size_up", "minitx/optim/lr_scheduler.py",
         "        self.total_size = float(step_size_up) + float(step_size_down)",
         "        self.total_size = float(step_size_up) + float(step_size_up)", ("tests/test_lr_scheduler.py",)),
    Slip("set_rng_state: the state checked, then ignored", "minitx/random.py",
         '    _restore(new_state, "set_rng_state")', '    _check_seed_and_cpu(new_state, "set_rng_state")',
         ("tests/test_random_sampling.py",)),
    Slip("time_to_bleu: the time to a BLEU taken at its first crossing, not where the run stays",
         "benchmarks/time_to_bleu.py",
         '        if all(bleus.get(e, float("-inf")) >= target for e in range(epoch, end + 1)):',
         "        if bleus[epoch] >= target:",
         ("tests/translate/test_translate_runs.py::test_time_to_bleu_counts_from_the_epoch_after_which_bleu_stays_at_the_target",
          "tests/translate/test_translate_runs.py::test_time_to_bleu_rescores_a_recorded_scan_without_its_models")),
    Slip("a list of floats beside float64 rounded to float32 first", "minitx/autograd/tensor.py",
         "        return tensor(value, dtype=like.dtype if exact else None, device=like.device)",
         "        return tensor(value, device=like.device)", ("tests/ops/test_linalg.py",)),
    Slip("Multi30k download: the URL follows the repository's master branch", "minitx/data/multi30k.py",
         'DATASET_COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"', 'DATASET_COMMIT = "master"',
         ("tests/data/test_data_multi30k.py",)),
    Slip("Multi30k download: no deadline for a server that trickles bytes", "minitx/data/multi30k.py",
         "                    if time.monotonic() > deadline:", "                    if False:",
         ("tests/data/test_data_multi30k.py",)),
    Slip("Multi30k download: the cached file made 0600 whatever the umask", "minitx/data/multi30k.py",
         'os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)', 'os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)',
         ("tests/data/test_data_multi30k.py",)),
    Slip("Multi30k download: a killed run's part files never deleted", "minitx/data/multi30k.py",
         "    _remove_stale_parts(dest_dir, name)\n", "    pass\n", ("tests/data/test_data_multi30k.py",)),
    Slip("Multi30k download: a part file another download is writing deleted as stale", "minitx/data/multi30k.py",
         "                if locked:  # deleted before the lock", "                if True:  # deleted before the lock",
         ("tests/data/test_data_multi30k.py",)),
    Slip("pretraining log: where its data were read from left unsaid", "minitx/encoder/pretraining.py",
         '    log_data_read(files, config["data_dir"], from_run)', "    pass",
         ("tests/encoder/test_encoder_app.py",)),
    Slip("pretraining data_dir: a relative --data-dir recorded as typed", "minitx/encoder/pretraining.py",
         "    resolve_data_dir(config, from_run)\n", "    pass\n", ("tests/encoder/test_pretraining_data_dir.py",)),
    Slip("pretraining data_dir: a resume reads the run's own unchecked (a moved one told to leave --data-dir out)",
         "minitx/encoder/pretraining.py", "    resolve_data_dir(config, from_run)\n",
         "    resolve_data_dir(config, False)\n", ("tests/encoder/test_pretraining_data_dir.py",)),
    Slip("pretraining data_dir: finetune reads the run's data_dir unchecked", "minitx/encoder/finetuning.py",
         "        data_dir = runs_data_dir(pre_config)", '        data_dir = pre_config["data_dir"]',
         ("tests/encoder/test_pretraining_data_dir.py",)),
    Slip("pretraining data_dir: each split's files looked up again to be read", "minitx/encoder/pretraining.py",
         '(sentences(read_pairs(split, files[split])) for split in ("train", "val"))',
         '(sentences(read_pairs(split, ensure_files(split, LANGS, config["data_dir"]))) for split in ("train", "val"))',
         ("tests/encoder/test_pretraining_data_dir.py",)),
    Slip("a resume beside a schedule cycling beta1 leaves beta2 unchecked", "minitx/train/loop.py",
         '                    found.append((f"optimizer group {g}", "betas[1:]", tuple(value[1:])))',
         "                    pass", ("tests/train/test_trainer.py",)),
    Slip("a list beside a float64 NumPy array rounded to float32 first", "minitx/ops/_args.py",
         "            a = like = as_tensor(a)", "            a = as_tensor(a)", ("tests/ops/test_linalg.py",)),
    Slip("trace_backward: a minitx or runpy frame named as the user's line", "minitx/autograd/debug.py",
         '        users = path is not None and not _inside(path, _PACKAGE) and not path.startswith("<frozen ")',
         "        users = path is not None", ("tests/test_autograd_debug.py",)),
    Slip("a list holding a tensor that requires grad copied silently", "minitx/autograd/tensor.py",
         "    _reading_a_list.depth += 1\n", "    pass\n", ("tests/test_interop.py",)),
    Slip("trace_backward(model=): the module stack keeps a call an exception ended", "minitx/autograd/debug.py",
         "            self._calls.pop()\n", "            break\n", ("tests/test_autograd_debug.py",)),
    Slip("forward pre-hook: the arguments it returns ignored", "minitx/nn/module.py",
         "                    args = result if isinstance(result, tuple) else (result,)\n",
         "                    pass\n", ("tests/nn/test_module.py",)),
    Slip("x[index] = v written in place although a saved array overlaps the region", "minitx/autograd/writes.py",
         "        if span[0] < high and low < span[1] and _shares_memory_with(region, part):\n",
         "        if False:\n", ("tests/test_writes_in_place.py",)),
    Slip("x[index] = v written in place although a raw array unseen holds x's array", "minitx/autograd/writes.py",
         "    return _holders(x) == holders  # else held by something minitx does not see\n", "    return True\n",
         ("tests/test_writes_in_place.py",)),
    Slip("write in place: an empty region taken in place, past the holder checks", "minitx/autograd/writes.py",
         "        return False  # an empty region: nothing to gain, and x would keep an array raw holders share",
         "        return True", ("tests/test_writes_in_place.py",)),
    Slip("write in place: the detached tensors counted, not held until the count", "minitx/autograd/writes.py",
         "            tensors.append(view)", "            tensors.append(None)", ("tests/test_writes_in_place.py",)),
    Slip("finetune --no-progress not handed to the download", "minitx/encoder/__main__.py",
         "                                   progress=not args.no_progress, **options)",
         "                                   progress=True, **options)", ("tests/encoder/test_pretraining_data_dir.py",)),
    Slip("minitx.tensor(w) of a tensor that requires grad copies it without a word", "minitx/autograd/tensor.py",
         "        if data.requires_grad:\n", "        if False:\n", ("tests/test_creation.py",)),
    Slip("StepGraphs takes a schedule that cycles beta1 (a replay keeps the capture's)", "minitx/train/graphs.py",
         "        if moved:\n", "        if False:\n", ("tests/train/test_graphs_hyperparameters.py",)),
    Slip("StepGraphs replays after the optimizer's state was loaded (the old arrays)", "minitx/train/graphs.py",
         "                or captured.loads != self.optimizer.loads)", "                or False)",
         ("tests/train/test_graphs.py",)),
    Slip("nn.Embedding keeps a negative padding_idx as given", "minitx/ops/indexing.py",
         "    return int(padding_idx) % n", "    return int(padding_idx)", ("tests/nn/test_layers.py",)),
    Slip("a list holding a tensor that requires grad warns once per element read", "minitx/autograd/tensor.py",
         "            reading.warned = True  # once a list: NumPy asks each element for its array more than once",
         "            pass", ("tests/test_interop.py",)),
    Slip("write in place: a stale view's array that another holds taken as read by no one", "minitx/autograd/writes.py",
         "        elif alone:\n", "        elif True:\n", ("tests/test_writes_in_place.py",)),
    Slip("write in place: the stale views dropped from x's list after a write in place", "minitx/autograd/writes.py",
         "            if memory is not None:\n                kept.append(ref)\n", "            pass\n",
         ("tests/test_writes_in_place.py",)),
    Slip("refresh: a stale base made again after its view, which it makes stale again", "minitx/autograd/writes.py",
         "    if type(base) is _StaleView:\n        refresh(base)\n", "    pass\n",
         ("tests/test_writes_in_place.py",)),
]


def scratch_copy(directory: Path) -> None:
    """The committed tree (HEAD) unpacked into ``directory``."""
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tempfile.TemporaryFile() as f:
        f.write(archive)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(directory, filter="data")


def plant(directory: Path, slip: Slip) -> None:
    path = directory / slip.path
    text = path.read_text()
    if text.count(slip.old) != 1:
        raise SystemExit(f"slip {slip.name!r}: {slip.path} holds its line {text.count(slip.old)} times, not once; "
                         "update the slip to the code")
    path.write_text(text.replace(slip.old, slip.new))


def caught(directory: Path, slip: Slip) -> tuple[str | None, float]:
    """Run the slip's tests in the scratch copy: (the first test that failed, or None when none did,
    with the tests that skipped and why (a missing MINITX_DATA_DIR skips the runs' tests); seconds)."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-rfEs", "-p", "no:cacheprovider", *slip.tests],
                            cwd=directory, capture_output=True, text=True,
                            env={**os.environ, "MINITX_KERNEL_BUILD_DIR": str(directory / ".kernel_build")})
    if result.returncode not in (0, 1):
        raise SystemExit(f"slip {slip.name!r}: pytest ended with code {result.returncode}:\n{result.stdout[-2000:]}"
                         f"{result.stderr[-2000:]}")
    if result.returncode == 0:
        skips = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED ")]
        note = f"NO: it survived ({len(skips)} skip lines, the first: {skips[0][8:]})" if skips else None
        return note, time.perf_counter() - started
    # pytest's summary names each failure: "FAILED tests/x.py::test_y[case] - message"
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in result.stdout.splitlines()
              if line.startswith(("FAILED ", "ERROR "))]
    return (failed[0] if failed else "a test (unnamed)"), time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", help="run the slips whose names contain one of these words")
    parser.add_argument("--list", action="store_true", help="list the slips and exit")
    parser.add_argument("--ops", action="store_true", help="run the ops' slips (tools/op_slips.py) instead")
    args = parser.parse_args(argv)
    chosen = SLIPS
    if args.ops:
        sys.modules.setdefault("plant_slips", sys.modules[__name__])  # op_slips imports this file by that name
        from op_slips import OP_SLIPS  # noqa: PLC0415

        chosen = OP_SLIPS
    slips = [s for s in chosen if not args.only or any(word in s.name for word in args.only)]
    if args.list:
        for s in slips:
            print(f"{s.name}  ({s.path}; {' '.join(s.tests)})")
        return 0
    survived = 0
    print("| slip | file | caught by | seconds |\n|---|---|---|---|")
    for slip in slips:
        with tempfile.TemporaryDirectory() as tmp:
            scratch_copy(Path(tmp))
            plant(Path(tmp), slip)
            failed, seconds = caught(Path(tmp), slip)
        survived += failed is None or failed.startswith("NO: ")
        print(f"| {slip.name} | {slip.path} | {failed or 'NO: it survived'} | {seconds:.0f} |", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
