"""Random programs of recorded writes, views, raw arrays, saving ops, hooks, in-place methods and
backward (tools/fuzz_writes.py; run it for tens of thousands), each run with writes going in place
where minitx.autograd.writes.in_place allows it and with every write forced into a copy: every
logged value, gradient and error the same, bit for bit. A fixed sample of seeds, so CI repeats it."""
import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "fuzz_writes.py"
spec = importlib.util.spec_from_file_location("fuzz_writes", TOOL)
fw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fw)


def test_recorded_programs_give_the_copying_paths_bits():
    bad, crashed, steps = fw.fuzz(300, first=2026, recorded_only=True)
    assert not crashed
    assert not bad, [f"seed {seed}: entry {d[0]}: {d[1]!r:.200} != {d[2]!r:.200}" for seed, _, d in bad[:5]]
    assert steps["rows"] > 100 and fw.DECISIONS[True] > 300  # the loops ran, and many writes went in place
