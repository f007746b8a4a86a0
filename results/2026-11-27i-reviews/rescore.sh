#!/bin/bash
# The two moses-lowercase cpu-quick runs of ../2026-11-27f-cpu-text-form/ (checkpoints in /work/ab),
# scored again on the test split with the published metric as it is now computed (the model's own
# tokens against the normalized references), decoded as in ../2026-11-27h-cpu-beam-search/.
. /work/venv/bin/activate; export MINITX_DATA_DIR=/work/shared/data/multi30k
cd /tmp
for run in lc-de-en lc-en-de; do
  for decode in "gnmt 0.6" "fairseq 1.0"; do
    set -- $decode
    echo "== $run test_2016_flickr --beam-search $1 --length-penalty $2"
    PYTHONPATH=/work/main python -m minitx.translate evaluate --run /work/ab/$run --beam-search $1 --length-penalty $2 \
      --no-progress 2>&1 | grep -E "BLEU [0-9]|^lowercased"
  done
done
