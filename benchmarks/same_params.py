"""Whether two runs ended with the same parameters, bit for bit: their last.npz model tensors.

    python3 benchmarks/same_params.py RUN_DIR_A RUN_DIR_B

Prints the verdict (and the first tensors that differ, with their largest difference); exits 0
when every tensor is identical, 1 otherwise. run_gpu.sh's translate-graphs stage uses it to
compare a run replayed from CUDA graphs with the same run stepped eagerly."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install

from minitx.serialization import load  # noqa: E402


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = (load(Path(run) / "last.npz")["model"] for run in argv)
    if sorted(a) != sorted(b):
        print(f"different models: {sorted(set(a) ^ set(b))[:5]}")
        return 1
    bad = [name for name in a if not np.array_equal(a[name], b[name])]
    if not bad:
        print(f"{len(a)} tensors, bit-identical")
        return 0
    worst = ", ".join(f"{name} (max |diff| {np.abs(a[name].astype(np.float64) - b[name]).max():.3g})"
                      for name in bad[:5])
    print(f"{len(bad)} of {len(a)} tensors differ: {worst}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
