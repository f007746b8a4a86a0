"""The text forms (minitx.translate.text): what the model reads and writes, and what comes back.

The expected strings were written by hand from the Moses scripts' rules (lowercase.perl, then
normalize-punctuation.perl, then tokenizer.perl without escaping): punctuation split off, German
low-high quotes made plain, an English clitic split ("'s"), and the release's English rule that
moves a full stop inside a closing quote.
"""
import json
import sys

import pytest

from minitx.data import multi30k
from minitx.translate.evaluation import translate_sentences
from minitx.translate.recipes import RECIPES, build_config
from minitx.translate.text import TEXT_FORMS, TextForm
from minitx.translate.training import train
from translate_kit import DATA_DIR, SMALL, no_network, small_subset_dir, subset_dir  # noqa: F401

pytest.importorskip("sacremoses")


def test_as_is_leaves_every_line_alone():
    form = TextForm("as-is", "de", "en")
    lines = ["Ein Hund, der läuft.", "  two  spaces ", ""]
    assert form.source(lines) == form.target(lines) == form.output(lines) == lines
    assert form.pairs([("A", "B")]) == [("A", "B")]


def test_moses_lowercase_writes_each_language_as_the_published_files_do():
    form = TextForm("moses-lowercase", "en", "de")
    assert form.source(["A man's dog, running \"fast\".", "McDonald's GameCube"]) == \
        ["a man 's dog , running \" fast . \"", "mcdonald 's gamecube"]
    assert form.target(["Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.",
                        "Auf dem Schild steht: „Welcome Bikers“."]) == \
        ["ein mann mit einem orangefarbenen hut , der etwas anstarrt .",
         "auf dem schild steht : \" welcome bikers \" ."]
    assert form.pairs([("Two dogs.", "Zwei Hunde.")]) == [("two dogs .", "zwei hunde .")]


def test_moses_lowercase_output_is_detokenized_text():
    form = TextForm("moses-lowercase", "en", "de")
    assert form.output(["ein hund , der läuft .", "er sagt : \" hallo \" .", ""]) == \
        ["ein hund, der läuft.", "er sagt: \"hallo\".", ""]


def test_moses_lowercase_round_trips_the_validation_text():
    """Written in the model's form and back, almost every validation sentence is itself lowercased:
    what differs is what normalizing changed (quotes, doubled spaces)."""
    lines = multi30k.read_lines(DATA_DIR / "val.de.gz") if (DATA_DIR / "val.de.gz").is_file() else None
    if lines is None:
        pytest.skip(f"Multi30k not found in {DATA_DIR}")
    form = TextForm("moses-lowercase", "en", "de")
    back = form.output(form.target(lines))
    same = sum(b == line.lower() for b, line in zip(back, lines))
    assert same >= 0.97 * len(lines), (same, len(lines))


def test_an_unknown_form_and_a_missing_sacremoses_are_named(monkeypatch):
    with pytest.raises(ValueError, match="text form 'lower' is not one of as-is, moses-lowercase"):
        TextForm("lower", "de", "en")
    monkeypatch.setitem(sys.modules, "sacremoses", None)
    with pytest.raises(ImportError, match=r"the published Multi30k text needs sacremoses.*minitx\[metrics\]"):
        TextForm("moses-lowercase", "de", "en")
    TextForm("as-is", "de", "en")  # needs nothing


def test_every_form_is_a_configuration_choice():
    assert set(TEXT_FORMS) == {"as-is", "moses-lowercase"}
    assert build_config(None)["text"] == "as-is"
    assert RECIPES["multi30k-tiny-published"]["text"] == "moses-lowercase"


def test_translate_sentences_reads_and_writes_through_the_form():
    """The model sees the source in the run's form; its output comes back detokenized."""
    seen = []

    class Tokenizer:
        pad_id, bos_id, eos_id = 0, 1, 2

        def encode_ids(self, text):
            seen.append(text)
            return [3] * len(text.split())

        def decode_ids(self, ids):
            return "ein hund , der läuft ."

    class Model:
        max_len = 64

    import minitx.translate.evaluation as evaluation
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(evaluation, "greedy_decode", lambda model, src, *ids: [[5, 6]] * len(src))
        outputs, _ = translate_sentences(Model(), Tokenizer(), Tokenizer(), ["A dog, running."],
                                         text=TextForm("moses-lowercase", "en", "de"))
    assert seen == ["a dog , running ."]
    assert outputs == ["ein hund, der läuft."]


def test_sources_end_with_eos_where_the_run_reads_them_so():
    """source_eos: training's pairs and translate_sentences' batches both end each source with
    <eos> (a cut source keeps it, within the model's positions); an empty line stays empty."""
    from minitx.translate.training import encode_fitting

    class Tokenizer:
        pad_id, bos_id, eos_id = 0, 1, 2

        def encode_ids(self, text):
            return [3] * len(text.split())

        def decode_ids(self, ids):
            return "x"

    class Model:
        max_len = 4

    tok = Tokenizer()
    src, tgt, dropped, empty = encode_fitting([("a b", "c"), ("", "c"), ("a b c d", "c")], tok, tok, 4,
                                              source_eos=True)
    assert src == [[3, 3, 2]] and dropped == 1 and empty == [(1, 0)]  # (a b c d <eos>: five positions)
    seen = []
    import minitx.translate.evaluation as evaluation
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(evaluation, "greedy_decode", lambda model, src, *ids: seen.extend(src.tolist()) or [[5]] * len(src))
        outputs, report = translate_sentences(Model(), tok, tok, ["a b", "", "a b c d e"], source_eos=True)
    assert sorted(seen) == sorted([[3, 3, 2, 0], [3, 3, 3, 2]]) and outputs == ["x", "", "x"]
    assert report["truncated"] == 1 and report["empty"] == 1


def test_a_run_with_source_eos_is_evaluated_as_it_was_trained(small_subset_dir, tmp_path, capsys, monkeypatch):
    """The run's test decoding and evaluate's both read source_eos from the run."""
    import minitx.translate.evaluation as evaluation
    import minitx.translate.training as training
    from minitx.translate.__main__ import main

    asked, real = [], evaluation.translate_sentences

    def spy(*args, **kwargs):
        asked.append(kwargs.get("source_eos"))
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "translate_sentences", spy)
    config = build_config(None, **SMALL, source_eos=True, data_dir=str(small_subset_dir),
                          output_dir=str(tmp_path / "run"))
    results = train(config, progress=False)
    assert json.loads((tmp_path / "run" / "config.json").read_text())["source_eos"] is True
    assert main(["evaluate", "--run", str(tmp_path / "run"), "--data-dir", str(small_subset_dir), "--no-progress",
                 "--checkpoint", results["checkpoint"]]) == 0
    assert f"BLEU {results['bleu']:.2f}" in capsys.readouterr().out
    assert asked == [True, True]


def test_a_moses_lowercase_run_learns_lowercase_tokens_and_scores_against_the_corpus(small_subset_dir, tmp_path):
    config = build_config(None, **SMALL, text="moses-lowercase", data_dir=str(small_subset_dir),
                          output_dir=str(tmp_path / "run"))
    results = train(config, progress=False)
    assert results["text"] == "moses-lowercase"
    from minitx.data import load_tokenizer

    tokenizer = load_tokenizer(tmp_path / "run" / "tokenizer.src.json")
    learned = [piece for piece in tokenizer.vocab.tokens if not piece.startswith("<")]
    assert learned and not any(ch.isupper() for piece in learned for ch in piece)
    assert results["example"]["reference"] == multi30k.read_lines(small_subset_dir / "test_2016_flickr.en.gz")[0]
    assert results["example"]["translation"] == results["example"]["translation"].lower()


def test_a_lowercase_form_says_which_scores_to_read():
    assert TextForm("as-is", "de", "en").score_note() is None
    assert "lowercased and Moses-tokenized scores" in TextForm("moses-lowercase", "de", "en").score_note()
    # a word tokenizer that lowercases (seed004-small's) writes lowercase translations in any form
    import minitx.translate.training as training

    word = training.text_form(build_config("seed004-small"))
    assert word.lowercase and word.score_note().startswith("a lowercasing word tokenizer: the translations are")
    assert not training.text_form(build_config("cpu-quick")).lowercase


@pytest.mark.parametrize("text", ["as-is", "moses-lowercase"])
def test_the_published_metric_scores_the_tokens_a_moses_lowercase_model_wrote(text, monkeypatch):
    """evaluate_split hands moses_bleu the model's own tokens where they are the published form;
    an as-is model's text is cut as the references are."""
    import minitx.translate.training as training

    from minitx.translate.evaluation import moses_bleu

    written = ["ein hund läuft über die wiese . ein hund", "zwei männer sitzen am strand ."]
    references = ["Ein Hund läuft über die Wiese.", "Zwei Männer sitzen am Strand."]
    form = TextForm(text, "en", "de")
    shown = form.output(written)
    monkeypatch.setattr(training, "translate_sentences", lambda *args, **kwargs: (shown, {"empty": 0}, written))
    scores = training.evaluate_split(None, None, None, list(zip(["x", "y"], references)), 1, 0.6, progress=False,
                                     lang="de", text=form)
    tokens = written if text == "moses-lowercase" else None
    assert scores["bleu_moses_lowercase"] == moses_bleu(shown, references, "de", tokens)["bleu_moses_lowercase"]
    assert scores["signature_moses"].endswith("as the model wrote them") == (text == "moses-lowercase")


@pytest.mark.parametrize("text, logged", [("as-is", 11.0), ("moses-lowercase", 22.0)])
def test_validation_bleu_is_the_score_that_measures_the_run(text, logged, small_subset_dir, tmp_path, monkeypatch):
    """A lowercase run logs its lowercased validation BLEU: its cased one compares lowercase with cased."""
    import minitx.translate.training as training

    real = training.evaluate_split

    def scored(*args, **kwargs):
        scores = real(*args, **kwargs)
        return {**scores, "bleu": 11.0, "bleu_lowercase": 22.0} if kwargs.get("lang") is None else scores

    monkeypatch.setattr(training, "evaluate_split", scored)
    config = build_config(None, **{**SMALL, "bleu_every": 1}, text=text, data_dir=str(small_subset_dir),
                          output_dir=str(tmp_path / "run"))
    train(config, progress=False)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert [h["val_bleu"] for h in history if "val_bleu" in h] == [logged]
