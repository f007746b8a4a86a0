#!/usr/bin/env bash
# Here, once per checkout, before the first call to a lent GPU machine: what that machine lacks, put
# where a call can carry it (tools/gpu_session/README.md). Idempotent; needs the package index, not a GPU.
#   .whl/   nvmath-python (the capture-safe cuBLAS call) and sacremoses (the published Multi30k metric),
#           wheels for the machine's Python 3.12 on x86-64; it has their dependencies
#   .data/  Multi30k, copied from MINITX_DATA_DIR (default ../shared/data/multi30k)
# Both are ignored by git (.git/info/exclude) and travel with carry=[".whl", ".data"].
set -euo pipefail
cd "$(dirname "$0")/../.."
exclude=.git/info/exclude
mkdir -p "$(dirname $exclude)" && touch $exclude
for path in /.whl/ /.data/; do grep -qxF "$path" $exclude || echo "$path" >> $exclude; done

NVMATH=1.0.0     # nvmath-python: the version the captured step was proved with on an H100 and an H200
SACREMOSES=0.2.0
if ! ls .whl/nvmath_python-$NVMATH-*.whl .whl/sacremoses-$SACREMOSES-*.whl > /dev/null 2>&1; then
  rm -f .whl/nvmath_python-*.whl .whl/sacremoses-*.whl  # one version of each: two would stop the install there
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl nvmath-python==$NVMATH sacremoses==$SACREMOSES
fi

data=${MINITX_DATA_DIR:-$(cd .. && pwd)/shared/data/multi30k}
[ -f "$data/train.de.gz" ] || { echo "prepare.sh: no Multi30k at $data (set MINITX_DATA_DIR)" >&2; exit 1; }
mkdir -p .data/multi30k && cp -u "$data"/*.gz .data/multi30k/
echo "ready: $(ls .whl | tr '\n' ' ')and $(ls .data/multi30k | wc -l) Multi30k files; carry [\".whl\", \".data\"]"
