"""bleu_scores: sacreBLEU corpus BLEU, cased and lowercased, the tutorials' token BLEU; detokenizing
word-level output."""
import logging
import math
from collections import Counter

import pytest
import sacrebleu

from minitx.data.word import detokenize, split_words
from minitx.translate.evaluation import bleu_scores

REFERENCES = ["A dog runs across the green grass.", "Two men are playing soccer in a park.",
              "A woman in a red dress is reading a book.", "The children smile at the camera."]
HYPOTHESES = ["A dog is running over the grass.", "two men play football in the park.",
              "A woman in a red dress reads a book.", "Children are smiling."]


def test_scores_match_sacrebleu_computed_directly():
    scores = bleu_scores(HYPOTHESES, REFERENCES)
    cased = sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES])
    lower = sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES], lowercase=True)
    assert scores["bleu"] == pytest.approx(cased.score, abs=0.005)
    assert scores["bleu_lowercase"] == pytest.approx(lower.score, abs=0.005)
    assert 0 < scores["bleu"] < scores["bleu_lowercase"] < 100  # "two men" only matches lowercased
    assert scores["detail"] == str(cased)
    assert scores["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert scores["signature_lowercase"].startswith("nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:")


def test_perfect_and_hopeless_translations():
    assert bleu_scores(REFERENCES, REFERENCES)["bleu"] == 100.0
    assert bleu_scores([r.upper() for r in REFERENCES], REFERENCES)["bleu_lowercase"] == 100.0
    assert bleu_scores(["xyz"] * len(REFERENCES), REFERENCES)["bleu"] == 0.0


def test_counts_must_match():
    with pytest.raises(ValueError, match="bleu: 3 hypotheses for 4 references"):
        bleu_scores(HYPOTHESES[:3], REFERENCES)


def tutorial_bleu(hypotheses, references):
    """torchtext's bleu_score, written out: corpus BLEU-4 over lowercased word tokens, clipped
    n-gram counts summed over the corpus, equal weights, brevity penalty, 0 if an order has
    no match."""
    hyps = [split_words(h) for h in hypotheses]
    refs = [split_words(r) for r in references]
    log_precision = 0.0
    for n in range(1, 5):
        matched = total = 0
        for h, r in zip(hyps, refs):
            h_grams = Counter(tuple(h[i:i + n]) for i in range(len(h) - n + 1))
            r_grams = Counter(tuple(r[i:i + n]) for i in range(len(r) - n + 1))
            matched += sum(min(c, r_grams[g]) for g, c in h_grams.items())
            total += max(len(h) - n + 1, 0)
        if matched == 0:
            return 0.0
        log_precision += math.log(matched / total) / 4
    c, r = sum(map(len, hyps)), sum(map(len, refs))
    return 100 * math.exp(min(0.0, 1 - r / c) + log_precision)


def test_the_tutorials_token_bleu_is_corpus_bleu4_on_lowercased_word_tokens():
    hypotheses = HYPOTHESES + ["A dog is running across the green grass."]
    references = REFERENCES + ["A dog is running across the green grass!"]
    scores = bleu_scores(hypotheses, references)
    assert scores["bleu_tokens_lowercase"] == pytest.approx(tutorial_bleu(hypotheses, references), abs=0.005)
    assert 0 < scores["bleu_tokens_lowercase"] < 100
    assert "tok:none|smooth:none" in scores["signature_tokens"]
    assert "|case:lc|" in scores["signature_tokens"]  # (the tokens are lowercased: it said case:mixed)
    assert bleu_scores(["a b c"], ["a b c d e"])["bleu_tokens_lowercase"] == 0.0  # no 4-gram: no smoothing


def test_word_level_output_is_detokenized_before_sacrebleu(caplog):
    """A word-level model writes "a man in a t - shirt ." (spaced tokens, lowercased): after
    detokenize, a perfect output scores 100 lowercased, as a perfect BPE output would, and
    sacreBLEU sees no tokenized text (no "forgot to detokenize" warning, even for 100 lines)."""
    references = ["A man in a t-shirt doesn't smile.", "Two dogs (one black) play.",
                  'She says "hello" to the kids, then leaves!'] * 40
    word_output = [" ".join(split_words(r)) for r in references]  # what WordTokenizer.decode gives
    assert word_output[0] == "a man in a t - shirt doesn ' t smile ."
    detokenized = [detokenize(line) for line in word_output]
    assert detokenized[:3] == [r.lower() for r in references[:3]]
    assert [split_words(line) for line in detokenized] == [line.split() for line in word_output]
    with caplog.at_level(logging.WARNING):
        scores = bleu_scores(detokenized, references)
    assert scores["bleu_lowercase"] == scores["bleu_tokens_lowercase"] == 100.0
    assert "detokenize" not in caplog.text
    assert bleu_scores(word_output, references)["bleu_lowercase"] < 100.0  # spaced tokens score lower


# ---------------------------------------------------------------- the published metric


def test_the_published_metric_by_hand():
    """'A man's dog runs.' against 'a man's dog ran.': lowercased and Moses-cut, both are six
    tokens ("a man 's dog runs ."), with 5/6, 3/5, 2/4 and 1/3 of their 1- to 4-grams matched and
    no brevity penalty: BLEU = 100 * (5/6 * 3/5 * 2/4 * 1/3) ** (1/4) = 100 / 12 ** (1/4)."""
    pytest.importorskip("sacremoses")
    scores = bleu_scores(["a man's dog ran."], ["A man's dog runs."], lang="en")
    assert scores["bleu_moses_lowercase"] == round(100 / 12 ** 0.25, 2) == 53.73
    assert "83.3/60.0/50.0/33.3" in scores["detail_moses"] and "hyp_len = 6 ref_len = 6" in scores["detail_moses"]
    assert "tok:none" in scores["signature_moses"] and "MosesTokenizer(lang='en')" in scores["signature_moses"]
    assert "|case:lc|" in scores["signature_moses"]  # (lowercased before scoring: it said case:mixed)
    # sacreBLEU's 13a keeps "man's" whole: five tokens, another score
    assert scores["bleu_lowercase"] != scores["bleu_moses_lowercase"]


def test_a_model_writing_the_published_form_is_scored_on_its_own_tokens():
    """A 'moses-lowercase' model's tokens are what fairseq scores. Detokenized and cut again, a
    period inside a line ("wiese . ein") would be glued to its word ("wiese." "ein"): 71.26, where
    the tokens written score 82.65 (15 tokens against the references' 13, precisions by hand:
    13/15, 11/13, 9/11, 7/9)."""
    pytest.importorskip("sacremoses")
    from minitx.translate.evaluation import moses_bleu
    from minitx.translate.text import TextForm

    references = ["Ein Hund läuft über die Wiese.", "Zwei Männer sitzen am Strand."]
    written = ["ein hund läuft über die wiese . ein hund", "zwei männer sitzen am strand ."]
    shown = TextForm("moses-lowercase", "en", "de").output(written)
    assert shown == ["ein hund läuft über die wiese. ein hund", "zwei männer sitzen am strand."]
    scores = bleu_scores(shown, references, lang="de", hypothesis_tokens=written)
    by_hand = 100 * (13 / 15 * 11 / 13 * 9 / 11 * 7 / 9) ** 0.25
    assert scores["bleu_moses_lowercase"] == round(by_hand, 2) == 82.65
    assert "hyp_len = 15 ref_len = 13" in scores["detail_moses"]
    assert scores["signature_moses"].endswith("; hypotheses as the model wrote them")
    assert moses_bleu(shown, references, "de")["bleu_moses_lowercase"] == 71.26  # cut again


def test_the_published_references_have_their_punctuation_normalized():
    """As the release's files: normalize-punctuation moves an English period into its quotes
    ('"93".' -> '" 93 . "'), so output written in that form matches the reference exactly."""
    pytest.importorskip("sacremoses")
    from minitx.translate.text import published_tokens

    reference = 'A kid crosscountry skis wearing the number "93".'
    assert published_tokens([reference], "en") == ['a kid crosscountry skis wearing the number " 93 . "']
    scores = bleu_scores(["x"], [reference], lang="en", hypothesis_tokens=published_tokens([reference], "en"))
    assert scores["bleu_moses_lowercase"] == 100.0


def test_the_published_metric_is_only_computed_for_a_language():
    assert "bleu_moses_lowercase" not in bleu_scores(HYPOTHESES, REFERENCES)


def test_the_published_metric_cuts_the_test_references_to_the_published_length():
    """The German test2016 references, lowercased and Moses-cut, are the 12,103 tokens that
    Wu et al. 2021's fairseq log reports as reflen (their 41.02)."""
    pytest.importorskip("sacremoses")
    import gzip
    import os
    from pathlib import Path

    path = Path(os.environ.get("MINITX_DATA_DIR", "")) / "test_2016_flickr.de.gz"
    if not path.is_file():
        pytest.skip("Multi30k test2016 not found (MINITX_DATA_DIR)")
    references = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    scores = bleu_scores(references, references, lang="de")
    assert scores["bleu_moses_lowercase"] == 100.0
    assert "ref_len = 12103" in scores["detail_moses"]


def test_a_word_tokenizer_model_in_the_published_form_is_scored_on_moses_tokens(monkeypatch):
    """A word tokenizer's output is detokenized ("dog ." -> "dog.") and its tokens are not
    Moses's: its published BLEU tokenizes the text again. A decoder that writes each reference
    in the model's form must score 100 (it scored 78.78 on the detokenized words)."""
    pytest.importorskip("sacremoses")
    import numpy as np

    from minitx.data import WordTokenizer
    from minitx.nn import Transformer
    from minitx.translate import evaluation
    from minitx.translate.text import TextForm
    from minitx.translate.training import evaluate_split

    pairs = [("Ein Hund läuft über die Wiese.", "A dog runs across the meadow."),
             ("Zwei Männer sitzen am Strand.", "Two men sit on the beach."),
             ("Eine Frau, die ein Buch liest.", "A woman, who is reading a book."),
             ("Kinder spielen im Park, nicht wahr?", "Children play in the park, don't they?")]
    text = TextForm("moses-lowercase", "de", "en", lowercase_output=True)
    model_src, model_tgt = zip(*text.pairs(pairs))
    src_tok, tgt_tok = WordTokenizer.train(model_src, min_freq=1), WordTokenizer.train(model_tgt, min_freq=1)
    written = {tuple(src_tok.encode_ids(s)): tgt_tok.encode_ids(t) for s, t in zip(model_src, model_tgt)}

    def oracle(model, src, bos_id, eos_id, pad_id, **options):
        return [written[tuple(int(t) for t in row if t != pad_id)] for row in np.asarray(src)]

    monkeypatch.setattr(evaluation, "greedy_decode", oracle)
    model = Transformer(src_tok.vocab_size, tgt_tok.vocab_size, d_model=8, num_heads=1, num_encoder_layers=1,
                        num_decoder_layers=1, d_ff=8, max_len=64).eval()
    scores = evaluate_split(model, src_tok, tgt_tok, pairs, beam_size=1, length_penalty=0.6, progress=False,
                            lang="en", text=text)
    assert scores["bleu_moses_lowercase"] == 100.0
    assert not scores["signature_moses"].endswith("as the model wrote them")
