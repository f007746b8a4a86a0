# session 18, call 3 (timeout_s 330): tensor-core attention tests alone and compute-sanitizer over the captured step (side by side), then gpu-best's TF32 step a0a1ffc vs HEAD, alternating
source .gpu/prefix.sh
P=$(mktemp -d)
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
( PYTHONPATH=$PWD:/tmp/site CUPY_TF32=0 timeout 120 python3 -m pytest -q -p no:cacheprovider -rs -m gpu \
    tests/kernels/test_mma_fragments.py tests/kernels/test_attention_mma.py > $P/gpu-tests-tensor-cores.log 2>&1; echo "rc=$?" >> $P/gpu-tests-tensor-cores.log ) &
for tool in memcheck racecheck; do
  ( PYTHONPATH=$PWD:/tmp/site timeout 160 $S --tool $tool --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider -x \
    tests/train/test_graphs_gpu.py > $P/$tool-graphs.log 2>&1; echo "rc=$?" >> $P/$tool-graphs.log ) &
done; wait
tail -n 2 $P/gpu-tests-tensor-cores.log
for tool in memcheck racecheck; do echo "$tool-graphs: $(tail -n 4 $P/$tool-graphs.log | tr '\n' ' ')"; done
tar czf $OUT/c.tar.gz -C $P .
for run in "base 1" "head 1" "base 2" "head 2"; do
  set -- $run; side=$1 i=$2; root=$([ $side = head ] && echo . || echo .gpu/base)
  PYTHONPATH=/tmp/site timeout 45 python3 $root/benchmarks/bench_train_step.py --presets gpu-best \
    --precision tf32 --no-compile --steps 8 --warmup 3 --out $P/step-tf32-$side-$i.json > $P/step-tf32-$side-$i.log 2>&1
  echo "step tf32 $side $i rc=$?"; grep -E "graphs|torch eager" $P/step-tf32-$side-$i.log | head -2
  tar czf $OUT/c.tar.gz -C $P .
done
