#!/bin/sh
# Mechanical port: every "torch" -> "minitx" (imports, torch.nn.functional, torch.utils.data, lr_scheduler ...). No workarounds.
cd /tmp/port_sweep2
for f in p1_mlp p2_charlm p3_attn p4_cnn p5_sched p6_ckpt p9_pipeline; do
  sed 's/torch/minitx/g' ${f}_torch.py > ${f}_mech.py
done
