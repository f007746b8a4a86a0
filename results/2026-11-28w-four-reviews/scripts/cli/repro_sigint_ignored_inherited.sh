# In a non-interactive shell, `cmd &` starts cmd with SIGINT ignored. Python keeps it ignored during startup,
# but the trainer installs its own SIGINT handler (minitx/train/loop.py:767) and so stops anyway once training runs.
. /work/hunt-cli/tiny.sh
rm -rf $H/ign1 $H/ign2
python -m minitx.translate train --output-dir $H/ign1 $TINY --data-dir /work/shared/data/multi30k --max-steps 10 --no-progress > $H/ign1.log 2>&1 & pid=$!
sleep 1.5; kill -INT $pid; wait $pid; echo "SIGINT during startup: exit $? ($(tail -1 $H/ign1.log | cut -c1-60))"
python -m minitx.translate train --output-dir $H/ign2 $TINY --max-steps 40 --no-progress > $H/ign2.log 2>&1 & pid=$!
sleep 6; kill -INT $pid; wait $pid; echo "SIGINT during training: exit $? ($(grep interrupted $H/ign2.log | cut -c1-80))"
