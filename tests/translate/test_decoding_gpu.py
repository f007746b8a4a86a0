"""Decoding on a GPU: the tiny run's model, loaded onto the device, translates a batch in which
sentences finish at different steps and leave it (CuPy-backed memory and cache rows picked with
NumPy indices) as it translates each sentence alone, by minitx's beam search and by fairseq's (as
the published recipes decode). Skipped without a GPU."""
import pytest
from translate_kit import subset_dir, tiny_run  # noqa: F401

from minitx.translate.evaluation import translate_sentences
from minitx.translate.training import load_run

pytestmark = pytest.mark.gpu

SENTENCES = ["Ein Hund.", "Ein Mann fährt Fahrrad auf der Straße.", "Zwei Kinder spielen im Park.",
             "Eine Frau in einem roten Kleid sitzt auf einer Bank und liest ein Buch, während ein Hund schläft.",
             "Ein Junge springt."]


@pytest.mark.parametrize("beam_size", [1, 3])
def test_a_batch_on_the_gpu_translates_each_sentence_as_it_does_alone(tiny_run, beam_size):
    _, model, src_tok, tgt_tok = load_run(tiny_run, "best", device="cuda")
    batched, _ = translate_sentences(model, src_tok, tgt_tok, SENTENCES, beam_size=beam_size)
    alone = [translate_sentences(model, src_tok, tgt_tok, [s], beam_size=beam_size)[0][0] for s in SENTENCES]
    assert batched == alone
    assert len({len(t.split()) for t in batched}) > 1  # of different lengths: sentences left the batch apart


def test_fairseq_search_on_the_gpu_translates_each_sentence_as_alone_and_as_the_cpu(tiny_run):
    """fairseq's search as multi30k-tiny-published and best-lc decode (sources ending in <eos>,
    length penalty 1), an empty sentence among the others."""
    how = dict(beam_size=4, length_penalty=1.0, search="fairseq", source_eos=True)
    sentences = SENTENCES + [""]
    _, model, src_tok, tgt_tok = load_run(tiny_run, "best", device="cuda")
    batched, report = translate_sentences(model, src_tok, tgt_tok, sentences, **how)
    alone = [translate_sentences(model, src_tok, tgt_tok, [s], **how)[0][0] for s in sentences]
    assert batched == alone and report["empty"] == 1
    assert len({len(t.split()) for t in batched if t}) > 1
    _, cpu_model, _, _ = load_run(tiny_run, "best", device="cpu")
    on_cpu, _ = translate_sentences(cpu_model, src_tok, tgt_tok, sentences, **how)
    # (the GPU's sums may round differently: a near-tie could pick another token; most must agree)
    assert sum(g == c for g, c in zip(batched, on_cpu)) >= len(sentences) - 1
