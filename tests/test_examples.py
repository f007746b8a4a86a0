"""The examples ladder (docs/learn.md) runs: every numbered example, with its fast settings
(MINITX_EXAMPLES_FAST=1: fewer training steps; each example asserts what it shows), and the
autograd tour with its drawing."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
LADDER = sorted(EXAMPLES.glob("[0-9][0-9]_*.py"))


def run_example(path, *args, **env):
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", MINITX_EXAMPLES_FAST="1", **env)
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=REPO)


def test_the_ladder_is_numbered_without_gaps():
    assert [int(p.name[:2]) for p in LADDER] == list(range(1, len(LADDER) + 1)) and len(LADDER) >= 8


@pytest.mark.parametrize("path", LADDER, ids=[p.stem for p in LADDER])
def test_a_numbered_example_runs(path):
    done = run_example(path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip()


def test_learn_md_lists_every_example_in_order():
    text = (REPO / "docs" / "learn.md").read_text()
    listed = re.findall(r"examples/(\d\d_\w+\.py)", text)
    ordered = list(dict.fromkeys(listed))  # first mention of each, in order
    assert ordered == [p.name for p in LADDER]


def test_the_tour_draws_its_graph_or_writes_dot_text(tmp_path):
    done = run_example(EXAMPLES / "autograd_tour.py", "--draw", str(tmp_path / "graph.dot"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "graph.dot").read_text().startswith("digraph minitx {")
    assert "[0] y () float32 = sum" in done.stdout and "Cube gradcheck: True" in done.stdout
