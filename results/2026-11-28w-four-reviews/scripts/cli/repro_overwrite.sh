. /work/hunt-cli/tiny.sh
rm -rf $H/ow; cp -r $H/t1 $H/ow; echo "my notes" > $H/ow/notes.txt; mkdir $H/ow/sub; touch $H/ow/sub/x
python -m minitx.translate train --output-dir $H/ow --overwrite $TINY --max-steps 2 --no-progress > /dev/null 2>&1; echo "rc=$?"; ls $H/ow
echo "=== overwrite an encoder run"; rm -rf $H/ow2; cp -r $H/encA $H/ow2
python -m minitx.translate train --output-dir $H/ow2 --overwrite $TINY --max-steps 2 --no-progress 2>&1 | tail -1 | cut -c1-300; ls $H/ow2
echo "=== output-dir is a file"; touch $H/afile; python -m minitx.translate train --output-dir $H/afile $TINY --max-steps 2 --no-progress 2>&1 | tail -1
echo "=== overwrite with failing config (bad option) keeps old run?"; rm -rf $H/ow3; cp -r $H/t1 $H/ow3
python -m minitx.translate train --output-dir $H/ow3 --overwrite $TINY --max-steps 2 --num-heads 3 --no-progress 2>&1 | tail -1; ls $H/ow3 | tr '\n' ' '; echo
echo "=== overwrite with missing data file keeps old run?"; rm -rf $H/ow4; cp -r $H/t1 $H/ow4
python -m minitx.translate train --output-dir $H/ow4 --overwrite $TINY --data-dir $H/dmis --max-steps 2 --no-progress 2>&1 | tail -1 | cut -c1-150; ls $H/ow4 | tr '\n' ' '; echo
echo "=== overwrite then Ctrl-C during data loading"; rm -rf $H/ow5; cp -r $H/t1 $H/ow5
( set -m; python -m minitx.translate train --output-dir $H/ow5 --overwrite $TINY --data-dir /work/shared/data/multi30k --max-steps 2 --no-progress > $H/ow5.log 2>&1 & pid=$!; sleep 2; kill -INT $pid; wait $pid; echo "exit $?" ); tail -1 $H/ow5.log; ls $H/ow5 | tr '\n' ' '; echo
