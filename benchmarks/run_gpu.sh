#!/usr/bin/env bash
# One command for a GPU machine: the GPU tests, compute-sanitizer (memcheck + racecheck) over
# every kernel, the kernel benchmarks and the training-step benchmark. Nothing is installed or
# downloaded: it needs python3 with CuPy (and PyTorch for the comparison columns), nvcc's
# compute-sanitizer on PATH, and runs from the source tree with PYTHONPATH=$PWD.
#
#   bash benchmarks/run_gpu.sh [OUTDIR]       (default: $OUT if set, else benchmarks/results)
#
# Every stage has a time limit (about 10 minutes in all); a failing stage does not stop the
# others. OUTDIR receives one log per stage, kernels.json, train-step.json, device.txt and
# summary.txt (stage, exit code, seconds). The exit code is 0 only if every stage passed.
# ONLY="gpu-tests translate-smoke" runs just the stages named (memcheck, racecheck,
# bench-kernels, bench-train-step are the others), e.g. to split the work over two calls.
# translate-smoke trains the cpu-quick recipe on the GPU for 60 steps, resumes it to 90 and
# scores greedy test BLEU: it needs Multi30k in MINITX_DATA_DIR (nothing is downloaded).
set -u
cd "$(dirname "$0")/.."
OUTDIR="${1:-${OUT:-benchmarks/results}}"
mkdir -p "$OUTDIR"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export CUPY_TF32=0  # tests compare float32 products with references: keep cuBLAS exact
PY="${PYTHON:-python3}"
status=0
: > "$OUTDIR/summary.txt"

stage() {  # stage NAME SECONDS COMMAND...
  local name=$1 limit=$2 start rc
  shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  echo "== $name (limit ${limit}s): $*"
  start=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$OUTDIR/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start ))s" | tee -a "$OUTDIR/summary.txt"
  tail -n 25 "$OUTDIR/$name.log"
  [ "$rc" -eq 0 ] || status=1
}

{ nvidia-smi 2>&1 || true; "$PY" -c "import cupy; cupy.show_config()" 2>&1 || true
  "$PY" -c "import torch; print('torch', torch.__version__, torch.version.cuda)" 2>&1 || true; } > "$OUTDIR/device.txt"

stage gpu-tests 120 "$PY" -m pytest -m gpu tests/kernels -q -p no:cacheprovider -rs
# compute-sanitizer: on PATH, else next to nvcc, else in $CUDA_HOME (default /usr/local/cuda)
SANITIZER=$(command -v compute-sanitizer || true)
for candidate in "$(dirname "$(command -v nvcc || echo /nonexistent/nvcc)")/compute-sanitizer" \
                 "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"; do
  [ -n "$SANITIZER" ] || { [ -x "$candidate" ] && SANITIZER=$candidate; }
done
if [ -n "$SANITIZER" ] || [ -n "${ONLY:-}" ]; then
  stage memcheck 75 "$SANITIZER" --tool memcheck --error-exitcode 3 "$PY" benchmarks/sanitize_kernels.py
  stage racecheck 100 "$SANITIZER" --tool racecheck --error-exitcode 3 "$PY" benchmarks/sanitize_kernels.py
else
  echo "compute-sanitizer not found: sanitizer stages skipped" | tee -a "$OUTDIR/summary.txt"
  status=1
fi
stage bench-kernels 90 "$PY" benchmarks/bench_kernels.py --repeat 20 --warmup 3 --out "$OUTDIR/kernels.json"
stage bench-train-step 120 "$PY" benchmarks/bench_train_step.py --steps 8 --warmup 3 --out "$OUTDIR/train-step.json"
if [ -f "${MINITX_DATA_DIR:-/nonexistent}/train.de.gz" ]; then
  SMOKE=(-m minitx.translate train --recipe cpu-quick --device cuda --beam-size 1 --save-every 30
         --output-dir "$OUTDIR/translate-smoke")
  stage translate-smoke 150 bash -c '"$0" "$@" --max-steps 60 --overwrite && "$0" "$@" --max-steps 90 --resume' \
    "$PY" "${SMOKE[@]}"
elif [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" translate-smoke "* ]]; then
  echo "translate-smoke skipped: no Multi30k in MINITX_DATA_DIR" | tee -a "$OUTDIR/summary.txt"
  status=1
fi
echo "results in $OUTDIR"
exit "$status"
