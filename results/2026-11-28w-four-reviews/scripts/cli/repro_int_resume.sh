# SIGINT mid-run then --resume; compare with uninterrupted t1
. /work/hunt-cli/tiny.sh
rm -rf $H/t3
timeout -s INT 9 python -m minitx.translate train --output-dir $H/t3 $TINY --max-steps 40 --save-every 7 --epochs 100 --average-last 3 > $H/t3.1.log 2>&1; echo "rc=$?"
cat $H/t3.1.log | tr '\r' '\n' | tail -8
python -c "import json;print(json.load(open('$H/t3/history.json')))" 2>&1 | tail -1
python -m minitx.translate train --output-dir $H/t3 --resume --no-progress > $H/t3.2.log 2>&1; echo "rc=$?"
grep -v '^sacre\|^lower' $H/t3.2.log
python $H/cmp.py $H/t1 $H/t3
