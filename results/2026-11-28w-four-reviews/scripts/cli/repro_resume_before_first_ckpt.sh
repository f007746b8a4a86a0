. /work/hunt-cli/tiny.sh
rm -rf $H/nock; mkdir $H/nock; cp $H/t1/config.json $H/t1/tokenizer.*.json $H/nock/
python -m minitx.translate train --output-dir $H/nock --resume --no-progress 2>&1 | grep -i 'resum\|start\|error\|BLEU 0'
python $H/cmp.py $H/t1 $H/nock | tail -3
