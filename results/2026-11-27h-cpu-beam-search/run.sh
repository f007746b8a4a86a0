#!/bin/bash
# The four cpu-quick runs of ../2026-11-27f-cpu-text-form/ (their checkpoints in /work/ab), each
# decoded three ways on the test split and the validation split.
. /work/venv/bin/activate; export MINITX_DATA_DIR=/work/shared/data/multi30k
cd /tmp
for run in final-de-en asis-en-de lc-de-en lc-en-de; do
  for decode in "gnmt 0.6" "gnmt 1.0" "fairseq 1.0"; do
    set -- $decode
    for split in test_2016_flickr val; do
      echo "== $run $split --beam-search $1 --length-penalty $2"
      python -m minitx.translate evaluate --run /work/ab/$run --beam-search $1 --length-penalty $2 --split $split \
        --no-progress 2>&1 | grep -E "BLEU [0-9]|^lowercased"
    done
  done
done
