. /work/hunt-cli/tiny.sh
tr_() { echo "=== translate $*"; echo "Ein Hund." | python -m minitx.translate translate "$@" 2>&1 | tail -4 | cut -c1-500; echo "rc=${PIPESTATUS[1]}"; }
tr_ --run $H/nonexistent
mkdir -p $H/emptydir; tr_ --run $H/emptydir
tr_ --run $H/t1 --checkpoint epoch-9
tr_ --run $H/t1 --checkpoint last
tr_ --run $H/t1 --checkpoint $H/t2/best.npz
tr_ --run $H/t1 --checkpoint $H/ende/best.npz
tr_ --run $H/t1 --checkpoint best.pt
tr_ --run $H/t1 --checkpoint foo
tr_ --run $H/t1 --beam-size 0
tr_ --run $H/t1 --beam-size -1
tr_ --run $H/t1 --length-penalty -5
tr_ --run $H/t1 --length-penalty nan
tr_ --run $H/t1 --device cuda
tr_ --run $H/t1 --device gpu
tr_ --run $H/t1 --input $H/nonexistent.txt
# damaged copies
mk() { rm -rf $H/$1; cp -r $H/t1 $H/$1; }
mk bad1; head -c 1000 $H/t1/best.npz > $H/bad1/best.npz; tr_ --run $H/bad1
mk bad2; : > $H/bad2/best.npz; tr_ --run $H/bad2
mk bad3; rm $H/bad3/tokenizer.tgt.json; tr_ --run $H/bad3
mk bad4; echo '{"src_lang": ' > $H/bad4/config.json; tr_ --run $H/bad4
mk bad5; cp $H/ende/best.npz $H/bad5/best.npz; tr_ --run $H/bad5
mk bad6; python - <<PY
import numpy as np
p='$H/bad6/best.npz'; z=dict(np.load(p)); k=[k for k in z if k!='minitx_structure'][3]; a=z[k].copy(); a.flat[0]+=1; z[k]=a; np.savez(p, **z)
PY
tr_ --run $H/bad6
mk bad7; python - <<PY
p='$H/bad7/best.npz'; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xFF; open(p,'wb').write(bytes(b))
PY
tr_ --run $H/bad7
mk bad8; rm $H/bad8/results.json $H/bad8/best.npz; tr_ --run $H/bad8
