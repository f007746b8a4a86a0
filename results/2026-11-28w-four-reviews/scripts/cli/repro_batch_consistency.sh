# translate all 40 test lines at once vs one at a time; evaluate's hyp vs translate; beam/lp variants
. /work/hunt-cli/tiny.sh
R=$H/good
zcat $H/data/test_2016_flickr.de.gz > $H/test40.de
for b in 1 5; do
  python -m minitx.translate translate --run $R --beam-size $b --input $H/test40.de > $H/all.b$b 2>/dev/null
  : > $H/one.b$b
  for i in $(seq 1 12); do sed -n "${i}p" $H/test40.de | python -m minitx.translate translate --run $R --beam-size $b 2>/dev/null >> $H/one.b$b; done
  head -12 $H/all.b$b | diff - $H/one.b$b > /dev/null && echo "beam $b: batch == one-by-one (12 lines)" || { echo "beam $b: batch != one-by-one"; head -12 $H/all.b$b | diff - $H/one.b$b | head; }
done
diff -q $H/all.b1 $H/all.b5 >/dev/null && echo "beam1 == beam5 outputs (all 40)" || echo "beam1 and beam5 differ on $(diff <(cat $H/all.b1) <(cat $H/all.b5) | grep -c '^<') lines"
for lp in 0 0.6 2; do python -m minitx.translate translate --run $R --beam-size 5 --length-penalty $lp --input $H/test40.de > $H/all.lp$lp 2>/dev/null; done
for lp in 0 2; do echo "lp $lp vs 0.6: $(diff $H/all.lp$lp $H/all.lp0.6 | grep -c '^<') lines differ; mean words: $(awk '{n+=NF} END{print n/NR}' $H/all.lp$lp) vs $(awk '{n+=NF} END{print n/NR}' $H/all.lp0.6)"; done
python -m minitx.translate translate --run $R --beam-size 2 --input $H/test40.de > $H/all.b2 2>/dev/null
diff -q $H/all.b2 $R/test_2016_flickr.hyp.en && echo "translate beam2 == train's test hyp file"
python -m minitx.translate translate --run $R --beam-size 5 --beam-search fairseq --input $H/test40.de > $H/all.fs 2>/dev/null; echo "fairseq vs gnmt beam5: $(diff $H/all.fs $H/all.b5 | grep -c '^<') differ"
