# --overwrite a run of the other kind: the other kind's files stay, and the mixed directory confuses later commands
. /work/hunt-cli/tiny.sh
# (needs $H/encA from repro_encoder_resume.sh and $H/t1 from the first run in repro_int_resume.sh's header)
rm -rf $H/ow2; cp -r $H/encA $H/ow2
python -m minitx.translate train --output-dir $H/ow2 --overwrite $TINY --max-steps 2 --no-progress > /dev/null 2>&1; echo "rc=$?"; ls $H/ow2 | tr '\n' ' '; echo
python -m minitx.encoder neighbours --run $H/ow2 --words Hund -k 3 2>&1 | tail -1
python -m minitx.encoder neighbours --run $H/t1 --words Hund -k 3 2>&1 | tail -1   # a clean translation run works
rm -rf $H/ow6; cp -r $H/t1 $H/ow6
python -m minitx.encoder pretrain --recipe tiny --output-dir $H/ow6 --overwrite --data-dir $H/data --no-progress > /dev/null 2>&1; echo "rc=$?"; ls $H/ow6 | tr '\n' ' '; echo
