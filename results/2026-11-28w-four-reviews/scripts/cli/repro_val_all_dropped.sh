# every validation pair longer than max_len: val loss reported 0.000 / ppl 1.0, best.npz chosen on it
. /work/hunt-cli/tiny.sh
rm -rf $H/lv
python -m minitx.translate train --output-dir $H/lv $TINY --data-dir $H/data_longval --max-steps 25 --average-last 2 --no-progress 2>&1 | grep -v '^sacre\|^lower\|^$\|^source\|^refer\|^transl'
