. /work/hunt-cli/tiny.sh
mkd() { rm -rf $H/$1; cp -r $H/data $H/$1; }
tr_() { d=$1; shift; echo "=== train on $d"; python -m minitx.translate train --output-dir $H/bd_$d $TINY --data-dir $H/$d --max-steps 2 --no-progress "$@" 2>&1 | grep -v '^sacre\|^lower\|^$\|^source\|^refer\|^transl' | tail -3 | cut -c1-400; echo "rc=${PIPESTATUS[0]} dir=$([ -e $H/bd_$d ] && echo created || echo none)"; rm -rf $H/bd_$d; }
mkd dmis; rm $H/dmis/val.en.gz; tr_ dmis
mkd dcor; head -c 300 $H/data/train.de.gz > $H/dcor/train.de.gz; tr_ dcor
mkd dnotgz; zcat $H/data/train.de.gz > $H/dnotgz/train.de.gz; tr_ dnotgz
mkd dalign; zcat $H/data/train.en.gz | head -290 | gzip > $H/dalign/train.en.gz; tr_ dalign
mkd dempty; zcat $H/data/train.en.gz | sed '5s/.*//' | gzip > $H/dempty/train.en.gz; tr_ dempty
mkd dlatin; zcat $H/data/train.de.gz | iconv -f utf-8 -t latin1 | gzip > $H/dlatin/train.de.gz; tr_ dlatin
mkd dzero; : | gzip > $H/dzero/train.de.gz; : | gzip > $H/dzero/train.en.gz; tr_ dzero
