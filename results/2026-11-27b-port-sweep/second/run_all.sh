#!/bin/sh
# Runs every PyTorch program and its minitx port; prints the last lines of each.
. /work/venv/bin/activate
export OMP_NUM_THREADS=1
cd /tmp/port_sweep2
for p in p1_mlp p2_charlm p3_attn p4_cnn p5_sched p6_ckpt p9_pipeline; do
  for v in torch minitx; do
    printf '=== %s_%s.py: ' "$p" "$v"
    if python "${p}_${v}.py" > "out_${p}_${v}.txt" 2>&1; then echo ok; else echo FAILED; tail -3 "out_${p}_${v}.txt"; fi
  done
done
python p8_parity.py > out_p8_parity.txt 2>&1 && echo "=== p8_parity: ok ($(grep -c '^OK' out_p8_parity.txt) OK, $(grep -c '^DIFF' out_p8_parity.txt) DIFF)"
python modcmp.py > out_modcmp.txt 2>&1 && echo "=== modcmp: ok ($(grep -c '^OK' out_modcmp.txt) OK)"
python p7_idioms_compare.py p7_snippets.txt > p7_out.txt 2>&1; python p7_idioms_compare.py p7b_snippets.txt > p7b_out.txt 2>&1
echo "=== p7 idioms: $(cat p7_out.txt p7b_out.txt | grep -c '^ok') ok, $(cat p7_out.txt p7b_out.txt | grep -c '^DIFF') DIFF, $(cat p7_out.txt p7b_out.txt | grep -c '^ERR') ERR"
