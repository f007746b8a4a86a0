. /work/hunt-cli/tiny.sh
try() { d=$1; shift; rm -rf $H/$d; cp -r $H/t1 $H/$d; echo "=== resume $*"; python -m minitx.translate train --output-dir $H/$d --resume --no-progress "$@" 2>&1 | grep -v '^sacre\|^lower\|^source\|^reference\|^translation\|^$' | cut -c1-400; echo "rc=${PIPESTATUS[0]}"; }
try rc0
try rc1 --lr 0.01
try rc2 --seed 2
try rc3 --recipe cpu-long
try rc4 --src-lang en --tgt-lang de
try rc5 --d-model 64
try rc6 --beam-size 3
try rc7 --max-steps 30
try rc8 --data-dir /work/shared/data/multi30k
try rc9 --vocab-size 400
try rc10 --overwrite
try rc11 --epochs 2
