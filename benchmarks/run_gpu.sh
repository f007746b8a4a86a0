#!/usr/bin/env bash
# One command for a GPU machine: the GPU tests, compute-sanitizer (memcheck + racecheck) over
# every kernel, the kernel benchmarks, the training-step benchmark and a short training run.
# Nothing is installed or downloaded: it needs python3 with CuPy (and PyTorch for the comparison
# columns), nvcc's compute-sanitizer on PATH, and runs from the source tree with PYTHONPATH=$PWD.
#
#   bash benchmarks/run_gpu.sh [OUTDIR]       (default: $OUT if set, else benchmarks/results)
#
# Every stage has a time limit (about 33 minutes in all at most: split the stages over calls with
# ONLY where a call is limited to less); a failing stage does not stop the others. OUTDIR receives five files, no more (a machine lent for a few minutes may bring back
# only a few): summary.txt (stage, exit code, seconds), device.txt, kernels.json,
# train-step.json, and logs.tar.gz (logs/<stage>.log for each stage, and the smoke run's
# results.json and history.json). The exit code is 0 only if every stage that ran passed.
#
# ONLY="gpu-tests translate-smoke" runs just the stages named, e.g. to split the work over two
# calls; the stages are the names in STAGES below.
# translate-smoke trains the cpu-quick recipe on the GPU for 60 steps, resumes it to 90 and
# scores greedy test BLEU; translate-graphs trains it 50 steps eagerly, 50 from CUDA graphs, and 30
# from graphs resumed to 50, and compares the parameters: both need Multi30k in MINITX_DATA_DIR
# (nothing is downloaded). The
# capture and translate-graphs stages need nvmath-python (pip install nvmath-python, or minitx[cuda13]).
set -u
cd "$(dirname "$0")/.."
STAGES="capture gpu-tests memcheck racecheck memcheck-graphs racecheck-graphs bench-kernels bench-ladder bench-train-step profile translate-smoke translate-graphs"
for name in ${ONLY:-}; do
  [[ " $STAGES " == *" $name "* ]] || { echo "run_gpu.sh: unknown stage '$name' in ONLY; stages: $STAGES" >&2; exit 2; }
done
OUTDIR="${1:-${OUT:-benchmarks/results}}"
WORK=$(mktemp -d)   # logs and the smoke run live here; OUTDIR gets them packed
LOGS="$WORK/logs"
mkdir -p "$OUTDIR" "$LOGS"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export CUPY_TF32=0  # tests compare float32 products with references: keep cuBLAS exact
# (the translate stages run translate's own default, which sets TF32 on GPUs that have it)
PY="${PYTHON:-python3}"
status=0
: > "$OUTDIR/summary.txt"

wanted() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

skipped() {  # skipped NAME REASON: a wanted stage that cannot run fails the script
  if wanted "$1"; then
    echo "$1 skipped: $2" | tee -a "$OUTDIR/summary.txt"
    status=1
  fi
}

stage() {  # stage NAME SECONDS COMMAND...
  local name=$1 limit=$2 start rc
  shift 2
  wanted "$name" || return 0
  echo "== $name (limit ${limit}s): $*"
  start=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$LOGS/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start ))s" | tee -a "$OUTDIR/summary.txt"
  tail -n 25 "$LOGS/$name.log"
  [ "$rc" -eq 0 ] || status=1
  tar czf "$OUTDIR/logs.tar.gz" -C "$WORK" logs  # after every stage: a call cut off keeps what ran
}

{ nvidia-smi 2>&1 || true; "$PY" -c "import cupy; cupy.show_config()" 2>&1 || true
  "$PY" -c "import torch; print('torch', torch.__version__, torch.version.cuda)" 2>&1 || true; } > "$OUTDIR/device.txt"

# the capture-safe cuBLAS call first, then the captured steps against the eager ones (they need nvmath-python)
stage capture 120 "$PY" -m pytest -q -p no:cacheprovider -rs -x tests/test_blas_gpu.py tests/train/test_graphs_gpu.py
stage gpu-tests 150 "$PY" -m pytest -m gpu tests -q -p no:cacheprovider -rs --maxfail=30
# compute-sanitizer: on PATH, else next to nvcc, else in $CUDA_HOME (default /usr/local/cuda)
SANITIZER=$(command -v compute-sanitizer || true)
for candidate in "$(dirname "$(command -v nvcc || echo /nonexistent/nvcc)")/compute-sanitizer" \
                 "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"; do
  [ -n "$SANITIZER" ] || { [ -x "$candidate" ] && SANITIZER=$candidate; }
done
if [ -n "$SANITIZER" ]; then
  stage memcheck 100 "$SANITIZER" --tool memcheck --error-exitcode 3 "$PY" benchmarks/sanitize_kernels.py
  stage racecheck 180 "$SANITIZER" --tool racecheck --error-exitcode 3 "$PY" benchmarks/sanitize_kernels.py
  # the captured steps (replays included) under both tools: the issue's "0 errors over the captured step"
  for tool in memcheck racecheck; do
    stage $tool-graphs 200 "$SANITIZER" --tool $tool --error-exitcode 3 "$PY" -m pytest -q -p no:cacheprovider \
      -x tests/train/test_graphs_gpu.py
  done
else
  for name in memcheck racecheck memcheck-graphs racecheck-graphs; do skipped $name "compute-sanitizer not found"; done
fi
stage bench-kernels 180 "$PY" benchmarks/bench_kernels.py --repeat 20 --warmup 3 --kernel-time --out "$OUTDIR/kernels.json"
stage bench-ladder 60 "$PY" benchmarks/bench_ladder.py --repeat 20 --warmup 3
stage bench-train-step 240 "$PY" benchmarks/bench_train_step.py --steps 8 --warmup 3 --out "$OUTDIR/train-step.json"
# where gpu-best's step goes, eagerly and replayed from a CUDA graph, beside PyTorch's eager twin's
# kernels, in fp32 and in TF32 (translate's default on such GPUs)
stage profile 200 bash -c 'P="$0 benchmarks/profile_train_step.py --preset gpu-best --top 30"
  $P && for precision in fp32 tf32; do
    $P --graphs --precision $precision || exit
    ! "$0" -c "import torch" 2>/dev/null || $P --torch --precision $precision || exit
  done' "$PY"
if [ -f "${MINITX_DATA_DIR:-/nonexistent}/train.de.gz" ]; then
  # the run directory (checkpoints of tens of MB) stays out of OUTDIR; its results come along
  SMOKE_DIR="$WORK/translate-smoke"
  SMOKE=(-m minitx.translate train --recipe cpu-quick --device cuda --beam-size 1 --save-every 30
         --output-dir "$SMOKE_DIR")
  stage translate-smoke 150 bash -c '"$0" "$@" --max-steps 60 --overwrite && "$0" "$@" --max-steps 90 --resume' \
    "$PY" "${SMOKE[@]}"
  for f in results.json history.json; do
    [ -f "$SMOKE_DIR/$f" ] && cp "$SMOKE_DIR/$f" "$LOGS/translate-smoke-$f"
  done
  # the same 50 steps eagerly, replayed from CUDA graphs, and replayed but killed after 30 and
  # resumed (all with minitx.blas's products): the parameters must agree bit for bit
  GRAPHS=(-m minitx.translate train --recipe cpu-quick --device cuda --beam-size 1 --bleu-every 0
          --static-shapes true --sync-every 10)
  export RUNS="$WORK"
  stage translate-graphs 300 env MINITX_BLAS=cublas bash -c '
    "$0" "$@" --cuda-graphs false --max-steps 50 --overwrite --output-dir "$RUNS/eager" &&
    "$0" "$@" --cuda-graphs true --max-steps 50 --overwrite --output-dir "$RUNS/graphs" &&
    "$0" "$@" --cuda-graphs true --max-steps 30 --overwrite --output-dir "$RUNS/resumed" &&
    "$0" "$@" --cuda-graphs true --max-steps 50 --resume --output-dir "$RUNS/resumed" || exit
    "$0" benchmarks/same_params.py "$RUNS/eager" "$RUNS/graphs" &&
    "$0" benchmarks/same_params.py "$RUNS/eager" "$RUNS/resumed"' "$PY" "${GRAPHS[@]}"
else
  skipped translate-smoke "no Multi30k in MINITX_DATA_DIR"
  skipped translate-graphs "no Multi30k in MINITX_DATA_DIR"
fi
tar czf "$OUTDIR/logs.tar.gz" -C "$WORK" logs
echo "results in $OUTDIR; the logs: tar xzf $OUTDIR/logs.tar.gz"
exit "$status"
