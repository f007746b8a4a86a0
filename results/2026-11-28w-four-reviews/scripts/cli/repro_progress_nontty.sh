# progress bars are written to stderr even when it is a file/pipe (tqdm \r frames in logs); the
# "interrupted" message is glued onto the unfinished bar line
set -m
. /work/hunt-cli/tiny.sh
python -m minitx.translate evaluate --run $H/good 2> $H/pb.err > /dev/null; echo "carriage returns in stderr file: $(tr -cd '\r' < $H/pb.err | wc -c)"
python -m minitx.translate evaluate --run $H/good --beam-size 5 > /dev/null 2> $H/pb2.err & pid=$!; sleep 4; kill -INT $pid; wait $pid
tr '\r' '\n' < $H/pb2.err | grep interrupted
