# common setup for hunt scripts
. /work/venv/bin/activate
export MINITX_DATA_DIR=/work/shared/data/multi30k
H=/work/hunt-cli
TINY="--d-model 32 --num-heads 2 --d-ff 64 --encoder-layers 1 --decoder-layers 1 --vocab-size 400 --max-tokens 1500 --warmup-steps 5 --beam-size 2 --data-dir $H/data"
