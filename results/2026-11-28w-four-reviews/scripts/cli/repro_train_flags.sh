. /work/hunt-cli/tiny.sh
tf() { d=$H/flag_$RANDOM; echo "=== train $*"; timeout 120 python -m minitx.translate train --output-dir $d $TINY --max-steps 3 --no-progress "$@" 2>&1 | grep -v '^\s*\[' | tail -2 | cut -c1-330; echo "rc=${PIPESTATUS[0]} dir_created=$([ -e $d ] && echo yes || echo no)"; rm -rf $d; }
tf --recipe cpu_quick
tf --max_steps 5
tf --steps 5
tf --epoch 1
tf --lr abc
tf --dropout 1.5
tf --num-heads 3
tf --vocab-size 100
tf --max-tokens 10
tf --src-lang de --tgt-lang de
tf --src-lang xx
tf --epochs 0
tf --max-steps 0
tf --save-every -1
tf --schedule cosine --max-steps ''
tf --accumulate 0
tf --bleu-val-sentences 0
tf --share-embeddings yes
tf --joint-vocab false
tf --device cpu:1
tf --max-len 5
tf --label-smoothing 1.0
tf --warmup-steps -5
tf --time-limit 0
tf --patience -1
