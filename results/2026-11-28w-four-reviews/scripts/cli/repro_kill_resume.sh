# SIGKILL at several moments, resume repeatedly; compare with uninterrupted t1
. /work/hunt-cli/tiny.sh
rm -rf $H/t4
timeout -s KILL 6 python -m minitx.translate train --output-dir $H/t4 $TINY --max-steps 40 --save-every 7 --epochs 100 --average-last 3 --no-progress > $H/t4.1.log 2>&1; echo "rc=$?"
ls $H/t4
for t in 7 9 6; do
timeout -s KILL $t python -m minitx.translate train --output-dir $H/t4 --resume --no-progress > $H/t4.r$t.log 2>&1; echo "rc=$?"; grep -i 'resumed\|error\|Trace' $H/t4.r$t.log
done
python -m minitx.translate train --output-dir $H/t4 --resume --no-progress > $H/t4.final.log 2>&1; echo "rc=$?"; grep -i 'resumed\|error\|Trace\|BLEU' $H/t4.final.log
python $H/cmp.py $H/t1 $H/t4
