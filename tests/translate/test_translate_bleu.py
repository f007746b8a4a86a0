"""bleu_scores: sacreBLEU corpus BLEU, cased and lowercased, with signatures."""
import pytest
import sacrebleu

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
