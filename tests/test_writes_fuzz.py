"""Random programs of recorded writes, views, raw arrays, saving ops, hooks, in-place methods and
backward (tools/fuzz_writes.py; run it for tens of thousands), each run with writes going in place
where minitx.autograd.writes.in_place allows it and with every write forced into a copy: every
logged value, gradient and error the same, bit for bit. A fixed sample of seeds, so CI repeats it,
in a process of its own (the fuzzer collects garbage twice a program: in the test session's heap
that took minutes)."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_recorded_programs_give_the_copying_paths_bits():
    env = dict(os.environ, RECORDED_ONLY="1", PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "fuzz_writes.py"), "300", "2026"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "300 programs (seeds 2026..2325); 0 differ; 0 crashed outside steps" in run.stdout, run.stdout[-3000:]
    decisions = re.search(r"in_place decisions in the new runs: \{.*True: (\d+)", run.stdout)
    steps = re.search(r"'rows': (\d+)", run.stdout)
    assert decisions and int(decisions.group(1)) > 300  # many writes went in place
    assert steps and int(steps.group(1)) > 100  # the loops keeping their rows' views ran
