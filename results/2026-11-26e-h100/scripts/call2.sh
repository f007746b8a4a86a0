# call 2 (~250 s; timeout_s 320): gpu-best at the defaults with every epoch kept, then time to 40 BLEU (issue 21's
# figure on an H100: target <= 90 s; 72.0 s to the first epoch >= 40 on the last H200 at 60b0cf5)
source .gpu/prefix.sh
export PYTHONPATH=$PWD:/tmp/site
R=$(mktemp -d)
timeout 200 python3 -m minitx.translate train --recipe gpu-best --device cuda --keep-epochs true --no-progress \
  --output-dir $R/gb > $R/gb.log 2>&1; echo "rc=$?" >> $R/gb.log
(cd $R && tar czf $OUT/gb.tar.gz gb.log gb/history.json gb/results.json gb/config.json)
timeout 90 python3 benchmarks/time_to_bleu.py $R/gb --from-epoch 13 --out $R/gb/time.json > $R/time.log 2>&1
(cd $R && tar czf $OUT/gb.tar.gz gb.log time.log gb/history.json gb/results.json gb/config.json gb/time.json)
tail -n 4 $R/gb.log; tail -n 4 $R/time.log
# what a gpu-best checkpoint holds the steps for on this machine's disk: written in the step vs handed over
PYTHONPATH=/tmp/site timeout 60 python3 benchmarks/bench_checkpoints.py --device cuda --saves 3 --dir /tmp \
  --out $OUT/checkpoints.json > $OUT/checkpoints.log 2>&1; echo "bench_checkpoints rc=$?"; cat $OUT/checkpoints.log
