#!/bin/bash
. /work/venv/bin/activate; export MINITX_DATA_DIR=/work/shared/data/multi30k
cd /work/main
for spec in "lc-de-en:--text moses-lowercase" "asis-en-de:--src-lang en --tgt-lang de" "lc-en-de:--src-lang en --tgt-lang de --text moses-lowercase"; do
  name=${spec%%:*}; args=${spec#*:}
  python -m minitx.translate train --recipe cpu-quick $args --no-progress --output-dir /work/ab/$name > /work/ab/$name.log 2>&1
  echo "$name rc=$?" >> /work/ab/done.txt
done
