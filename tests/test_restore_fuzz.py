"""Edited-but-valid checkpoints restored by the Trainer (tools/fuzz_restore.py; run it for
thousands): each is refused with a ValueError naming last.npz, or the run goes on; never another
exception from deep inside. Before the restore checks, 92 of 600 such files raised a raw
TypeError, KeyError, OverflowError, AttributeError or FloatingPointError."""
import collections
import contextlib
import importlib.util
import io
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "fuzz_restore.py"
spec = importlib.util.spec_from_file_location("fuzz_restore", TOOL)
fr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fr)


def test_every_edited_checkpoint_is_refused_naming_the_file_or_runs(tmp_path):
    outcomes = collections.Counter()
    failures = []
    with contextlib.redirect_stderr(io.StringIO()):  # the runs' logs
        for kind, what, result in fr.fuzz(300, seed=2026, directory=tmp_path):
            outcomes[result if result in (fr.REFUSED, fr.RAN) else "FAILURE"] += 1
            if result not in (fr.REFUSED, fr.RAN):
                failures.append(f"{kind} {what}: {result}")
    assert not failures, "\n".join(failures[:20])
    assert outcomes[fr.REFUSED] > 150  # most edits are caught; the rest are ones a run may take
