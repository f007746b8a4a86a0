# next GPU session, call 3 if >= 300 device-s are left (timeout_s 280): racecheck over the captured step at HEAD
# alone (at 515283d it ran beside other work and was cut at 160 s after 6 of 7 tests, no hazard; 0 hazards at 60b0cf5)
source .gpu/prefix.sh
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
# setsid + -k: a timeout that stops compute-sanitizer alone leaves its python on the GPU (it happened at 515283d)
PYTHONPATH=$PWD:/tmp/site setsid timeout -k 5 270 $S --tool racecheck --error-exitcode 3 python3 -m pytest -q \
  -p no:cacheprovider tests/train/test_graphs_gpu.py > $OUT/racecheck-graphs.log 2>&1; echo "rc=$?" >> $OUT/racecheck-graphs.log
pkill -9 -f "[t]est_graphs_gpu" || true; tail -n 4 $OUT/racecheck-graphs.log
