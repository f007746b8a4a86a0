"""Greedy and beam-search decoding with the decoder's key/value cache.

Both encode the source once, then feed one target token per step: the cache holds every
layer's keys and values of the earlier positions, so a step costs O(length) instead of
re-running the decoder over the whole prefix. A sentence whose translation is finished leaves
the batch (its rows of the memory and the cache with it), so a batch's later steps cost what
its sentences still decoding cost, not what its longest translation's batch-mates did.
"""
from __future__ import annotations

import numbers

import numpy as np

from minitx import backend
from minitx.autograd.grad_mode import no_grad
from minitx.autograd.tensor import Tensor


def _step_log_probs(model, tokens, memory, src_mask, cache):
    """log p(next token) [rows, V] as a numpy float32 array, for the last fed token.

    The log-softmax is written out on the raw backend array rather than called as an op: this
    runs outside autograd on one [rows, V] slice per step, and a Tensor op would only add a
    wrapper and a graph-mode check around the same three array operations."""
    logits = model.decode(tokens, memory, src_mask, cache).data[:, -1]
    xp = backend.get_array_module(logits)
    logits = logits - logits.max(axis=-1, keepdims=True)
    log_probs = logits - xp.log(xp.exp(logits).sum(axis=-1, keepdims=True))
    return backend.to_numpy(log_probs).astype(np.float32)


def _forbid(log_probs, step, bos_id, eos_id, pad_id):
    """Tokens a translation may not contain: <pad> (it would cut the output short) and <bos>
    never, and <eos> not as the first token (a non-empty source gets a non-empty translation)."""
    log_probs[:, [pad_id, bos_id]] = -np.inf
    if step == 0:
        log_probs[:, eos_id] = -np.inf
    return log_probs


def default_max_len(model, src_len: int) -> int:
    """Source length + 50, within the model's positions (position 0 is <bos>)."""
    return min(src_len + 50, model.max_len - 1)


def _caps(model, src, pad_id, max_len):
    """Each sentence's cap on the length of its output: ``max_len`` when given, else
    default_max_len of its own length (its tokens other than ``pad_id``), so that a sentence's
    translation does not depend on the sentences batched with it."""
    if max_len is not None:
        if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or \
                not 0 <= max_len <= model.max_len - 1:
            raise ValueError(f"decoding: max_len must be a whole number of tokens in [0, {model.max_len - 1}] (the "
                             f"model's {model.max_len} positions, less <bos>'s), got {max_len!r}")
        return np.full(len(src), max_len)
    return np.array([default_max_len(model, int(n)) for n in (src != pad_id).sum(axis=1)], dtype=np.int64)


@no_grad()
def greedy_decode(model, src, bos_id: int, eos_id: int, pad_id: int = 0, max_len: int | None = None):
    """Pick the most likely token at each step. src: int array [B, S], padded with ``pad_id``.

    A sentence leaves the batch when it produces <eos> or reaches its cap, so later steps compute
    only the sentences still decoding. Returns a list of B token-id lists (without <bos>, cut at
    <eos>, at most ``max_len`` or each sentence's default_max_len tokens; empty for a cap of 0).
    """
    model.eval()
    src = np.asarray(backend.to_numpy(src.data if isinstance(src, Tensor) else src))
    caps = _caps(model, src, pad_id, max_len)
    memory, src_mask = model.encode(src)
    cache = model.new_cache()
    active = np.arange(src.shape[0])  # the sentences still in the batch, in the order of their rows
    outputs = [[] for _ in active]
    history = np.empty((len(active), 0), dtype=np.int64)
    last = np.full((len(active), 1), bos_id, dtype=np.int64)
    for step in range(int(caps.max(initial=0))):
        log_probs = _forbid(_step_log_probs(model, last, memory, src_mask, cache), step, bos_id, eos_id, pad_id)
        tokens = log_probs.argmax(axis=1)
        history = np.concatenate([history, tokens[:, None]], axis=1)
        done = (tokens == eos_id) | (step + 1 >= caps)
        for i in np.flatnonzero(done):
            outputs[active[i]] = _strip(history[i], eos_id, pad_id)
        if done.all():
            break
        if done.any():
            kept = np.flatnonzero(~done)
            cache.reorder(kept)
            memory, src_mask = memory[kept], src_mask[kept]
            active, caps, history, tokens = active[kept], caps[kept], history[kept], tokens[kept]
        last = tokens[:, None]
    return outputs


@no_grad()
def beam_search(model, src, bos_id: int, eos_id: int, pad_id: int = 0, beam_size: int = 5,
                length_penalty: float = 0.6, max_len: int | None = None):
    """Keep the ``beam_size`` best prefixes per sentence; return the best finished one.

    Scores are sums of log-probabilities. A finished hypothesis (it produced <eos>, or reached
    its sentence's cap: ``max_len``, or default_max_len of the sentence) keeps its score and
    stays in the beam. Once all of a sentence's hypotheses are finished they are ranked by
    score / lp(length), lp(n) = ((5 + n) / 6) ^ length_penalty (Wu et al., 2016), so longer
    outputs are not unfairly punished for having more terms, and the sentence leaves the
    batch: later steps compute only the sentences still decoding. beam_size=1 is greedy
    decoding; a cap of 0 gives empty outputs.
    """
    model.eval()
    src = np.asarray(backend.to_numpy(src.data if isinstance(src, Tensor) else src))
    batch, k = src.shape[0], beam_size
    caps = np.repeat(_caps(model, src, pad_id, max_len), k)  # of each hypothesis

    memory, src_mask = model.encode(src)
    if k > 1:  # hypothesis r belongs to sentence r // k of the active ones
        rows = np.repeat(np.arange(batch), k)
        memory, src_mask = memory[rows], src_mask[rows]
    cache = model.new_cache()

    active = np.arange(batch)  # the sentences still in the batch, in the order of their rows
    outputs = [[] for _ in active]
    scores = np.full((batch, k), -np.inf, dtype=np.float32)
    scores[:, 0] = 0.0  # all beams start as the same <bos> prefix: keep one of them
    history = np.empty((batch * k, 0), dtype=np.int64)
    finished = np.zeros(batch * k, dtype=bool)
    last = np.full((batch * k, 1), bos_id, dtype=np.int64)

    for step in range(int(caps.max(initial=0))):
        log_probs = _forbid(_step_log_probs(model, last, memory, src_mask, cache), step, bos_id, eos_id, pad_id)
        vocab = log_probs.shape[1]
        # a finished hypothesis can only be extended by padding, at no cost
        log_probs[finished] = -np.inf
        log_probs[finished, pad_id] = 0.0
        candidates = (scores.reshape(-1, 1) + log_probs).reshape(len(active), k * vocab)
        if k == 1:
            best = candidates.argmax(axis=1)[:, None]
        else:
            best = np.argpartition(-candidates, k - 1, axis=1)[:, :k]
            order = np.argsort(-np.take_along_axis(candidates, best, axis=1), axis=1, kind="stable")
            best = np.take_along_axis(best, order, axis=1)
        scores = np.take_along_axis(candidates, best, axis=1)
        origin = (np.arange(len(active))[:, None] * k + best // vocab).reshape(-1)
        tokens = (best % vocab).reshape(-1)
        history = np.concatenate([history[origin], tokens[:, None]], axis=1)
        finished = finished[origin] | (tokens == eos_id) | (step + 1 >= caps)

        sentence_done = finished.reshape(-1, k).all(axis=1)  # of each active sentence
        for i in np.flatnonzero(sentence_done):
            outputs[active[i]] = _best(history[i * k:(i + 1) * k], scores[i], eos_id, pad_id, length_penalty)
        if sentence_done.all():
            break
        kept = np.flatnonzero(np.repeat(~sentence_done, k))  # the rows of the sentences going on
        if k > 1 or sentence_done.any():  # (with one hypothesis a sentence, origin is every row in place)
            cache.reorder_decoded(origin[kept])
        if sentence_done.any():
            cache.reorder_memory(kept)  # within a sentence the memory's rows are all the same
            memory, src_mask = memory[kept], src_mask[kept]
            active, scores, caps = active[~sentence_done], scores[~sentence_done], caps[kept]
            history, finished, tokens = history[kept], finished[kept], tokens[kept]
        last = tokens[:, None]
    return outputs


@no_grad()
def beam_search_fairseq(model, src, bos_id: int, eos_id: int, pad_id: int = 0, beam_size: int = 5,
                        length_penalty: float = 1.0, max_len: int | None = None):
    """Beam search as fairseq's SequenceGenerator searches, the decoding of published Multi30k results.

    Each step takes the 2 * beam_size best extensions of the live hypotheses. Those among the
    first beam_size that end in <eos> are finished: they leave the beam with the score
    score / n ^ length_penalty, n their tokens with <eos> (fairseq's normalize_scores). The
    beam_size best that do not end in <eos> go on. A sentence is done when it has beam_size
    finished hypotheses, or at its cap, where every extension ends (fairseq forces <eos> there;
    this keeps the last token, as ``beam_search`` does, and divides by n = the cap, no <eos>
    counted: a departure only for a sentence that reaches its cap); its best finished one is its
    translation. Unlike ``beam_search``, a finished hypothesis holds no place in the beam, so the
    search goes on among longer ones, and the penalty divides by the length itself.
    """
    model.eval()
    src = np.asarray(backend.to_numpy(src.data if isinstance(src, Tensor) else src))
    batch, k = src.shape[0], beam_size
    caps = _caps(model, src, pad_id, max_len)  # of each sentence

    memory, src_mask = model.encode(src)
    rows = np.repeat(np.arange(batch), k)  # hypothesis r belongs to sentence r // k of the active ones
    memory, src_mask = memory[rows], src_mask[rows]
    cache = model.new_cache()

    active = np.arange(batch)  # the sentences still in the batch, in the order of their rows
    finished = [[] for _ in active]  # of each sentence: (normalized score, tokens)
    scores = np.full((batch, k), -np.inf, dtype=np.float32)
    scores[:, 0] = 0.0  # all beams start as the same <bos> prefix: keep one of them
    history = np.empty((batch * k, 0), dtype=np.int64)
    last = np.full((batch * k, 1), bos_id, dtype=np.int64)

    for step in range(int(caps.max(initial=0))):
        log_probs = _forbid(_step_log_probs(model, last, memory, src_mask, cache), step, bos_id, eos_id, pad_id)
        vocab = log_probs.shape[1]
        candidates = (scores.reshape(-1, 1) + log_probs).reshape(len(active), k * vocab)
        best = np.argpartition(-candidates, 2 * k - 1, axis=1)[:, :2 * k]
        order = np.argsort(-np.take_along_axis(candidates, best, axis=1), axis=1, kind="stable")
        best = np.take_along_axis(best, order, axis=1)  # [sentences, 2k], best first
        best_scores = np.take_along_axis(candidates, best, axis=1)
        origin = np.arange(len(active))[:, None] * k + best // vocab  # each candidate's row
        tokens = best % vocab
        at_cap = step + 1 >= caps
        ends = ((tokens == eos_id) | at_cap[:, None]) & np.isfinite(best_scores)  # (at the cap, every one ends)
        for i, j in zip(*np.nonzero(ends[:, :k])):  # among the first k: finished
            if len(finished[active[i]]) < k:
                hypothesis = _strip(np.append(history[origin[i, j]], tokens[i, j]), eos_id, pad_id)
                finished[active[i]].append((best_scores[i, j] / (step + 1) ** length_penalty, hypothesis))
        done = np.array([len(finished[s]) >= k for s in active]) | at_cap
        if done.all():
            break
        going = np.argsort(ends, axis=1, kind="stable")[:, :k]  # the k best that do not end (those last)
        scores = np.take_along_axis(best_scores, going, axis=1)
        origin = np.take_along_axis(origin, going, axis=1).reshape(-1)
        tokens = np.take_along_axis(tokens, going, axis=1).reshape(-1)
        history = np.concatenate([history[origin], tokens[:, None]], axis=1)
        kept = np.flatnonzero(np.repeat(~done, k))  # the rows of the sentences going on
        cache.reorder_decoded(origin[kept])
        if done.any():
            cache.reorder_memory(kept)
            memory, src_mask = memory[kept], src_mask[kept]
            active, scores, caps = active[~done], scores[~done], caps[~done]
            history, tokens = history[kept], tokens[kept]
        last = tokens[:, None]
    return [max(hypotheses, key=lambda h: h[0])[1] if hypotheses else [] for hypotheses in finished]


def _best(hypotheses, scores, eos_id, pad_id, length_penalty):
    """The hypothesis of one sentence's beam with the best score / lp(length), as token ids."""
    lengths = np.array([_length(h, eos_id, pad_id) for h in hypotheses])
    ranked = scores / ((5.0 + lengths) / 6.0) ** length_penalty
    return _strip(hypotheses[int(ranked.argmax())], eos_id, pad_id)


def _strip(tokens, eos_id, pad_id):
    out = []
    for t in tokens.tolist():
        if t == eos_id or t == pad_id:
            break
        out.append(t)
    return out


def _length(tokens, eos_id, pad_id):
    """Number of tokens including the closing <eos> (the terms in the score)."""
    return len(_strip(tokens, eos_id, pad_id)) + 1
