# session 18, call 1 (timeout_s 330): capture-safe cuBLAS + GPU tests and sanitizers side by side, bitsame, then the TF32 step table at HEAD
source .gpu/prefix.sh
P=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $P/device.txt
python3 -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__, 'cuda', cupy.cuda.runtime.runtimeGetVersion())" >> $P/device.txt 2>&1
git log -1 --format='%H %s' > $P/commit.txt 2>/dev/null || true
cat $P/device.txt
# the proof first: cuBLAS through nvmath-python under capture
( PYTHONPATH=$PWD:/tmp/site CUPY_TF32=0 timeout 60 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/test_blas_gpu.py > $P/capture-blas.log 2>&1; echo "rc=$?" >> $P/capture-blas.log ); tail -n 2 $P/capture-blas.log
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
( PYTHONPATH=$PWD:/tmp/site CUPY_TF32=0 timeout 170 python3 -m pytest -q -p no:cacheprovider -rs -m gpu \
    tests/kernels/test_gpu.py tests/train/test_graphs_gpu.py tests/test_interop.py tests/test_optim.py \
    tests/test_serialization.py tests/kernels/test_attention_mma.py tests/kernels/test_mma_fragments.py > $P/gpu-tests.log 2>&1; echo "rc=$?" >> $P/gpu-tests.log ) &
for tool in memcheck racecheck; do
  PYTHONPATH=$PWD:/tmp/site timeout 120 $S --tool $tool --error-exitcode 3 python3 benchmarks/sanitize_kernels.py > $P/$tool.log 2>&1 &
done; wait
tail -n 3 $P/gpu-tests.log
for tool in memcheck racecheck; do echo "$tool: $(tail -n 1 $P/$tool.log)"; done
tar czf $OUT/a.tar.gz -C $P .
PYTHONPATH=$PWD/.gpu/base:/tmp/site timeout 60 python3 .gpu/bitsame.py $P/bits-base.npz > $P/bitsame.log 2>&1
PYTHONPATH=$PWD:/tmp/site timeout 60 python3 .gpu/bitsame.py $P/bits-head.npz >> $P/bitsame.log 2>&1
python3 .gpu/bitsame.py --compare $P/bits-base.npz $P/bits-head.npz 2>&1 | tee -a $P/bitsame.log; rm -f $P/bits-*.npz
tar czf $OUT/a.tar.gz -C $P .
# the step table at HEAD, TF32 on both sides, every torch mode beside
PYTHONPATH=$PWD:/tmp/site timeout 200 python3 benchmarks/bench_train_step.py --precision tf32 --steps 8 --warmup 3 \
  --out $P/step-tf32.json > $P/step-tf32.log 2>&1; echo "table rc=$?"; tail -n 12 $P/step-tf32.log
tar czf $OUT/a.tar.gz -C $P .
