# Sourced at the start of every command on a lent GPU machine, from the repository root:
#   source tools/gpu_session/env.sh || exit 1
# Installs the carried wheels once per machine (into /tmp/site, which lives as long as the machine stays
# warm), points Python at the source tree and the carried Multi30k, and puts the CUDA tools on PATH.
if [ ! -d /tmp/site/nvmath ] || [ ! -d /tmp/site/sacremoses ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
    { echo "env.sh: the wheels in .whl/ did not install: run tools/gpu_session/prepare.sh here and carry .whl" >&2; return 1; }
fi
export PYTHONPATH=$PWD:/tmp/site MINITX_DATA_DIR=$PWD/.data/multi30k PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin
[ -f "$MINITX_DATA_DIR/train.de.gz" ] ||
  { echo "env.sh: no Multi30k in $MINITX_DATA_DIR: run tools/gpu_session/prepare.sh here and carry .data" >&2; return 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "${OUT:-/tmp}/device.txt"
