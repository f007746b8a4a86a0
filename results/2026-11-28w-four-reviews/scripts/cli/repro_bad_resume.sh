. /work/hunt-cli/tiny.sh
rs() { echo "=== resume $1 ${*:2}"; python -m minitx.translate train --output-dir $H/$1 --resume --no-progress "${@:2}" 2>&1 | grep -v '^sacre\|^lower\|^source\|^reference\|^translation\|^$' | tail -5 | cut -c1-600; echo "rc=${PIPESTATUS[0]}"; }
mk() { rm -rf $H/$1; cp -r $H/t1 $H/$1; }
rs nonexistent_run
rs emptydir
mk br1; head -c 5000 $H/t1/last.npz > $H/br1/last.npz; rs br1
mk br2; cp $H/ende/last.npz $H/br2/last.npz; rs br2
mk br3; rm $H/br3/last.npz; rs br3
mk br4; rm $H/br4/config.json; rs br4
mk br5; rm $H/br5/tokenizer.src.json; rs br5
# a new run into a directory holding a run
echo "=== new run into existing run dir"; python -m minitx.translate train --output-dir $H/t1 $TINY --max-steps 5 --no-progress 2>&1 | tail -2 | cut -c1-400
# a new run into the de-en dir with en-de direction
echo "=== resume de-en run as en-de"; python -m minitx.translate train --output-dir $H/t1 --resume --src-lang en --tgt-lang de 2>&1 | tail -1 | cut -c1-300
# resume an encoder run dir with translate
