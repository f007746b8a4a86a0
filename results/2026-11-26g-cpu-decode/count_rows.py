"""How many decoder rows the decoding of test2016 computes, against how many it would compute if every
batch ran whole to its last step (as before finished sentences left the batch): run with the tree after."""
import sys

from minitx.data import load_pairs
from minitx.translate import decoding
from minitx.translate.evaluation import translate_sentences
from minitx.translate.training import load_run

config, model, src_tok, tgt_tok = load_run(sys.argv[1], "final", "cpu")
sources = [source for source, _ in load_pairs("test_2016_flickr", config["src_lang"], config["tgt_lang"], None)]
for k in (config["beam_size"], 1):
    steps, step_log_probs = [], decoding._step_log_probs

    def counting(model, tokens, memory, src_mask, cache):
        steps.append((len(tokens), cache.length))  # rows this step; cache.length 0: a batch's first step
        return step_log_probs(model, tokens, memory, src_mask, cache)

    decoding._step_log_probs = counting
    translate_sentences(model, src_tok, tgt_tok, sources, beam_size=k)
    decoding._step_log_probs = step_log_probs
    whole = computed = first = 0
    for rows, length in steps:
        first = rows if length == 0 else first
        whole, computed = whole + first, computed + rows
    print(f"beam {k}: {computed} rows computed of {whole} in whole batches ({computed / whole:.1%})")
