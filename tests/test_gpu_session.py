"""tools/gpu_session: the scripts a session with a lent GPU runs, checked here without one (a mistake
found on the GPU machine costs its minutes): the shell scripts parse, and record.py lays out a call's
returned runs and computes the tables the results quote."""
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from minitx.translate.recipes import build_config

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "tools" / "gpu_session"
sys.path.insert(0, str(KIT))
import record  # noqa: E402


@pytest.mark.parametrize("script", ["prepare.sh", "env.sh", "issue23.sh", "smoke.sh"])
def test_the_shell_scripts_parse(script):
    subprocess.run(["bash", "-n", str(KIT / script)], check=True)


@pytest.mark.parametrize("parts, refusal", [
    ("published-en-de tiny-fr-en", "unknown part 'tiny-fr-en'"),
    ("published-en-de published-de-en base variants-en-de", "at most 3 parts a call (2 files each, 8 come back)")])
def test_a_set_of_runs_that_cannot_run_is_refused_before_anything_runs(tmp_path, parts, refusal):
    settings = {"PATH": "/usr/bin:/bin", "OUT": str(tmp_path), "PROOF": "0", "SET": parts}
    done = subprocess.run(["bash", str(KIT / "issue23.sh")], cwd=ROOT, capture_output=True, text=True, env=settings)
    assert done.returncode == 2 and refusal in done.stderr
    assert not list(tmp_path.iterdir())


def fake_run(folder: Path, name: str, recipe: str, moses: float | None, steps=8000):
    """A run directory as train leaves it (results.json only when it finished), and its checkpoint."""
    run = folder / name
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(build_config(recipe, seed=1), default=list))
    history = [{"epoch": e, "step": e * 65, "complete": True, "train_loss": 3.0 / e, "val_loss": 2.0 / e,
                "seconds": 4.5} for e in (1, 2)]
    (run / "history.json").write_text(json.dumps(history))
    (run / "last.npz").write_bytes(b"not kept")
    if moses is not None:
        (run / "results.json").write_text(json.dumps({"bleu": moses - 2, "bleu_lowercase": moses - 1,
                                                      "bleu_moses_lowercase": moses, "steps": steps,
                                                      "train_seconds": 600.0}))


def pack(files_at: Path, part: str, build):
    folder = files_at.parent / f"work-{files_at.name}-{part}"
    build(folder)
    with tarfile.open(files_at / f"{part}.tar.gz", "w:gz") as archive:
        archive.add(folder, arcname=".")


def test_record_lays_out_finished_and_interrupted_runs_and_averages_the_seeds(tmp_path):
    files_at, results = tmp_path / "out", tmp_path / "results" / "2026-12-01-h100"
    files_at.mkdir()

    def published(folder):
        fake_run(folder, "tiny-en-de-s1", "multi30k-tiny", 41.0)
        fake_run(folder, "tiny-en-de-s2", "multi30k-tiny", 42.0)
        fake_run(folder, "tiny-de-en-s1", "multi30k-tiny", None)
        for run in ("tiny-en-de-s1", "tiny-en-de-s2", "tiny-de-en-s1"):
            (folder / f"{run}.log").write_text(f"log of {run}\n")

    pack(files_at, "published", published)
    pack(files_at, "base", lambda folder: fake_run(folder, "base-en-de", "base", 30.5, steps=5000))
    (files_at / "base.log").write_text("log of the base run\n")
    (files_at / "device.txt").write_text("NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB\n")

    printed = io.StringIO()
    with redirect_stdout(printed):
        assert record.main([str(files_at), str(results)]) == 0
    table = printed.getvalue()

    assert sorted(p.name for p in (results / "training").iterdir()) == ["base-en-de", "tiny-en-de-s1",
                                                                        "tiny-en-de-s2"]
    assert [p.name for p in (results / "interrupted").iterdir()] == ["tiny-de-en-s1"]
    kept = results / "training" / "tiny-en-de-s2"
    assert {"config.json", "history.json", "results.json", "train.log"} <= {p.name for p in kept.iterdir()}
    assert not list(results.rglob("*.npz"))
    assert (kept / "train.log").read_text() == "log of tiny-en-de-s2\n"
    assert (results / "training" / "base-en-de" / "train.log").read_text() == "log of the base run\n"
    assert (results / "logs" / "call-1" / "device.txt").exists() and (results / "logs" / "call-1" / "base.log").exists()
    # one row per run; the seeds of a name averaged, the spread max - min
    assert "| tiny-en-de-s1 | **39.00** | 40.00 | 41.00 | 8000 | 600 |" in table
    assert "| tiny-de-en-s1 | not finished: epoch 2, step 130, validation loss 1.000 |" in table
    assert "| tiny-en-de | 2 | **39.50** (1.00) | 40.50 (1.00) | 41.50 (1.00) |" in table
    assert "| base-en-de | 1 | **28.50** (0.00) |" in table

    # a later call that finished the interrupted run: it moves to training/
    files_at2 = tmp_path / "out2"
    files_at2.mkdir()
    pack(files_at2, "published", lambda folder: fake_run(folder, "tiny-de-en-s1", "multi30k-tiny", 43.0))
    with redirect_stdout(io.StringIO()):
        record.main([str(files_at2), str(results)])
    assert not (results / "interrupted" / "tiny-de-en-s1").exists()
    assert (results / "training" / "tiny-de-en-s1" / "results.json").exists()


def test_record_says_what_it_needs_when_given_the_wrong_folder(tmp_path, capsys):
    with pytest.raises(SystemExit):
        record.main([str(tmp_path), str(tmp_path / "results")])
    assert "no PART.tar.gz" in capsys.readouterr().err


def test_record_never_replaces_a_finished_run_with_an_unfinished_one(tmp_path, capsys):
    """A later call that brings back an unfinished run of a finished run's name (the machine was given
    back between calls and the run started over, say) leaves the finished run where it is, and says so."""
    results = tmp_path / "results" / "2026-12-01-h100"
    files_at, files_at2 = tmp_path / "out", tmp_path / "out2"
    files_at.mkdir(), files_at2.mkdir()
    pack(files_at, "published", lambda folder: fake_run(folder, "tiny-en-de-s1", "multi30k-tiny", 41.0))
    pack(files_at2, "published", lambda folder: fake_run(folder, "tiny-en-de-s1", "multi30k-tiny", None))
    record.main([str(files_at), str(results)])
    capsys.readouterr()
    assert record.main([str(files_at2), str(results)]) == 0
    printed = capsys.readouterr()
    finished = results / "training" / "tiny-en-de-s1"
    assert json.loads((finished / "results.json").read_text())["bleu_moses_lowercase"] == 41.0
    assert not (results / "interrupted" / "tiny-en-de-s1").exists()
    assert "tiny-en-de-s1" in printed.err and "not replaced" in printed.err
    assert "| tiny-en-de-s1 | **39.00** |" in printed.out  # the record's run, finished


DEVICE_TXT = """NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB
started=2026-12-01T10:00:00Z
SET=published-en-de published-de-en
SEEDS=1 2
CALL=560
PROOF=1
TRAIN_ARGS=--device cuda --precision bf16
WORK=/tmp/issue23
ended=2026-12-01T10:09:13Z
exit=1
"""


def test_record_keeps_each_calls_logs_in_a_folder_of_its_own(tmp_path):
    """Call 2's logs have the names call 1's had (PART.log, device.txt): each call's go to
    logs/call-N/, and recording the same call again lays it where it was."""
    results = tmp_path / "results" / "2026-12-01-h100"
    for call, moses in (("out1", 41.0), ("out2", 42.0)):
        files_at = tmp_path / call
        files_at.mkdir()
        pack(files_at, "published-en-de", lambda folder: fake_run(folder, "published-en-de-s1", "multi30k-tiny", moses))
        (files_at / "published-en-de.log").write_text(f"the sweep's table of {call}\n")
        (files_at / "device.txt").write_text(DEVICE_TXT.replace("CALL=560", f"CALL={len(call) * 100}"))
    with redirect_stdout(io.StringIO()):
        for call in ("out1", "out2", "out2"):
            record.main([str(tmp_path / call), str(results)])
    logs = results / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["call-1", "call-2"]
    assert (logs / "call-1" / "published-en-de.log").read_text() == "the sweep's table of out1\n"
    assert (logs / "call-2" / "published-en-de.log").read_text() == "the sweep's table of out2\n"


def test_record_writes_the_commit_and_the_calls_settings(tmp_path):
    """The device has no .git: record.py writes the commit here, whether the working tree was clean, and
    the settings and dates issue23.sh wrote into device.txt, as the command that ran."""
    files_at, results = tmp_path / "out", tmp_path / "results" / "2026-12-01-h100"
    files_at.mkdir()
    pack(files_at, "published-en-de", lambda folder: fake_run(folder, "published-en-de-s1", "multi30k-tiny", 41.0))
    (files_at / "device.txt").write_text(DEVICE_TXT)
    printed = io.StringIO()
    with redirect_stdout(printed):
        record.main([str(files_at), str(results)])
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    call = (results / "logs" / "call-1" / "call.txt").read_text()
    for text in (call, printed.getvalue()):
        assert f"commit: {head}" in text
        assert "working tree: clean" in text or "working tree: dirty" in text
        assert "started: 2026-12-01T10:00:00Z" in text and "ended: 2026-12-01T10:09:13Z, exit 1" in text
        assert ("command: CALL=560 PROOF=1 SET='published-en-de published-de-en' SEEDS='1 2' "
                "TRAIN_ARGS='--device cuda --precision bf16' bash tools/gpu_session/issue23.sh") in text
        assert "device: NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB" in text


# python3 as issue23.sh calls it, faked: each part's exit code and log, the capture tests' output and code
FAKE_PYTHON = """#!/bin/bash
case " $* " in
  *" -m pytest "*) printf '%s\\n' "$FAKE_PYTEST_OUT"; exit ${FAKE_PYTEST_RC:-0} ;;
  *" benchmarks/sweep.py "*) eval "$FAKE_SWEEP" ;;
  *" -m minitx.translate train "*) eval "$FAKE_TRAIN" ;;
esac
exit 99
"""
INTERRUPTED = 'echo "[    40s] interrupted: the running runs save and stop"; echo "[    40s] a-s1 exited 130"; exit 130'


def run_the_kit(tmp_path, **settings):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(FAKE_PYTHON)
    (bin_ / "python3").chmod(0o755)
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "OUT": str(out), "WORK": str(work), "PROOF": "0", "CALL": "100",
           "SEEDS": "1", **settings}
    done = subprocess.run(["bash", str(KIT / "issue23.sh")], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=60)
    return done, out


@pytest.mark.parametrize("sweep, train, code", [
    ('echo "[    84s] a-s1 exited 0"; exit 0', "exit 0", 0),
    (INTERRUPTED, "exit 0", 1),
    ('echo "[    84s] a-s1 exited 0"; exit 0', "exit 130", 1),  # the base run stopped (its log says no 'not finished')
    (INTERRUPTED, "exit 1", 5),  # the base run crashed
    ('echo "[     9s] b-s1 exited 1"; ' + INTERRUPTED, "exit 0", 5),  # a run crashed before the others stopped
    ('echo "[     0s] started a-s1"; exit 137', "exit 0", 5),  # killed 30 s after SIGINT: no table
    ('echo "[    84s] a-s1 exited 1"; exit 1', "exit 0", 5)])
def test_the_exit_code_says_how_the_runs_ended(tmp_path, sweep, train, code):
    done, out = run_the_kit(tmp_path, SET="published-en-de base", FAKE_SWEEP=sweep, FAKE_TRAIN=train)
    assert done.returncode == code, done.stdout + done.stderr
    device = (out / "device.txt").read_text()
    assert f"\nexit={code} (" in device and "started=" in device and "ended=" in device
    assert "SET=published-en-de base\nSEEDS=1\nCALL=100\nPROOF=0\n" in device


@pytest.mark.parametrize("tests_say, rc, code", [
    ("1 failed, 36 passed", 1, 4),
    ("interrupted: timeout", 124, 4),
    ("SKIPPED [16] tests/test_blas_gpu.py:42: needs a CUDA GPU with CuPy\n37 skipped", 0, 3),
    ("SKIPPED [4] tests/test_blas_gpu.py: minitx.blas calls cuBLAS through nvmath-python\n33 passed, 4 skipped", 0, 3),
    # a case skipped for a reason of its own is not the GPU stack missing: the runs go on
    ("SKIPPED [1] tests/test_blas_gpu.py:110: cuBLASLt has no epilogue kernel for this small odd case\n"
     "36 passed, 1 skipped", 0, 0)])
def test_the_capture_tests_decide_whether_anything_runs(tmp_path, tests_say, rc, code):
    done, out = run_the_kit(tmp_path, PROOF="1", SET="published-en-de", FAKE_PYTEST_OUT=tests_say,
                            FAKE_PYTEST_RC=str(rc), FAKE_SWEEP='echo "[    84s] a-s1 exited 0"; exit 0')
    assert done.returncode == code, done.stdout + done.stderr
    assert (out / "published-en-de.log").exists() == (code == 0)
    assert tests_say.splitlines()[-1] in (out / "gpu-tests.log").read_text()
    assert f"\nexit={code} (" in (out / "device.txt").read_text()


def test_the_ops_on_the_gpu_run_after_the_other_gpu_tests_into_a_log_of_their_own(tmp_path):
    """Beside the runs: the gpu tests but the gpu_ops ones, then those alone into gpu-ops.log, so
    that their failures neither stop the others (--maxfail) nor take their time."""
    done, out = run_the_kit(tmp_path, PROOF="1", CALL="200", SET="published-en-de", FAKE_PYTEST_OUT="36 passed",
                            FAKE_SWEEP='sleep 2; echo "[    84s] a-s1 exited 0"; exit 0')
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gpu tests rc=0" in (out / "gpu-tests.log").read_text()
    ops = (out / "gpu-ops.log").read_text()
    assert "36 passed" in ops and "ops on the gpu rc=0" in ops
    kit = (KIT / "issue23.sh").read_text()
    assert '-m "gpu and not gpu_ops" tests' in kit and "-m gpu_ops tests" in kit
    for test in ("test_torch_op_parity.py", "test_low_precision_ops.py", "test_integer_inputs.py"):
        assert "@pytest.mark.gpu\n@pytest.mark.gpu_ops\n" in (ROOT / "tests" / test).read_text(), test


def test_record_lays_what_an_archive_cut_short_holds(tmp_path, capsys):
    """A call cut off while an archive was moved into $OUT brings back its start: the runs it holds whole
    are laid, and a warning names the archive."""
    files_at, results = tmp_path / "out", tmp_path / "results" / "2026-12-01-h100"
    files_at.mkdir()

    def runs(folder):
        fake_run(folder, "tiny-en-de-s1", "multi30k-tiny", 41.0)
        fake_run(folder, "tiny-en-de-s2", "multi30k-tiny", 42.0)
        (folder / "tiny-en-de-s2" / "big.txt").write_bytes(bytes(range(256)) * 4000)  # the archive's tail

    pack(files_at, "published-en-de", runs)
    archive = files_at / "published-en-de.tar.gz"
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size * 2 // 3])
    assert record.main([str(files_at), str(results)]) == 0
    printed = capsys.readouterr()
    assert (results / "training" / "tiny-en-de-s1" / "results.json").exists()
    assert "published-en-de.tar.gz" in printed.err and "cut short" in printed.err


DATA_DIR = Path(os.environ.get("MINITX_DATA_DIR", ROOT.parent / "shared" / "data" / "multi30k"))
LINES = {"train": 300, "val": 20, "test_2016_flickr": 10}


@pytest.mark.slow
def test_every_part_starts_trains_and_finishes_on_the_cpu(tmp_path):
    """smoke.sh on a few hundred lines of Multi30k: every part of issue23.sh, in three calls, starts its
    runs with TRAIN_ARGS, trains them, tests them and exits 0, and record.py lays out every run."""
    if not all((DATA_DIR / f"{split}.{lang}.gz").is_file() for split in LINES for lang in ("de", "en")):
        pytest.skip(f"Multi30k raw files not found in {DATA_DIR} (set MINITX_DATA_DIR to run this test)")
    data = tmp_path / "multi30k"
    data.mkdir()
    for split, count in LINES.items():
        for lang in ("de", "en"):
            with gzip.open(DATA_DIR / f"{split}.{lang}.gz", "rt", encoding="utf-8") as source, \
                    gzip.open(data / f"{split}.{lang}.gz", "wt", encoding="utf-8") as subset:
                subset.writelines(line for _, line in zip(range(count), source))
    env = {**os.environ, "MINITX_DATA_DIR": str(data), "TMPDIR": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(["bash", str(KIT / "smoke.sh")], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke: 15 runs finished and recorded" in done.stdout, done.stdout
    assert done.stdout.count("exit 0: every run finished") == 3
