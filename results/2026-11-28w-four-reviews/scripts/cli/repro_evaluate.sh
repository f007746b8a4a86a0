. /work/hunt-cli/tiny.sh
R=$H/good
echo "=== evaluate default (run's beam 2)"; ls $R > $H/before.ls; python -m minitx.translate evaluate --run $R --no-progress 2>&1; echo "rc=$?"; ls $R | diff $H/before.ls - && echo "(no new files in run dir)"
python -c "import json;r=json.load(open('$R/results.json'));print('results.json:', {k:r[k] for k in ('bleu','bleu_lowercase','bleu_tokens_lowercase','bleu_moses_lowercase')})"
echo "=== evaluate --split val --beam-size 1"; python -m minitx.translate evaluate --run $R --split val --beam-size 1 --no-progress 2>&1 | head -3
echo "=== evaluate --split test2016"; python -m minitx.translate evaluate --run $R --split test2016 --no-progress 2>&1 | tail -2
echo "=== evaluate --split test_2017_flickr (not in data dir)"; python -m minitx.translate evaluate --run $R --split test_2017_flickr --no-progress 2>&1 | tail -2
echo "=== evaluate --data-dir missing a file"; mkdir -p $H/data_missing; cp $H/data/*.gz $H/data_missing/; rm $H/data_missing/test_2016_flickr.en.gz
python -m minitx.translate evaluate --run $R --data-dir $H/data_missing --no-progress 2>&1 | tail -2
echo "=== evaluate --data-dir nonexistent"; python -m minitx.translate evaluate --run $R --data-dir $H/nope --no-progress 2>&1 | tail -2
echo "=== evaluate with progress bar piped"; python -m minitx.translate evaluate --run $R 2>&1 | head -c 600 | cat -A | head -5
