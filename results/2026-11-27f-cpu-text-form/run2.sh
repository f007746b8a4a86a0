#!/bin/bash
while ! grep -q "lc-en-de" /work/ab/done.txt 2>/dev/null; do sleep 10; done
. /work/venv/bin/activate; export MINITX_DATA_DIR=/work/shared/data/multi30k
cd /work/main
git rev-parse --short HEAD > /work/ab/asis-de-en.commit
python -m minitx.translate train --recipe cpu-quick --no-progress --output-dir /work/ab/asis-de-en > /work/ab/asis-de-en.log 2>&1
echo "asis-de-en rc=$?" >> /work/ab/done.txt
