. /work/hunt-cli/tiny.sh
set -m  # job control: background jobs do not ignore SIGINT (as a terminal Ctrl-C)
run_int() { # $1 dir, $2 delay, rest args
  d=$1; t=$2; shift 2
  python -m minitx.translate train --output-dir $H/$d "$@" > $H/$d.int.log 2>&1 & pid=$!
  sleep $t; kill -INT $pid; wait $pid; echo "exit code $?"; tr '\r' '\n' < $H/$d.int.log | grep -v '^\s*$' | grep -v '%|' | tail -4; ls $H/$d 2>&1 | tr '\n' ' '; echo
}
echo "=== SIGINT during startup (full data, before run dir exists)"; rm -rf $H/si1; run_int si1 1.5 $TINY --data-dir /work/shared/data/multi30k --max-steps 10
echo "=== SIGINT during training, exit code"; rm -rf $H/si2; run_int si2 6 $TINY --max-steps 40 --save-every 7
echo "=== resume si2 then SIGINT during final test evaluation (full test set, beam 5)";
python -m minitx.translate train --output-dir $H/si3 $TINY --max-steps 3 --no-progress > /dev/null 2>&1; rm -f $H/si3/results.json
python -m minitx.translate train --output-dir $H/si3 --resume --beam-size 5 > $H/si3.int.log 2>&1 & pid=$!; sleep 4.5; kill -INT $pid; wait $pid; echo "exit code $?"; tr '\r' '\n' < $H/si3.int.log | grep -v '%|' | tail -3
echo "=== double SIGINT during training"; rm -rf $H/si4
python -m minitx.translate train --output-dir $H/si4 $TINY --max-steps 40 --save-every 7 > $H/si4.int.log 2>&1 & pid=$!; sleep 6; kill -INT $pid; sleep 0.05; kill -INT $pid; wait $pid; echo "exit code $?"; tr '\r' '\n' < $H/si4.int.log | grep -v '%|' | tail -6
python -m minitx.translate train --output-dir $H/si4 --resume --no-progress 2>&1 | grep -i 'resumed\|error'
echo "=== SIGINT in translate waiting on stdin"
(sleep 10 | python -m minitx.translate translate --run $H/good > $H/si5.out 2> $H/si5.err) & sleep 4; kill -INT -- -$! ; wait; cat $H/si5.err | tail -3
