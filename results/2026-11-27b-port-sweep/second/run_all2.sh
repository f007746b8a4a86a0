#!/bin/sh
# Sweep 2: pure mechanical ports (sed s/torch/minitx/g, no workarounds) -> first failure; *_mech_wa.py = same with each
# failure patched minimally (marked "# WA2:"); idiom files p7/p7b/p10/p11/p13; parity p8, modcmp, p12 (attention), p14 (optimizers); repros.
. /work/venv/bin/activate; export OMP_NUM_THREADS=1; cd /tmp/port_sweep2
(cd /work/main && echo "minitx at $(git rev-parse --short HEAD), uncommitted: $(git status --short | grep -c '^ M') files")
sh mkport.sh
for p in p1_mlp p2_charlm p3_attn p4_cnn p5_sched p6_ckpt p9_pipeline; do
  for v in torch mech mech_wa; do
    printf '=== %s_%s.py: ' "$p" "$v"
    if python -W ignore "${p}_${v}.py" > "out2_${p}_${v}.txt" 2>&1; then echo ok; else echo FAILED: $(tail -1 "out2_${p}_${v}.txt" | cut -c1-150); fi
  done
done
python p8_parity.py > out2_p8_parity.txt 2>&1 && echo "=== p8_parity: $(grep -c '^OK' out2_p8_parity.txt) OK, $(grep -c '^DIFF' out2_p8_parity.txt) DIFF"
python modcmp.py > out2_modcmp.txt 2>&1 && echo "=== modcmp: $(grep -c '^OK' out2_modcmp.txt) OK"
python -W ignore p12_attn_parity.py > out_p12.txt 2>&1; echo "=== p12 attention: $(grep -c '^OK' out_p12.txt) OK, $(grep -c '^DIFF\|^ERR' out_p12.txt) DIFF/ERR"
python -W ignore p14_optim_parity.py > out_p14.txt 2>&1; echo "=== p14 optimizers: $(grep -c '^OK' out_p14.txt) OK, $(grep -c '^DIFF' out_p14.txt) DIFF, $(grep -c '^ERR' out_p14.txt) ERR"
python -W ignore p7_idioms_compare.py p7_snippets.txt > p7_out2.txt 2>&1; python -W ignore p7_idioms_compare.py p7b_snippets.txt > p7b_out2.txt 2>&1
for f in p10 p11 p13; do python -W ignore p10_idioms_compare.py ${f}_snippets.txt > ${f}_out.txt 2>&1; done
for f in p7_out2 p7b_out2 p10_out p11_out p13_out; do echo "=== $f: $(grep -c '^ok' $f.txt) ok, $(grep -c '^DIFF' $f.txt) DIFF, $(grep -c '^ERR' $f.txt) ERR"; done
python -W ignore repros.py > repros_out2.txt 2>&1; echo "=== repros -> repros_out2.txt"
