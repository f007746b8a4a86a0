#!/bin/bash
# cpu-quick English->German on the published text (as ../2026-11-27f-cpu-text-form/'s lc-en-de, seed 1)
# with fairseq's embedding initialization (--embed-init normal), the one change.
. /work/venv/bin/activate; export MINITX_DATA_DIR=/work/shared/data/multi30k
rm -rf /tmp/ei && git clone -q /work/main /tmp/ei && cd /tmp/ei && git rev-parse --short HEAD > /work/ab/ei-en-de.commit
PYTHONPATH=/tmp/ei python -m minitx.translate train --recipe cpu-quick --src-lang en --tgt-lang de \
  --text moses-lowercase --embed-init normal --no-progress --output-dir /work/ab/ei-en-de > /work/ab/ei-en-de.log 2>&1
echo "rc=$?" >> /work/ab/ei-en-de.log
