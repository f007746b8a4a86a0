# every training pair longer than max_len: the run trains 0 steps yet reports loss 0.000 / ppl 1.0 and "succeeds"
. /work/hunt-cli/tiny.sh
rm -rf $H/ml5
python -m minitx.translate train --output-dir $H/ml5 $TINY --max-steps 3 --epochs 3 --no-progress --max-len 5 2>&1 | grep -v '^sacre\|^lower\|^$'
echo "rc=$?"; cat $H/ml5/history.json | head -12; python -c "import json;r=json.load(open('$H/ml5/results.json'));print('results:', r['steps'], r['val_loss'], r['checkpoint'])"
echo "=== encoder pretrain --max-len 3"
rm -rf $H/encml
python -m minitx.encoder pretrain --recipe tiny --output-dir $H/encml --data-dir $H/data --max-len 3 --no-progress 2>&1 | tail -5; echo "rc=$?"
