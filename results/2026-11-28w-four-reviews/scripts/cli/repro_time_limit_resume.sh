. /work/hunt-cli/tiny.sh
rm -rf $H/tl
python -m minitx.translate train --output-dir $H/tl $TINY --max-steps 40 --save-every 7 --epochs 100 --average-last 3 --time-limit 0.06 --no-progress 2>&1 | grep -i 'stopped\|averaged\|BLEU 0'
echo "--- resume with a larger time limit"
python -m minitx.translate train --output-dir $H/tl --resume --time-limit 10 --no-progress 2>&1 | grep -i 'resum\|stopped\|averaged\|BLEU 0'
python $H/cmp.py $H/t1 $H/tl | tail -4
