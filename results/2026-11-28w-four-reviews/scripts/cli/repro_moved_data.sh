. /work/hunt-cli/tiny.sh
cd $H; rm -rf $H/mv data_mv data_mv2; cp -r data data_mv
python -m minitx.translate train --output-dir mv $(echo $TINY | sed "s#--data-dir [^ ]*#--data-dir data_mv#") --max-steps 12 --save-every 4 --no-progress > /dev/null 2>&1
grep -o '"data_dir": "[^"]*"' mv/config.json
mv data_mv data_mv2
cd /tmp
echo "=== resume after the data dir moved"; python -m minitx.translate train --output-dir $H/mv --resume --max-steps 14 --no-progress 2>&1 | tail -1
echo "=== evaluate after moved"; python -m minitx.translate evaluate --run $H/mv --no-progress 2>&1 | tail -1
echo "=== resume with new --data-dir"; python -m minitx.translate train --output-dir $H/mv --resume --max-steps 14 --data-dir $H/data_mv2 --no-progress 2>&1 | grep -i 'resum\|data:\|error'
