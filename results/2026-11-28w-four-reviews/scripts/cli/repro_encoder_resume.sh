set -m
. /work/hunt-cli/tiny.sh
E="--recipe tiny --data-dir $H/data --d-model 64 --d-ff 128 --max-steps 120 --save-every 7"
rm -rf $H/encA $H/encB
python -m minitx.encoder pretrain $E --output-dir $H/encA --no-progress > $H/encA.log 2>&1; tail -2 $H/encA.log
python -m minitx.encoder pretrain $E --output-dir $H/encB > $H/encB.1.log 2>&1 & pid=$!; sleep 4; kill -INT $pid; wait $pid; echo "exit $?"; tr '\r' '\n' < $H/encB.1.log | grep -v '%|' | tail -3
python -m minitx.encoder pretrain --output-dir $H/encB --resume --no-progress > $H/encB.2.log 2>&1 & pid=$!; sleep 3; kill -KILL $pid; wait $pid; echo "exit $?"; grep resumed $H/encB.2.log
python -m minitx.encoder pretrain --output-dir $H/encB --resume --no-progress > $H/encB.3.log 2>&1; echo "exit $?"; grep -i 'resumed\|done' $H/encB.3.log
python $H/cmp.py $H/encA $H/encB
