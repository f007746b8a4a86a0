"""Translating many sentences in batches, and scoring them with sacreBLEU."""
from __future__ import annotations

import re
import unicodedata

from minitx.data import WordTokenizer, pad_batch
from minitx.data.tokenizer import check_sentences
from minitx.data.word import detokenize, split_words
from minitx.translate.decoding import beam_search, beam_search_fairseq, default_max_len, greedy_decode


def translate_sentences(model, src_tokenizer, tgt_tokenizer, sentences, beam_size=1, length_penalty=0.6,
                        max_tokens=6000, progress=None, text=None, search="gnmt", model_form=False, source_eos=False):
    """Translate a list of sentences; returns (translations, report), and with ``model_form`` the
    translations as the model wrote them too (before ``text`` turned them into text).

    ``text``, the run's TextForm (minitx.translate.text; None: as-is), writes each sentence in the
    form the model reads and turns each translation back into text. ``search``: the beam search,
    'gnmt' (decoding.beam_search) or 'fairseq' (decoding.beam_search_fairseq). ``source_eos``:
    each source ends with <eos>, as a run with that setting trained (training.encode_pairs).

    Sentences are sorted by length and decoded in batches of about ``max_tokens`` source
    tokens. Documented, counted behaviours (in ``report``; ``report_lines`` words them): an
    empty (or blank) sentence translates to an empty string without running the model
    ('empty'); a sentence with more tokens than the model's positions is cut to fit
    ('truncated'); a translation that reaches the length cap (``default_max_len``: source
    length + 50, at most max_len - 1 tokens) without producing <eos> is cut there ('capped'). A
    translation is one line: a line break a byte-level model wrote ('\\n', '\\r', ...) becomes a
    space, so the translations keep the sentences' lines. Each sentence is read in Unicode's
    composed form (NFC), the form every Multi30k file is written in: the same text decomposed (NFD:
    "a" and a combining diaeresis for "ä", as some macOS and PDF text is) would reach the model as
    byte tokens or <unk>s it never trained on.
    """
    check_sentences(sentences, "translate_sentences")
    sentences = [unicodedata.normalize("NFC", line) for line in sentences]
    if search not in ("gnmt", "fairseq"):
        raise ValueError(f"translate_sentences: search must be 'gnmt' or 'fairseq', got {search!r}")
    limit = model.max_len
    encoded, report = [], {"empty": 0, "truncated": 0, "capped": 0}
    for line in (sentences if text is None else text.source(sentences)):
        ids = src_tokenizer.encode_ids(line) if line.strip() else []
        if not line.strip():
            report["empty"] += 1
        elif len(ids) + source_eos > limit:
            ids = ids[:limit - source_eos]
            report["truncated"] += 1
        encoded.append(ids + [src_tokenizer.eos_id] if ids and source_eos else ids)

    outputs = [""] * len(sentences)
    order = sorted((i for i, ids in enumerate(encoded) if ids), key=lambda i: len(encoded[i]))
    for chunk in _length_batches(order, encoded, max_tokens // max(beam_size, 1)):
        src = pad_batch([encoded[i] for i in chunk], pad_id=src_tokenizer.pad_id)
        if beam_size > 1:
            search_beams = beam_search_fairseq if search == "fairseq" else beam_search
            hyps = search_beams(model, src, tgt_tokenizer.bos_id, tgt_tokenizer.eos_id, tgt_tokenizer.pad_id,
                                beam_size=beam_size, length_penalty=length_penalty)
        else:
            hyps = greedy_decode(model, src, tgt_tokenizer.bos_id, tgt_tokenizer.eos_id, tgt_tokenizer.pad_id)
        for i, ids in zip(chunk, hyps):
            # a hypothesis may open with a word-boundary piece: no leading space in the output
            outputs[i] = _LINE_BREAKS.sub(" ", tgt_tokenizer.decode_ids(ids)).strip()
            if isinstance(tgt_tokenizer, WordTokenizer):  # "a dog ." -> "a dog.", as text is written
                outputs[i] = detokenize(outputs[i])
            # no <eos> within the sentence's cap (it is never in ids)
            report["capped"] += len(ids) >= default_max_len(model, len(encoded[i]))
        if progress is not None:
            progress.update(len(chunk))
    translations = outputs if text is None else text.output(outputs)
    return (translations, report, outputs) if model_form else (translations, report)


# what str.splitlines() splits at: one of them inside a translation would make two lines of it
_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def report_lines(report, max_len, source_eos=False) -> list[str]:
    """One line for each nonzero count of a translate_sentences report (for stderr, logs);
    ``source_eos`` as it was decoded with (the <eos> takes one of the max_len positions)."""
    lines = []
    if report.get("empty"):
        lines.append(f"{report['empty']} empty line(s) were left empty")
    if report.get("truncated"):
        limit = (f"{max_len - 1} tokens (the model's max_len {max_len}, less the <eos> each source ends with)"
                 if source_eos else f"the model's max_len {max_len} tokens")
        lines.append(f"{report['truncated']} sentence(s) longer than {limit} were cut to fit")
    if report.get("capped"):
        lines.append(f"{report['capped']} translation(s) reached the length cap (source length + 50, at most "
                     f"{max_len - 1} tokens) without ending and were cut there")
    return lines


def bleu_scores(hypotheses, references, lang: str | None = None, hypothesis_tokens=None) -> dict:
    """Corpus BLEU of detokenized hypotheses against their references, three ways (four with
    ``lang``, the target language):

    bleu, signature                    sacreBLEU: cased, 13a tokenization (the standard)
    bleu_lowercase, signature_lowercase  the same, lowercased
    bleu_tokens_lowercase, signature_tokens  the measure of the PyTorch translation tutorials
        (torchtext's ``bleu_score``): corpus BLEU-4 (n-gram orders 1-4, equal weights 1/4,
        brevity penalty, no smoothing: 0 when an order has no match) on lowercased word
        tokens. Hypotheses and references are both cut by the word tokenizer's rule
        (``split_words``: runs of letters/digits and single punctuation marks, lowercased),
        standing in for the tutorials' spaCy tokenizer, then scored by sacreBLEU with
        tokenize="none", smooth_method="none".

    bleu_moses_lowercase, signature_moses  the measure of the published Multi30k tables (fairseq's
        BLEU-4 on the lowercased, Moses-tokenized test set, as in Wu et al. 2021): see
        ``moses_bleu`` (which scores ``hypothesis_tokens`` where given: the model's own tokens in
        that form). Only with ``lang``; needs sacremoses (``minitx[metrics]``).

    A word-level model's outputs are detokenized by translate_sentences before they get here,
    so sacreBLEU's 13a tokenization sees text as it is written.
    """
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"bleu: {len(hypotheses)} hypotheses for {len(references)} references")
    cased = sacrebleu.metrics.BLEU()
    lower = sacrebleu.metrics.BLEU(lowercase=True)
    # force: these are tokens on purpose (no "forgot to detokenize" warning); lowercase: the tokens
    # are lowercased already (lowercasing again changes nothing), and the signature then says
    # case:lc, as it must for a score compared with published tables, not case:mixed
    tokens = sacrebleu.metrics.BLEU(lowercase=True, tokenize="none", smooth_method="none", force=True)
    score = cased.corpus_score(hypotheses, [references])
    score_lc = lower.corpus_score(hypotheses, [references])
    score_tok = tokens.corpus_score([" ".join(split_words(h)) for h in hypotheses],
                                    [[" ".join(split_words(r)) for r in references]])
    published = moses_bleu(hypotheses, references, lang, hypothesis_tokens) if lang is not None else {}
    return {
        **published,
        "bleu": round(float(score.score), 2),
        "bleu_lowercase": round(float(score_lc.score), 2),
        "bleu_tokens_lowercase": round(float(score_tok.score), 2),
        "signature": str(cased.get_signature()),
        "signature_lowercase": str(lower.get_signature()),
        "signature_tokens": str(tokens.get_signature()) + "|lowercased word tokens",
        "detail": str(score),
    }


def moses_available() -> bool:
    """Whether sacremoses is installed, so that moses_bleu can run (``minitx[metrics]``)."""
    import importlib.util

    return importlib.util.find_spec("sacremoses") is not None


MOSES_HINT = "pip install 'minitx[metrics]' to also print the published tables' BLEU (lowercased, Moses-tokenized)"


def moses_bleu(hypotheses, references, lang: str, hypothesis_tokens=None) -> dict:
    """BLEU as the published Multi30k results measure it: the references in the published
    systems' form (``text.published_tokens``: lowercased, punctuation normalized, cut by the
    Moses tokenizer of ``lang``, no escaping, as the multi30k-wmt18 release's test files), then
    corpus BLEU-4 with no smoothing on those tokens, as fairseq-generate and multi-bleu.perl
    compute it on a tokenized test set. The hypotheses are put in the same form, unless
    ``hypothesis_tokens`` gives them in it already: a model that writes the published form (text
    'moses-lowercase') is scored on the tokens it wrote, as fairseq scores them, not on those
    tokens detokenized and cut again (which glues some back together: "strand . und" is
    detokenized to "strand. und", which Moses then cuts as "strand." "und").

    How it differs from sacreBLEU's default (``bleu``): sacreBLEU keeps case and cuts with its own
    13a rules, which split off only some punctuation, where Moses also splits clitics ("man 's")
    and follows language-specific rules; more, shorter tokens usually score higher. On test2016
    the Moses-cut German references are 12,103 tokens, the reference length the published
    numbers report (Wu et al.'s fairseq log), which is how this choice of options was checked.

    Returns {"bleu_moses_lowercase": score, "signature_moses": how it was computed, "detail_moses":
    sacreBLEU's line with the n-gram precisions and hyp_len/ref_len}.
    """
    import sacrebleu

    from minitx.translate.text import moses_tools, published_tokens

    tools = moses_tools(lang)
    if hypothesis_tokens is not None:
        if len(hypothesis_tokens) != len(hypotheses):
            raise ValueError(f"moses_bleu: {len(hypothesis_tokens)} tokenized hypotheses for {len(hypotheses)}")
        hyps, how = [" ".join(line.split()) for line in hypothesis_tokens], "references "
    else:
        hyps, how = published_tokens(hypotheses, lang, tools), ""
    # lowercase: as the tokens are already (bleu_scores says why it is asked for all the same)
    metric = sacrebleu.metrics.BLEU(lowercase=True, tokenize="none", smooth_method="none", force=True)
    score = metric.corpus_score(hyps, [published_tokens(references, lang, tools)])
    said = f"{how}lowercased, punctuation normalized, sacremoses MosesTokenizer(lang={lang!r})"
    return {"bleu_moses_lowercase": round(float(score.score), 2),
            "signature_moses": f"{metric.get_signature()}|{said}"
                               + ("; hypotheses as the model wrote them" if how else ""),
            "detail_moses": str(score)}


def _length_batches(order, encoded, budget):
    """Consecutive runs of ``order`` (sorted by length) whose padded size stays <= budget."""
    chunk = []
    for i in order:
        if chunk and (len(chunk) + 1) * len(encoded[i]) > budget:
            yield chunk
            chunk = []
        chunk.append(i)
    if chunk:
        yield chunk
