"""Greedy and beam-search decoding, batch translation, and the attention-heatmap helper."""
import hashlib
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from translate_kit import REPO, no_network, subset_dir, tiny_model, tiny_run  # noqa: F401

import minitx
from minitx.data import BOS_ID, EOS_ID, PAD_ID, load_pairs, pad_batch
from minitx.nn import Transformer
from minitx.translate.decoding import beam_search, beam_search_fairseq, default_max_len, greedy_decode
from minitx.translate.evaluation import report_lines, translate_sentences
from minitx.translate.training import load_run

SENTENCES = ["Ein Hund.", "Ein Mann fährt Fahrrad auf der Straße.", "Zwei Kinder spielen im Park.",
             "Eine Frau in einem roten Kleid sitzt auf einer Bank und liest ein Buch, während ein Hund schläft."]


def random_model(vocab=60, seed=0, **overrides):
    minitx.manual_seed(seed)
    options = dict(d_model=32, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=64, dropout=0.1,
                   max_len=32, share_embeddings=True, tie_output=True)
    return Transformer(vocab, vocab, **{**options, **overrides}).eval()


def random_source(vocab, lengths, seed=0):
    rng = np.random.default_rng(seed)
    return pad_batch([rng.integers(4, vocab, size=n).tolist() for n in lengths], pad_id=PAD_ID)


def log_softmax(logits):
    logits = logits - logits.max(axis=-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))


def teacher_forced_log_probs(model, src_row, output):
    """log p(. | <bos> output[:t]) for every t, by one full (uncached) decoder pass: [len + 1, V]."""
    with minitx.no_grad():
        logits = model(src_row[None], np.array([[BOS_ID] + list(output)]))
    return log_softmax(logits.numpy()[0].astype(np.float64))


@pytest.fixture(scope="module")
def tiny_batch(tiny_model):
    _, model, src_tok, tgt_tok = tiny_model
    return model, pad_batch([src_tok.encode_ids(s) for s in SENTENCES], pad_id=src_tok.pad_id)


@pytest.fixture(params=["trained", "random-init"])
def model_and_source(request, tiny_batch):
    if request.param == "trained":
        return tiny_batch
    return random_model(), random_source(60, [3, 9, 1, 14, 6])


def test_beam_of_one_is_greedy(model_and_source):
    model, src = model_and_source
    greedy = greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID)
    assert len(greedy) == len(src)
    for length_penalty in (0.0, 0.6):
        assert beam_search(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=1, length_penalty=length_penalty) == greedy


def test_greedy_output_is_the_teacher_forced_argmax(model_and_source):
    """Each greedy token is the most likely one under a full (uncached) decoder pass over the
    prefix: the incremental key/value cache gives the same distributions as no cache."""
    model, src = model_and_source
    for row, output in zip(src, greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID)):
        src_row = row[: int((row != PAD_ID).sum())]  # the real tokens; padding must not matter either
        log_probs = teacher_forced_log_probs(model, src_row, output)
        log_probs[:, [PAD_ID, BOS_ID]] = -np.inf  # never generated
        chosen = output + ([EOS_ID] if len(output) < default_max_len(model, len(src_row)) else [])
        for t, token in enumerate(chosen):
            assert log_probs[t, token] >= log_probs[t].max() - 1e-4, (t, token, output)
        assert EOS_ID not in output and PAD_ID not in output and BOS_ID not in output


@pytest.mark.parametrize("length_penalty", [0.0, 0.6, 1.0])
def test_wide_beam_is_exact_search_and_beats_greedy(length_penalty):
    """Beam search is not guaranteed to beat greedy decoding: the greedy prefix can drop out of
    a narrow beam, and every prefix that pushed it out may end worse. What is guaranteed: a
    beam wide enough to hold every hypothesis is exhaustive search, so it returns the output
    with the best score, and that score is >= the greedy output's. The score, as beam_search's
    docstring defines it, is recomputed here independently, from full teacher-forced passes:
    the sum of the tokens' log-probabilities (and of the closing <eos>, when the output ended
    before max_len) divided by lp(n). Vocabulary of 8 (4 of them special) and 3 steps: at most
    5 tokens can follow a prefix, so a beam of 5**3 = 125 holds every hypothesis."""
    vocab, steps = 8, 3
    words = [t for t in range(vocab) if t not in (PAD_ID, BOS_ID, EOS_ID)]
    improved = 0
    for seed in (3, 4, 5):
        model = random_model(vocab, seed=seed, tie_output=False, share_embeddings=False)
        src = random_source(vocab, [4, 2, 6], seed=seed)
        beam = beam_search(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=125, length_penalty=length_penalty,
                           max_len=steps)
        greedy = greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID, max_len=steps)
        for row, beam_out, greedy_out in zip(src, beam, greedy):
            src_row = row[: int((row != PAD_ID).sum())]
            # log p(next | prefix) for every prefix shorter than `steps`, from the 25 longest ones
            next_log_probs = {}
            for prefix in itertools.product(words, repeat=steps - 1):
                for t, log_probs in enumerate(teacher_forced_log_probs(model, src_row, prefix)):
                    next_log_probs[prefix[:t]] = log_probs

            def score(output):
                total = sum(next_log_probs[tuple(output[:t])][token] for t, token in enumerate(output))
                if len(output) < steps:  # it ended with <eos>; an output of `steps` tokens was cut off
                    total += next_log_probs[tuple(output)][EOS_ID]
                return total / ((5.0 + len(output) + 1) / 6.0) ** length_penalty  # n counts the <eos>

            best = max(score(c) for n in range(steps + 1) for c in itertools.product(words, repeat=n))
            assert score(beam_out) == pytest.approx(best, abs=1e-4)
            assert score(beam_out) >= score(greedy_out) - 1e-4
            improved += score(beam_out) > score(greedy_out) + 1e-4
    assert improved  # these models do have sentences where greedy decoding is not the best


def test_pad_and_bos_are_never_generated():
    """A model that prefers <pad> must not have its output cut short at it (it would be read as
    the end of the sentence); the next most likely token is taken instead."""
    model = random_model(seed=1, max_len=12)
    bias = np.zeros(60, dtype=np.float32)
    bias[[PAD_ID, BOS_ID]] = 60.0
    bias[7] = 50.0
    model.output_bias.data = bias
    src = random_source(60, [5, 3])
    assert greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID) == [[7] * 11, [7] * 11]
    assert beam_search(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=3) == [[7] * 11, [7] * 11]


# ------------------------------------------------------------------ translate_sentences


def test_empty_lines_translate_to_empty_lines(tiny_model):
    _, model, src_tok, tgt_tok = tiny_model
    lines = ["", SENTENCES[0], "   ", SENTENCES[1]]
    outputs, report = translate_sentences(model, src_tok, tgt_tok, lines)
    assert report == {"empty": 2, "truncated": 0, "capped": 0}
    assert outputs[0] == outputs[2] == ""
    assert outputs[1] and outputs[3]
    # batching sorts by length: the translations come back in the input order
    alone = [translate_sentences(model, src_tok, tgt_tok, [line])[0][0] for line in lines[1::2]]
    assert alone == outputs[1::2]


def test_a_single_string_is_refused_as_the_sentences():
    """One str would be translated character by character, one "sentence" per letter."""
    from minitx.data import BPETokenizer

    tok = BPETokenizer.train(SENTENCES * 2, vocab_size=300)
    with pytest.raises(TypeError, match=r"translate_sentences takes a list of sentences, got one str of 9 characters "
                                        r"\('Ein Hund.'\); pass a list"):
        translate_sentences(random_model(vocab=len(tok)), tok, tok, SENTENCES[0])


def test_a_sentence_in_decomposed_unicode_reaches_the_model_as_the_composed_one(monkeypatch):
    """Multi30k is written in NFC ("ä" one character); the same sentence in NFD ("a" and a combining
    diaeresis, as some macOS and PDF text is) would reach the model as bytes it never trained on."""
    import unicodedata

    from minitx.data import BPETokenizer
    from minitx.translate import evaluation

    tok = BPETokenizer.train(SENTENCES * 2, vocab_size=300)
    seen = []
    monkeypatch.setattr(evaluation, "greedy_decode", lambda model, src, *args, **kwargs: seen.append(src.tolist())
                        or [[] for _ in src])
    model = random_model(vocab=len(tok), max_len=64)  # (the sentence is 34 pieces)
    for form in ("NFC", "NFD"):
        translate_sentences(model, tok, tok, [unicodedata.normalize(form, SENTENCES[1])])
    assert seen[0] == seen[1] == [tok.encode_ids(SENTENCES[1])]


def test_too_long_sentence_is_cut_and_counted(tiny_model, recwarn):
    _, model, src_tok, tgt_tok = tiny_model
    long_line = " ".join(["Ein Hund rennt über die Wiese."] * 30)
    assert len(src_tok.encode_ids(long_line)) > model.max_len
    outputs, report = translate_sentences(model, src_tok, tgt_tok, [long_line, SENTENCES[0]], beam_size=2)
    assert report["empty"] == 0 and report["truncated"] == 1
    assert len(outputs) == 2 and outputs[0]
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]  # counted, not warned
    message = report_lines(report, model.max_len)[0]
    assert message == "1 sentence(s) longer than the model's max_len 64 tokens were cut to fit"


def test_a_translation_holding_a_line_break_stays_on_its_line(tiny_model, monkeypatch):
    """A byte-level model may write a newline or \\r byte: each becomes a space, so translate
    prints one line per input line."""
    from minitx.translate import evaluation

    _, model, src_tok, tgt_tok = tiny_model
    written = tgt_tok.encode_ids("a dog") + [4 + ord("\n")] + tgt_tok.encode_ids(" runs") + [4 + ord("\r")]
    assert tgt_tok.decode_ids(written) == "a dog\n runs\r"
    monkeypatch.setattr(evaluation, "greedy_decode", lambda model, src, *ids, **options: [written] * len(src))
    outputs, _ = translate_sentences(model, src_tok, tgt_tok, SENTENCES[:2], beam_size=1)
    assert outputs == ["a dog  runs"] * 2


def test_decoding_refuses_a_search_or_a_cap_it_cannot_run(tiny_model, tiny_batch):
    _, model, src_tok, tgt_tok = tiny_model
    with pytest.raises(ValueError, match="translate_sentences: search must be 'gnmt' or 'fairseq', got 'Fairseq'"):
        translate_sentences(model, src_tok, tgt_tok, SENTENCES[:1], beam_size=2, search="Fairseq")
    model, src = tiny_batch
    for cap in (model.max_len, -1, 2.5):
        with pytest.raises(ValueError, match=re.escape(f"decoding: max_len must be a whole number of tokens in "
                                                       f"[0, {model.max_len - 1}]")):
            greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID, max_len=cap)
    assert len(greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID, max_len=model.max_len - 1)) == len(src)


def test_a_source_of_exactly_max_len_tokens_is_cut_only_where_it_ends_with_eos(tiny_model):
    """max_len tokens fit the model's positions; with source_eos the <eos> needs one of them, so
    the sentence is cut, and the message says how long a source may be."""
    _, model, src_tok, tgt_tok = tiny_model
    words = " ".join(["Ein Hund rennt über die Wiese."] * 30).split()
    line = next(" ".join(words[:n]) for n in range(len(words))
                if len(src_tok.encode_ids(" ".join(words[:n]))) == model.max_len)
    assert translate_sentences(model, src_tok, tgt_tok, [line], beam_size=1)[1]["truncated"] == 0
    _, report = translate_sentences(model, src_tok, tgt_tok, [line], beam_size=1, source_eos=True)
    assert report["truncated"] == 1
    assert report_lines(report, model.max_len, source_eos=True)[0] == (
        "1 sentence(s) longer than 63 tokens (the model's max_len 64, less the <eos> each source ends with) were "
        "cut to fit")


@pytest.mark.parametrize("beam_size", [1, 3])
def test_outputs_that_reach_the_length_cap_are_counted(tiny_run, beam_size):
    """A model that never ends a sentence: every output stops at the cap, and is counted."""
    _, model, src_tok, tgt_tok = load_run(tiny_run, "best", device="cpu")  # a copy: the bias is changed
    bias = model.output_bias.data.copy()
    bias[10] = 100.0
    model.output_bias.data = bias
    lines = ["Ein Hund.", "", "Zwei Kinder spielen im Park."]
    outputs, report = translate_sentences(model, src_tok, tgt_tok, lines, beam_size=beam_size)
    assert report == {"empty": 1, "truncated": 0, "capped": 2}
    assert outputs[0] and outputs[2] and outputs[1] == ""
    src = pad_batch([src_tok.encode_ids(lines[0])], pad_id=src_tok.pad_id)
    assert len(greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID)[0]) == default_max_len(model, src.shape[1])
    # the cap is each sentence's own: padded beside a longer one, it is the same
    both = pad_batch([src_tok.encode_ids(lines[0]), src_tok.encode_ids(lines[2])], pad_id=src_tok.pad_id)
    assert [len(out) for out in greedy_decode(model, both, BOS_ID, EOS_ID, PAD_ID)] == \
        [default_max_len(model, src.shape[1]), default_max_len(model, len(src_tok.encode_ids(lines[2])))]
    assert report_lines(report, model.max_len)[1].startswith("2 translation(s) reached the length cap")


# ------------------------------------------------------------------ attention heatmaps


def test_attention_weights_are_distributions_over_the_source(tiny_model):
    spec = importlib.util.spec_from_file_location("plot_attention_example", REPO / "examples" / "plot_attention.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    config, model, src_tok, tgt_tok = tiny_model
    layers, src_labels, tgt_labels, translation = example.attention_for(model, src_tok, tgt_tok, SENTENCES[1], config)
    assert len(layers) == model.config["num_decoder_layers"]
    assert len(src_labels) == len(src_tok.encode_ids(SENTENCES[1])) and tgt_labels[-1] == "<eos>"
    assert translation == translate_sentences(model, src_tok, tgt_tok, [SENTENCES[1]])[0][0]
    for weights in layers:
        assert weights.shape == (model.config["num_heads"], len(tgt_labels), len(src_labels))
        assert (weights >= 0).all()
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-5)


# ---------------------------------------------------------------- a scripted model
class _Logits:
    def __init__(self, data):
        self.data = data


class ScriptedModel:
    """A stand-in decoder whose next-token logits are a fixed random function of (sentence,
    prefix): beam search can be followed hypothesis by hypothesis, with no ties. The cache
    holds each row's prefix and is reordered as the beams are."""

    max_len = 32

    def __init__(self, vocab, seed):
        self.vocab, self.seed = vocab, seed

    def eval(self):
        return self

    def logits(self, sentence, prefix):
        rng = np.random.default_rng([self.seed, sentence, len(prefix), *prefix])
        return rng.normal(scale=2.0, size=self.vocab).astype(np.float32)

    def encode(self, src):
        return np.arange(len(src))[:, None], np.ones((len(src), 1), bool)  # memory row = the sentence

    def new_cache(self):
        class Cache:
            prefixes = None

            def reorder_decoded(self, origin):
                self.prefixes = [self.prefixes[i] for i in origin]

            def reorder_memory(self, rows):  # the memory is the rows beam search passes to decode
                pass
        return Cache()

    def decode(self, tokens, memory, src_mask, cache):
        if cache.prefixes is None:
            cache.prefixes = [() for _ in range(len(tokens))]
        cache.prefixes = [p + (int(t),) for p, t in zip(cache.prefixes, tokens[:, -1])]
        rows = [self.logits(int(m[0]), p[1:]) for m, p in zip(memory, cache.prefixes)]  # p[0] is <bos>
        return _Logits(np.stack(rows)[:, None, :])


def reference_beam(model, sentence, k, max_len, length_penalty):
    """Beam search written per hypothesis, straight from beam_search's docstring: each step keeps
    the k best (score, tokens, finished) of every extension; a finished hypothesis is extended
    only by padding, at no cost; the answer is the best score / lp(length)."""
    beams = [(0.0, (), False)]
    for step in range(max_len):
        candidates = []
        for score, tokens, finished in beams:
            if finished:
                candidates.append((score, tokens + (PAD_ID,), True))
                continue
            log_probs = log_softmax(model.logits(sentence, tokens).astype(np.float64))
            for t in range(model.vocab):
                if t in (PAD_ID, BOS_ID) or (t == EOS_ID and step == 0):
                    continue
                candidates.append((score + log_probs[t], tokens + (t,), t == EOS_ID))
        beams = sorted(candidates, key=lambda c: -c[0])[:k]
        if all(finished for _, _, finished in beams):
            break

    def cut(tokens):
        return list(itertools.takewhile(lambda t: t not in (EOS_ID, PAD_ID), tokens))

    return cut(max(beams, key=lambda b: b[0] / ((5.0 + len(cut(b[1])) + 1) / 6.0) ** length_penalty)[1])


@pytest.mark.parametrize("seed", range(12))
def test_beam_search_follows_each_hypothesis_as_the_reference_does(seed):
    """Over many scripted models the batched beam search returns what a per-hypothesis beam
    search returns: its bookkeeping (which hypothesis is finished, after the beams are
    reordered) is what the tokens say."""
    model = ScriptedModel(vocab=7, seed=seed)
    src = np.ones((3, 2), np.int64)
    for k in (2, 3):
        got = beam_search(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=k, length_penalty=0.6, max_len=6)
        assert got == [reference_beam(model, s, k, 6, 0.6) for s in range(3)]


def reference_fairseq_beam(model, sentence, k, max_len, length_penalty):
    """fairseq's beam search written per hypothesis, from beam_search_fairseq's docstring: each
    step takes the 2k best extensions of the live hypotheses; those among the first k that end
    (in <eos>, or at the cap) are finished, scored score / n ^ length_penalty; the k best of the
    others go on; a sentence is done with k finished, or at the cap."""
    def cut(tokens):
        return list(itertools.takewhile(lambda t: t not in (EOS_ID, PAD_ID), tokens))

    live, finished = [(0.0, ())], []
    for step in range(max_len):
        candidates = []
        for score, tokens in live:
            log_probs = log_softmax(model.logits(sentence, tokens).astype(np.float64))
            candidates += [(score + log_probs[t], tokens + (t,)) for t in range(model.vocab)
                           if t not in (PAD_ID, BOS_ID) and not (t == EOS_ID and step == 0)]
        candidates = sorted(candidates, key=lambda c: -c[0])[:2 * k]
        at_cap = step + 1 >= max_len
        for score, tokens in candidates[:k]:
            if (tokens[-1] == EOS_ID or at_cap) and len(finished) < k:
                finished.append((score / (step + 1) ** length_penalty, cut(tokens)))
        if len(finished) >= k or at_cap:
            break
        live = [c for c in candidates if c[1][-1] != EOS_ID][:k]
    return max(finished, key=lambda f: f[0])[1] if finished else []


@pytest.mark.parametrize("seed", range(12))
def test_fairseq_beam_search_follows_each_hypothesis_as_the_reference_does(seed):
    model = ScriptedModel(vocab=7, seed=seed)
    src = np.ones((3, 2), np.int64)
    for k, length_penalty, cap in ((2, 1.0, 6), (3, 0.6, 6), (3, 1.0, 3)):
        got = beam_search_fairseq(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=k, length_penalty=length_penalty,
                                  max_len=cap)
        assert got == [reference_fairseq_beam(model, s, k, cap, length_penalty) for s in range(3)]


def test_fairseq_beam_of_one_is_greedy(model_and_source):
    model, src = model_and_source
    greedy = greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID)
    assert beam_search_fairseq(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=1) == greedy


@pytest.mark.parametrize("beam_size, search", [(1, "gnmt"), (3, "gnmt"), (3, "fairseq")])
def test_a_batch_translation_gives_each_sentence_its_own_output(tiny_model, beam_size, search):
    """Sentences are decoded in batches sorted by length, and each leaves its batch when it is
    finished: each output goes back to its own sentence. Decoded one at a time, each sentence
    gives the same translation."""
    _, _, src_tok, tgt_tok = tiny_model
    minitx.manual_seed(1)  # an untrained model: its outputs differ from sentence to sentence
    model = Transformer(src_tok.vocab_size, tgt_tok.vocab_size, d_model=32, num_heads=2, num_encoder_layers=1,
                        num_decoder_layers=1, d_ff=64, max_len=64).eval()
    sentences = [SENTENCES[i] for i in (3, 0, 2, 1, 0)]
    batched, _ = translate_sentences(model, src_tok, tgt_tok, sentences, beam_size=beam_size, max_tokens=120,
                                     search=search)
    alone = [translate_sentences(model, src_tok, tgt_tok, [s], beam_size=beam_size, search=search)[0][0]
             for s in sentences]
    assert batched == alone
    assert len(set(batched)) > 2  # distinct translations: a mix-up would show
    assert len({len(t.split()) for t in batched}) > 1  # of different lengths: sentences left the batch apart


def test_bench_decode_times_the_translations_evaluate_makes(tiny_run, tiny_model, subset_dir, tmp_path):
    """benchmarks/bench_decode.py decodes a run's test sentences as evaluate does, every repeat
    alike, and its digest is the digest of those translations."""
    _, model, src_tok, tgt_tok = tiny_model
    out = tmp_path / "decode.json"
    env = dict(os.environ, MINITX_DATA_DIR=str(subset_dir), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_decode.py"), str(tiny_run), "--checkpoint",
                           "best", "--beam-size", "2", "--sentences", "6", "--repeats", "2", "--json", str(out)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    sources = [s for s, _ in load_pairs("test_2016_flickr", "de", "en", subset_dir)[:6]]
    expected, _ = translate_sentences(model, src_tok, tgt_tok, sources, beam_size=2, length_penalty=0.6)
    assert figures["digest"] == hashlib.sha256("\n".join(expected).encode("utf-8")).hexdigest()[:16]
    assert (figures["sentences"], figures["beam_size"], len(figures["seconds"])) == (6, 2, 2)
    assert figures["digest"] in done.stdout


@pytest.mark.parametrize("beam_size", [None, 1, 3])
def test_a_cap_of_zero_and_an_empty_batch_give_empty_outputs(tiny_model, beam_size):
    """No step runs for a cap of 0: every sentence gets an empty output; an empty batch gets an
    empty list."""
    _, model, _, _ = tiny_model

    def decode(src, max_len=None):
        if beam_size is None:
            return greedy_decode(model, src, BOS_ID, EOS_ID, PAD_ID, max_len=max_len)
        return beam_search(model, src, BOS_ID, EOS_ID, PAD_ID, beam_size=beam_size, max_len=max_len)

    src = pad_batch([[5, 6, 7], [8, 9]], pad_id=PAD_ID)
    assert decode(src, max_len=0) == [[], []]
    assert decode(np.zeros((0, 3), np.int64)) == []
