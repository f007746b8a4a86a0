# extend a finished run with --max-steps, Ctrl-C it: does the printed resume command continue to the new target?
set -m
. /work/hunt-cli/tiny.sh
rm -rf $H/ext; cp -r $H/t1 $H/ext
python -m minitx.translate train --output-dir $H/ext --resume --max-steps 80 --no-progress > $H/ext.1.log 2>&1 & pid=$!; sleep 6; kill -INT $pid; wait $pid; echo "exit $?"
tail -2 $H/ext.1.log
grep -o '"max_steps": [0-9]*' $H/ext/config.json
python -m minitx.translate train --output-dir $H/ext --resume --no-progress 2>&1 | grep -i 'resumed\|stopped'
