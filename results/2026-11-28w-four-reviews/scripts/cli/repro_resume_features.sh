# dropout + accumulate + bleu-every + patience + keep-epochs: killed/interrupted and resumed vs uninterrupted
set -m
. /work/hunt-cli/tiny.sh
F="$TINY --dropout 0.1 --accumulate 2 --bleu-every 1 --bleu-val-sentences 10 --patience 3 --keep-epochs true --average-last 2 --max-steps 24 --save-every 3 --epochs 100"
rm -rf $H/fU $H/fI
python -m minitx.translate train --output-dir $H/fU $F --no-progress > $H/fU.log 2>&1; grep -i 'epoch [0-9]*:\|stopped' $H/fU.log
python -m minitx.translate train --output-dir $H/fI $F > $H/fI.1.log 2>&1 & pid=$!; sleep 7; kill -INT $pid; wait $pid; echo "exit $?"
python -m minitx.translate train --output-dir $H/fI --resume --no-progress > $H/fI.2.log 2>&1 & pid=$!; sleep 6; kill -KILL $pid; wait $pid 2>/dev/null; echo "exit $?"
python -m minitx.translate train --output-dir $H/fI --resume --no-progress > $H/fI.3.log 2>&1; echo "exit $?"
grep -h resumed $H/fI.*.log
python $H/cmp.py $H/fU $H/fI
