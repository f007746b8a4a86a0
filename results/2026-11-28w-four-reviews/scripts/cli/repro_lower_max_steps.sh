# --resume with --max-steps below the step already reached: accepted, recorded in config.json, final model from step 19
. /work/hunt-cli/tiny.sh
rm -rf $H/lm; cp -r $H/t3 $H/lm    # any run; make one stopped at step 19:
rm -rf $H/lm; timeout -s INT 9 python -m minitx.translate train --output-dir $H/lm $TINY --max-steps 40 --save-every 7 --epochs 100 --average-last 3 --no-progress > /dev/null 2>&1
python -c "import json;print('history steps', [e['step'] for e in json.load(open('$H/lm/history.json'))])"
python -m minitx.translate train --output-dir $H/lm --resume --max-steps 10 --no-progress 2>&1 | grep -i 'resum\|stopped\|error'
grep -o '"max_steps": [0-9]*' $H/lm/config.json; python -c "import json;r=json.load(open('$H/lm/results.json'));print('results.json steps', r['steps'])"
echo "--- compare: --epochs below the epoch reached"
python -m minitx.translate train --output-dir $H/lm --resume --epochs 1 --no-progress 2>&1 | grep -i 'error'
