. /work/hunt-cli/tiny.sh
p() { echo "=== pretrain $*"; python -m minitx.encoder pretrain "$@" --no-progress 2>&1 | tail -2 | cut -c1-400; echo "rc=${PIPESTATUS[0]}"; }
p --output-dir $H/encA --resume --lr 0.01
p --output-dir $H/encA --resume --max-steps 130
p --output-dir $H/encA --resume --recipe cpu
p --output-dir $H/good --resume
p --output-dir $H/good --recipe tiny
p --recipe tny --output-dir $H/x
p --recipe tiny
p --recipe tiny --output-dir $H/encC --data-dir $H/data --activation swish
p --recipe tiny --output-dir $H/encC --data-dir $H/data --precision fp64
p --recipe tiny --output-dir $H/encC --data-dir $H/data --num-heads 3
p --recipe tiny --output-dir $H/encC --data-dir $H/data --mask-prob 0
p --recipe tiny --output-dir $H/encC2 --data-dir $H/data --mask-prob 1
p --recipe tiny --output-dir $H/encC3 --data-dir $H/data_missing
echo "=== neighbours enc"; python -m minitx.encoder neighbours --run $H/encA --words Hund dog zzzqqq 🐶 -k 3 2>&1 | head -12
echo "=== neighbours translation"; python -m minitx.encoder neighbours --run $H/good --words Hund --analogy Frau Mann Junge -k 3 --side tgt 2>&1 | head -8
echo "=== neighbours -k 100000"; python -m minitx.encoder neighbours --run $H/encA --words Hund -k 100000 2>&1 | head -3 | cut -c1-200
echo "=== neighbours --words (empty)"; python -m minitx.encoder neighbours --run $H/encA --words 2>&1 | head -3
