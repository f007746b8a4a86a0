#!/usr/bin/env bash
# Here, on the CPU, before a session spends GPU minutes on the kit: issue23.sh runs every part in SETS
# (default all eight, three calls) with tiny settings in a fresh WORK and OUT, each call must exit 0
# (every run started, trained, was tested and finished), and record.py lays each call's files out.
#   MINITX_DATA_DIR=... bash tools/gpu_session/smoke.sh            # about 3 minutes on 2 cores
#   SETS="base" bash tools/gpu_session/smoke.sh                     # one call: the parts in one SET
# SETS: the calls' SETs, separated by commas. The tiny settings (TINY below) fit every recipe:
# --warmup-steps 1 (gpu-best's cosine schedule needs its warm-up within --max-steps), --beam-size 1 and
# --max-len 40 (an untrained model decodes all of Test2016 to the length cap). Its folders stay in /tmp
# (printed).
set -u
cd "$(dirname "$0")/../.."
SETS=${SETS:-published-en-de published-de-en tiny-en-de,tiny-de-en best-lc base,variants-en-de variants-de-en}
TINY="--device cpu --max-steps 3 --epochs 1 --vocab-size 400 --max-tokens 600 --d-model 32 --d-ff 64"
TINY="$TINY --beam-size 1 --warmup-steps 1 --max-len 40"
top=$(mktemp -d "${TMPDIR:-/tmp}/gpu-session-smoke.XXXXXX")
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
failed=0
IFS=, read -ra calls <<< "$SETS"
for i in "${!calls[@]}"; do
  n=$((i + 1)); mkdir -p $top/out$n
  echo "smoke call $n: SET=\"${calls[$i]}\""
  OUT=$top/out$n WORK=$top/work PROOF=0 CALL=600 SEEDS=1 SET="${calls[$i]}" TRAIN_ARGS="$TINY" \
    bash tools/gpu_session/issue23.sh > $top/call$n.log 2>&1
  rc=$?
  grep "^issue23.sh: " $top/call$n.log
  [ $rc = 0 ] || { echo "smoke call $n: issue23.sh exited $rc (expected 0): $top/call$n.log"; failed=1; continue; }
  python3 tools/gpu_session/record.py $top/out$n $top/results/smoke > $top/record$n.md ||
    { echo "smoke call $n: record.py failed: $top/record$n.md"; failed=1; }
done
finished=$(ls $top/results/smoke/training 2>/dev/null | wc -l)
echo "smoke: $finished runs finished and recorded in $top/results/smoke; $(ls $top/results/smoke/interrupted 2>/dev/null | wc -l) not"
[ $failed = 0 ] && echo "smoke: passed" || echo "smoke: FAILED"
exit $failed
