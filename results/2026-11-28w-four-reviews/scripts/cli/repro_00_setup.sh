# setup used by the other scripts: tiny data dir and the reference runs t1 (40 steps), good (200 steps), encA
mkdir -p /work/hunt-cli/data && cd /work/hunt-cli
for l in de en fr cs; do zcat /work/shared/data/multi30k/train.$l.gz | head -300 | gzip > data/train.$l.gz; zcat /work/shared/data/multi30k/val.$l.gz | head -40 | gzip > data/val.$l.gz; zcat /work/shared/data/multi30k/test_2016_flickr.$l.gz | head -40 | gzip > data/test_2016_flickr.$l.gz; done
. /work/hunt-cli/tiny.sh
rm -rf $H/t1 $H/good $H/encA
python -m minitx.translate train --output-dir $H/t1 $TINY --max-steps 40 --save-every 7 --epochs 100 --average-last 3 --no-progress
python -m minitx.translate train --output-dir $H/good $TINY --max-steps 200 --lr 0.005 --save-every 50 --epochs 100 --no-progress
python -m minitx.encoder pretrain --recipe tiny --data-dir $H/data --d-model 64 --d-ff 128 --max-steps 120 --save-every 7 --output-dir $H/encA --no-progress
