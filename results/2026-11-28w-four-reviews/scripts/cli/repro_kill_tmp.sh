# SIGKILL while checkpoints are being written: do stray temp files remain, and does --overwrite / resume clean them?
. /work/hunt-cli/tiny.sh
rm -rf $H/kt
A="--d-model 256 --num-heads 4 --d-ff 1024 --encoder-layers 2 --decoder-layers 2 --vocab-size 400 --max-tokens 1500 --data-dir $H/data --max-steps 200 --save-every 1 --no-progress"
python -m minitx.translate train --output-dir $H/kt $A > /dev/null 2>&1 & pid=$!
sleep 8; for i in 1 2 3 4 5 6; do
  kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
  ls -a $H/kt | grep -c tmp
  python -m minitx.translate train --output-dir $H/kt --resume --no-progress > $H/kt.$i.log 2>&1 & pid=$!
  sleep $((4 + i % 3)).$((RANDOM % 10))
done
kill -KILL $pid; wait $pid 2>/dev/null
ls -la $H/kt
grep -h resumed $H/kt.*.log
