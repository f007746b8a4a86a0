"""The benchmark scripts cannot rot: each answers --help without CuPy or PyTorch, and runs its
smoke mode (tiny shapes on the CPU; the kernels through the CPU emulation) to the end."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
SCRIPTS = ["bench_kernels.py", "bench_train_step.py", "sanitize_kernels.py", "bench_ladder.py", "profile_train_step.py",
           "same_run.py", "time_to_bleu.py", "sweep.py", "bench_checkpoints.py", "bench_decode.py",
           "bench_row_writes.py"]
needs_gxx = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "g++")) is None,
                               reason="the CPU kernel emulation needs g++")


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script):
    assert "usage:" in run(BENCH / script, "--help")


def test_bench_kernels_dry_run_lists_every_benchmark():
    out = run(BENCH / "bench_kernels.py", "--dry-run")
    for name in ("softmax", "layer_norm d=512", "cross_entropy", "attention causal", "dropout_add",
                 "bias+relu+dropout", "embedding", "adam step base"):
        assert name in out


@needs_gxx
@pytest.mark.parametrize("dtype, tf32", [("float32", False), ("float32", True), ("bfloat16", False)])
def test_bench_kernels_cpu_smoke(tmp_path, dtype, tf32):
    """Every benchmark both ways; attention's also with its backward as two kernels (two-pass),
    and on the tensor cores where the dtype allows: bfloat16, or float32 under --tf32; in bfloat16
    (issue 22's kernel figures) every one but Adam's, whose master weights are float32."""
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    out = tmp_path / "kernels.json"
    run(BENCH / "bench_kernels.py", "--device", "cpu", "--repeat", "1", "--warmup", "0", "--no-torch",
        "--dtype", dtype, "--out", out, *(["--tf32"] if tf32 else []))
    report = json.loads(out.read_text())
    assert report["dtype"] == dtype and report["tf32"] == tf32
    names = {r["name"] for r in report["results"]}
    on_tensor_cores = {r["name"] for r in report["results"] if r["path"] == "mma"}
    assert on_tensor_cores == ({n for n in names if n.startswith("attention")} if dtype == "bfloat16" or tf32
                               else set())
    two_pass = {r["name"] for r in report["results"] if r["path"] == "two-pass"}
    assert two_pass == {n for n in names if n.startswith("attention")}
    assert {r["path"] for r in report["results"]} - {"mma", "two-pass"} == {"fused", "reference"}
    assert len(report["ratios"]) == len(names) + len(two_pass) + len(on_tensor_cores)
    assert any(r["name"].startswith("adam") for r in report["results"]) == (dtype != "bfloat16")


def test_bench_train_step_cpu_smoke(tmp_path):
    out = tmp_path / "train.json"
    run(BENCH / "bench_train_step.py", "--device", "cpu", "--smoke", "--steps", "1", "--warmup", "0", "--no-torch",
        "--out", out)
    rows = json.loads(out.read_text())["results"]
    assert [r["preset"] for r in rows] == ["seed004-small", "base", "gpu-best"]
    assert all(r["minitx"]["tokens_per_s"] > 0 for r in rows)


def test_a_timed_sample_is_a_block_of_calls_back_to_back(monkeypatch):
    """Timer(block=N): each sample runs fn N times between one pair of clock readings and gives
    their mean; the warm-up calls are not timed."""
    sys.path.insert(0, str(BENCH))
    import bench_kernels

    clock, calls = iter(range(0, 1000, 6)), []  # perf_counter: 0, 6, 12, ... seconds, read twice a sample
    monkeypatch.setattr(bench_kernels.time, "perf_counter", lambda: next(clock))
    ms = bench_kernels.Timer("cpu")(lambda: calls.append(1), warmup=2, repeat=5, block=3)
    assert len(calls) == 2 + 5 * 3 and ms == 6 * 1e3 / 3


def test_the_pytorch_twin_drops_the_feed_forwards_activations_at_activation_dropout():
    """multi30k-tiny-published drops nothing inside the feed-forward (activation_dropout 0) where
    dropout is 0.3: the PyTorch twin did its work at 0.3 there."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(BENCH))
    import bench_train_step as bench

    cfg = dict(bench.model_settings("multi30k-tiny-published"), src_vocab=50, tgt_vocab=50, **bench.TINY)
    assert cfg["dropout"] == 0.3 and cfg["activation_dropout"] == 0.0
    feed_forward = next(m for name, m in bench.torch_model(torch, cfg).named_modules()
                        if name.endswith("feed_forward")).train()
    x = torch.randn(4, 3, cfg["d_model"])
    torch.testing.assert_close(feed_forward(x), feed_forward(x), rtol=0, atol=0)


def test_the_bench_steps_run_under_autocast_on_both_sides():
    """--precision bf16's steps (a GPU's to time) run: here one step of each on the CPU, the
    tiny model, minitx's under minitx.autocast and the PyTorch twin's under torch.autocast."""
    pytest.importorskip("ml_dtypes")
    sys.path.insert(0, str(BENCH))
    import bench_train_step as bench

    cfg = dict(bench.model_settings("seed004-small"), src_vocab=50, tgt_vocab=50, **bench.TINY)
    src, tgt = bench.make_batch(64, 8, 50)
    step, _ = bench.minitx_step(cfg, src, tgt, "cpu", autocast="bfloat16")
    step()
    torch = pytest.importorskip("torch")
    torch_step, _ = bench.torch_step(torch, cfg, src, tgt, "cpu", autocast="bfloat16")
    torch_step()


def test_profile_train_step_cpu_smoke(tmp_path):
    """On the CPU the profile is the host view alone: the step and the functions under it."""
    out = tmp_path / "profile.json"
    printed = run(BENCH / "profile_train_step.py", "--device", "cpu", "--preset", "seed004-small", "--tokens", "64",
                  "--length", "8", "--vocab", "50", "--steps", "1", "--warmup", "0", "--top", "5", "--out", out)
    report = json.loads(out.read_text())
    assert "kernels" not in report and len(report["host_by_cumulative"]) == 5
    assert any("step" in r["function"] for r in report["host_by_cumulative"])
    assert "host, with callees" in printed


def test_profile_train_step_takes_bf16_and_keeps_pytorch_to_the_gpu(tmp_path):
    """--precision bf16 profiles the autocast step; --torch (PyTorch's twin) is a GPU view only."""
    out = tmp_path / "profile.json"
    run(BENCH / "profile_train_step.py", "--device", "cpu", "--preset", "seed004-small", "--tokens", "64",
        "--length", "8", "--vocab", "50", "--steps", "1", "--warmup", "0", "--top", "400", "--precision", "bf16",
        "--out", out)
    report = json.loads(out.read_text())
    assert report["precision"] == "bf16" and report["of"] == "minitx"
    assert any(r["function"].startswith("amp.py:") for r in report["host_by_own"])  # casts under autocast (top 400: all)
    refused = subprocess.run([sys.executable, str(BENCH / "profile_train_step.py"), "--device", "cpu", "--torch"],
                             capture_output=True, text=True)
    assert refused.returncode == 2 and "--graphs and --torch need --device cuda" in refused.stderr


def test_profile_train_step_lists_the_ops_of_a_step_by_dtype(tmp_path):
    """--ops: one eager step's ops grouped by dtypes; under bf16 the casts are rows of their own,
    and no forward op is given two floating dtypes (the fused kernels would refuse it)."""
    out = tmp_path / "ops.json"
    printed = run(BENCH / "profile_train_step.py", "--device", "cpu", "--preset", "seed004-small", "--tokens", "64",
                  "--length", "8", "--vocab", "50", "--precision", "bf16", "--ops", "--out", out)
    ops = json.loads(out.read_text())["ops"]
    forward = [r for r in ops if r["pass"] == "forward"]
    assert {"Linear", "Astype", "CrossEntropy"} <= {r["op"] for r in forward}
    assert any(r["op"] == "Astype" and r["dtypes"] == "f32 -> bf16" for r in forward)
    for r in forward:
        floating = {d for d in r["dtypes"].split(" -> ")[0].split(",") if d in ("f32", "bf16")}
        assert len(floating) <= 1 or r["op"] == "Astype", r
    assert {r["pass"] for r in ops} == {"forward", "backward"} and all(r["calls"] > 0 for r in ops)
    assert "forward:" in printed and "backward:" in printed


def test_bench_checkpoints_times_both_ways_on_the_cpu(tmp_path):
    """A small model's full checkpoint saved in the step and handed over: both rows, the files
    written (and removed with their temporary directory). Each save timed twice: the steps
    blocked, and the whole save to its file on disk, the same time in the step and longer than
    the blocked time handed over (the writing goes on after the hand-over)."""
    out = tmp_path / "ck.json"
    printed = run(BENCH / "bench_checkpoints.py", "--device", "cpu", "--preset", "seed004-small", "--vocab", "50",
                  "--saves", "2", "--apart", "0.1", "--dir", tmp_path, "--out", out)
    report = json.loads(out.read_text())
    assert set(report["results"]) == {"in the step", "handed over"} and report["checkpoint_bytes"] > 12 * 10**6
    for row in report["results"].values():
        assert len(row["each_blocked_ms"]) == len(row["each_wall_ms"]) == 2
        assert all(w >= b > 0 for b, w in zip(row["each_blocked_ms"], row["each_wall_ms"]))
    step, handed = report["results"]["in the step"], report["results"]["handed over"]
    assert step["each_wall_ms"] == step["each_blocked_ms"] and handed["wall_ms"] > handed["blocked_ms"]
    assert "steps blocked" in printed and "whole save" in printed and "the steps wait" in printed
    assert [p.name for p in tmp_path.iterdir()] == ["ck.json"]


def _fake_run(folder, weight, translation="a dog ."):
    """A run directory as train writes it, with one weight and one translation to vary."""
    import minitx

    folder.mkdir()
    state = {"model": {"w": np.array([1.0, weight])}, "optimizer": {"state": [], "param_groups": []},
             "schedule": {}, "rng": {"seed": 1}, "progress": {"step": 3, "train_seconds": weight}}
    minitx.save(state, folder / "last.npz")
    minitx.save({"model": state["model"]}, folder / "best.npz")
    (folder / "history.json").write_text(json.dumps([{"epoch": 1, "val_loss": 2.0, "seconds": weight}]))
    (folder / "results.json").write_text(json.dumps({"bleu": 30.0, "train_seconds": weight}))
    (folder / "test_2016_flickr.hyp.en").write_text(translation + "\n")
    return folder


def test_same_run_finds_what_differs_and_ignores_the_clock(tmp_path):
    a = _fake_run(tmp_path / "a", 2.0)
    same = _fake_run(tmp_path / "same", 2.0)
    proc = subprocess.run([sys.executable, str(BENCH / "same_run.py"), str(a), str(same)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0 and "DIFFERS" not in proc.stdout, proc.stdout + proc.stderr
    other = _fake_run(tmp_path / "other", 2.0 + 1e-12, translation="a cat .")
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(BENCH / "same_run.py"), str(a), str(other), "--json", str(report)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    items = json.loads(report.read_text())["items"]
    assert proc.returncode == 1
    assert not items["last.npz model"]["same"] and items["last.npz model"]["largest_difference"] > 0
    assert not items["test_2016_flickr.hyp.en"]["same"]
    assert items["history.json"]["same"] and items["results.json"]["same"]  # only their seconds differ
    (a / "test_2016_flickr.hyp.en").unlink()
    proc = subprocess.run([sys.executable, str(BENCH / "same_run.py"), str(a), str(same)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 1 and "MISSING" in proc.stdout  # a translation in one run only


@needs_gxx
def test_bench_ladder_cpu_smoke_times_every_rung():
    from minitx.kernels import ladder

    out = run(BENCH / "bench_ladder.py", "--cpu", "--repeat", "1", "--warmup", "0")
    for name in ("reference", *ladder.RUNGS["softmax"], "softmax.cu", *ladder.RUNGS["layer_norm"], "layer_norm.cu"):
        assert f" {name} " in out


def test_bench_ladder_without_a_gpu_skips():
    from minitx import kernels

    if kernels.available():
        pytest.skip("a GPU is present")
    assert "skipped" in run(BENCH / "bench_ladder.py")


@needs_gxx
def test_bench_row_writes_runs_both_ways_and_restores_in_place():
    """Tiny lengths: a row per T, both ways' gradients equal (the script checks), in_place as found."""
    out = run(BENCH / "bench_row_writes.py", "--lengths", "3", "6", "--rounds", "1", "--batch", "2",
              "--hidden", "3", "--inputs", "2")
    rows = [line for line in out.splitlines() if line.startswith("| 3 |") or line.startswith("| 6 |")]
    assert len(rows) == 2 and all(len(row.split("|")) == 11 for row in rows)


def test_sanitize_script_launches_every_kernel():
    assert "launched all" in run(BENCH / "sanitize_kernels.py", "--cpu")


def run_gpu_sh(tmp_path, only, **env):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "MINITX_DATA_DIR")} | env | {"ONLY": only}
    return subprocess.run([bash, str(BENCH / "run_gpu.sh"), str(tmp_path / "out")], capture_output=True,
                          text=True, env=env, timeout=120)


def test_run_gpu_script_parses():
    subprocess.run([shutil.which("bash") or "bash", "-n", str(BENCH / "run_gpu.sh")], check=True)


def test_run_gpu_rejects_an_unknown_stage(tmp_path):
    proc = run_gpu_sh(tmp_path, "gpu-test")
    assert proc.returncode == 2 and "unknown stage 'gpu-test'" in proc.stderr


def test_run_gpu_leaves_few_files_and_reports_every_stage(tmp_path):
    # PYTHON=true stands in for a python3 whose every command passes
    proc = run_gpu_sh(tmp_path, "gpu-tests translate-smoke", PYTHON="true")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["device.txt", "logs.tar.gz", "summary.txt"]
    summary = (out / "summary.txt").read_text()
    assert "gpu-tests rc=0" in summary
    assert "translate-smoke skipped: no Multi30k in MINITX_DATA_DIR" in summary
    assert proc.returncode == 1  # a wanted stage that could not run fails the script
    with tarfile.open(out / "logs.tar.gz") as tar:
        assert "logs/gpu-tests.log" in tar.getnames()


def test_time_in_rounds_rotates_the_order_and_reports_every_round():
    """bench_train_step's rounds: round r starts r runs down the list of live runs; a run just
    built warms up (minitx at least 2 steps), one timed before takes 1 step; every build and
    timing happens inside the run's environment; a graph run whose replay fails in a later round
    is reported, dropped from the results and from the rounds after, and its step is collected
    before free() runs; with one round each run is built, timed and freed in turn."""
    import weakref

    sys.path.insert(0, str(BENCH))
    import bench_train_step as bench

    calls, built, freed, said, refs = [], [], [], [], {}

    class Step:
        def __call__(self):
            pass

    def fake(label, n_params, fail_at=None):
        def build():
            assert os.environ.get("BENCH_RUN") == label
            built.append(label)
            step = Step()
            refs[label] = weakref.ref(step)
            return step, n_params

        def timer(step, warmup, steps, block):
            assert os.environ.get("BENCH_RUN") == label and steps == 7 and block == 3
            calls.append((label, warmup))
            if sum(c[0] == label for c in calls) == fail_at:
                raise RuntimeError("replay refused")
            return float(len(calls))
        return label, {"BENCH_RUN": label}, timer, build

    def free():
        freed.append(sorted(label for label, ref in refs.items() if ref() is None))

    A, G, T, C = "minitx fused", "minitx graphs", "torch eager", "torch compile"
    plan = [fake(A, 10), fake(G, 10, fail_at=2), fake(T, 11), fake(C, 11)]
    out = bench.time_in_rounds(plan, 3, 0, 7, free,  # (an error kept would keep its frames, and the step)
                               lambda label, ms, r: said.append((label, getattr(ms, "args", ms), r)), block=3)
    assert calls == [(A, 2), (G, 2), (T, 0), (C, 0),  # round 1, each just built
                     (G, 1), (T, 1), (C, 1), (A, 1),  # round 2 from the 2nd: the graph run's replay fails
                     (C, 1), (A, 1), (T, 1)]          # round 3 from the 3rd of the three left
    assert out == {A: ([1.0, 8.0, 10.0], 10), T: ([3.0, 6.0, 11.0], 11), C: ([4.0, 7.0, 9.0], 11)}
    assert built == [A, G, T, C] and freed == [[G]]
    failure = [s for s in said if s[1] == ("replay refused",)]
    assert [s[2] for s in failure] == [1] and len(said) == 11 and "BENCH_RUN" not in os.environ

    calls.clear(), built.clear(), freed.clear(), refs.clear()
    out = bench.time_in_rounds([plan[0], plan[2]], 1, 4, 7, free, lambda *a: None, 3)
    assert calls == [(A, 4), (T, 4)] and built == [A, T] and freed == [[A], [A, T]]
    assert out == {A: ([1.0], 10), T: ([2.0], 11)}


def test_bench_train_step_refuses_no_rounds():
    proc = subprocess.run([sys.executable, str(BENCH / "bench_train_step.py"), "--device", "cpu", "--rounds", "0"],
                          capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 2 and "--rounds and --steps must be at least 1, got 0 and 20" in proc.stderr
