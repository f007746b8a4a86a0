"""Decode test2016 with a run's model; print seconds and a hash of the outputs (same bits before/after)."""
import sys, time, hashlib, cProfile, pstats
from minitx.data import load_pairs
from minitx.translate.training import load_run
from minitx.translate.evaluation import translate_sentences
run, n, prof = sys.argv[1], int(sys.argv[2]), len(sys.argv) > 3
config, model, src_tok, tgt_tok = load_run(run, "final", "cpu")
pairs = load_pairs("test_2016_flickr", config["src_lang"], config["tgt_lang"], config.get("data_dir"))[:n]
src = [s for s, _ in pairs]
t = time.perf_counter()
if prof:
    p = cProfile.Profile(); p.enable()
out, rep = translate_sentences(model, src_tok, tgt_tok, src, beam_size=config["beam_size"], length_penalty=config["length_penalty"])
dt = time.perf_counter() - t
if prof:
    p.disable(); pstats.Stats(p).sort_stats("tottime").print_stats(18)
print(f"{dt:.2f} s, {n} sentences, beam {config['beam_size']}, sha {hashlib.sha256(chr(10).join(out).encode()).hexdigest()[:16]}")
