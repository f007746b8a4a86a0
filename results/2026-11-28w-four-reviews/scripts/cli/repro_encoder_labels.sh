. /work/hunt-cli/tiny.sh
ft() { echo "=== finetune --labels $*"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 1 --no-progress --labels "$@" 2>&1 | tail -6 | cut -c1-400; echo "rc=${PIPESTATUS[0]}"; }
ft 0
ft 1
ft -3
ft 2
ft 3
ft 600
ft 601
ft 100000
ft 50 20 50
ft 2.5
echo "=== finetune --labels (none)"; python -m minitx.encoder finetune --run $H/enc1 --labels 2>&1 | tail -1
echo "=== finetune --steps 0"; python -m minitx.encoder finetune --run $H/enc1 --steps 0 --labels 10 2>&1 | tail -1
echo "=== finetune --warmup-steps 10 --steps 5"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 10 --labels 10 2>&1 | tail -1
echo "=== finetune --pooling max"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 1 --pooling max --labels 10 2>&1 | tail -1
echo "=== finetune --pooling mean"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 1 --pooling mean --labels 10 2>&1 | tail -3
echo "=== finetune --dropout 1.5"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 1 --dropout 1.5 --labels 10 2>&1 | tail -1
echo "=== finetune --batch-size 0"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --batch-size 0 --labels 10 2>&1 | tail -1
echo "=== finetune --run translation run"; python -m minitx.encoder finetune --run $H/good --steps 5 --warmup-steps 1 --labels 10 2>&1 | tail -1
echo "=== finetune --run nonexistent"; python -m minitx.encoder finetune --run $H/nope --labels 10 2>&1 | tail -1
echo "=== finetune --output dir"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 1 --labels 10 --output $H 2>&1 | tail -1
echo "=== finetune --output in nonexistent dir"; python -m minitx.encoder finetune --run $H/enc1 --steps 5 --warmup-steps 1 --labels 10 --output $H/nodir/t.json 2>&1 | tail -2
