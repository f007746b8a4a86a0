"""Several translation runs side by side on one machine, over seeds, and one table of their scores.

    PYTHONPATH=$PWD python3 benchmarks/sweep.py OUT_DIR --parallel 4 --seeds 1 2 3 \
        --run "tiny-en-de: --recipe multi30k-tiny --src-lang en --tgt-lang de" \
        --run "tiny-de-en: --recipe multi30k-tiny" --train-args "--device cuda"

Each ``--run "NAME: OPTIONS"`` is ``python -m minitx.translate train OPTIONS`` (plus ``--train-args``),
trained once per seed into OUT_DIR/NAME-s<seed> (log beside it: NAME-s<seed>.log), at most
``--parallel`` at a time (a GPU holds several small models at once). A run directory that already
holds a finished run (results.json) is kept and scored, not trained again, so a sweep cut off by a
time limit goes on where it stopped when given the same command: an unfinished run with a
checkpoint resumes (``--resume``, to the bits it would have reached uncut), one without starts
over. Stop a sweep with SIGINT (Ctrl-C, or ``timeout -s INT``; plain SIGTERM kills the runs
unsaved): the running runs save their checkpoints and stop, and the table says what finished.
At the end: one line per run (test BLEU, lowercased, the published tables' lowercased
Moses-tokenized BLEU when sacremoses is installed, training seconds), the mean and spread over
the seeds of each NAME, and OUT_DIR/sweep.json with all of it. Exit code 0 when every run
finished, 130 when interrupted, else 1.
"""
from __future__ import annotations

import argparse
import json
import shlex
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCORES = ("bleu", "bleu_lowercase", "bleu_moses_lowercase", "train_seconds")
INTERRUPTED = 130  # as the train command exits when stopped by Ctrl-C


def parse_run(text: str) -> tuple:
    """'NAME: OPTIONS' -> (NAME, [options])."""
    name, sep, options = text.partition(":")
    name = name.strip()
    if not sep or not name or not name.replace("-", "").replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"a run is 'NAME: OPTIONS' with NAME of letters, digits, - and _, got {text!r}")
    options = shlex.split(options)
    for reserved in ("--output-dir", "--seed", "--resume"):
        if reserved in options:
            raise argparse.ArgumentTypeError(f"run {name!r}: {reserved} is the sweep's to set")
    return name, options


def command(options, seed, run_dir) -> list:
    """The run's train command: resuming its checkpoint where it has one, else a new run."""
    again = "--resume" if (run_dir / "last.npz").exists() and (run_dir / "config.json").exists() else "--overwrite"
    return [sys.executable, "-m", "minitx.translate", "train", *options, "--seed", str(seed),
            "--output-dir", str(run_dir), "--no-progress", again]


def summarize(rows) -> list:
    """Per NAME: the number of finished seeds and each score's mean and spread (max - min)."""
    names = sorted({r["name"] for r in rows}, key=[r["name"] for r in rows].index)
    table = []
    for name in names:
        done = [r for r in rows if r["name"] == name and r["finished"]]
        entry = {"name": name, "finished": len(done)}
        for key in SCORES:
            values = [r[key] for r in done if r.get(key) is not None]
            if values:
                entry[key] = {"mean": round(statistics.fmean(values), 2), "spread": round(max(values) - min(values), 2)}
        table.append(entry)
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("out_dir")
    parser.add_argument("--run", type=parse_run, action="append", required=True, help="'NAME: train options'")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--parallel", type=int, default=1, help="runs at a time")
    parser.add_argument("--train-args", default="", help="options added to every run (e.g. '--device cuda')")
    args = parser.parse_args(argv)
    names = [name for name, _ in args.run]
    if len(set(names)) != len(names):
        parser.error(f"run names must differ, got {names}")
    if args.parallel < 1:
        parser.error("--parallel must be at least 1")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = shlex.split(args.train_args)
    jobs = [(name, options + common, seed, out / f"{name}-s{seed}") for name, options in args.run for seed in args.seeds]
    waiting = [job for job in jobs if not (job[3] / "results.json").exists()]
    running, codes = [], {}
    started = time.perf_counter()

    def reap(entry):
        process, log, run_dir = entry
        log.close()
        running.remove(entry)
        codes[run_dir.name] = process.returncode
        print(f"[{time.perf_counter() - started:6.0f}s] {run_dir.name} exited {process.returncode}", flush=True)

    interrupted = False
    try:
        while waiting or running:
            while waiting and len(running) < args.parallel:
                name, options, seed, run_dir = waiting.pop(0)
                log = open(out / f"{run_dir.name}.log", "a")  # (a resumed run's log goes on)
                process = subprocess.Popen(command(options, seed, run_dir), stdout=log, stderr=subprocess.STDOUT,
                                           cwd=ROOT)
                running.append((process, log, run_dir))
                print(f"[{time.perf_counter() - started:6.0f}s] started {run_dir.name}", flush=True)
            time.sleep(0.2)
            for entry in [e for e in running if e[0].poll() is not None]:
                reap(entry)
    except KeyboardInterrupt:
        # Ctrl-C, or `timeout -s INT`: each running run saves its checkpoint and stops (the
        # trainer's own answer to SIGINT), so the same command resumes it later. A signal sent to
        # the process group has reached them already; one sent to this process alone is passed on.
        interrupted = True
        # a second SIGINT (Ctrl-C twice; or `timeout`, forwarding one it was sent itself, beside the one
        # the process group got) must not cut this short: the table would not be written
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"[{time.perf_counter() - started:6.0f}s] interrupted: the running runs save and stop", flush=True)
        deadline = time.perf_counter() + 2
        while time.perf_counter() < deadline and any(e[0].poll() is None for e in running):
            time.sleep(0.1)
        for process, _, _ in running:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for entry in list(running):
            entry[0].wait()
            reap(entry)
        signal.signal(signal.SIGINT, previous)
    rows = []
    for name, _, seed, run_dir in jobs:
        results = run_dir / "results.json"
        row = {"name": name, "seed": seed, "run": run_dir.name, "finished": results.exists(),
               "exit_code": codes.get(run_dir.name)}
        if results.exists():
            scores = json.loads(results.read_text())
            row.update({key: scores.get(key) for key in SCORES})
        rows.append(row)
    print(f"\n{'run':<28} {'BLEU':>6} {'lc':>6} {'moses':>6} {'train s':>8}")
    for r in rows:
        cells = [f"{r[k]:.2f}" if r.get(k) is not None else "-" for k in SCORES[:3]]
        seconds = f"{r['train_seconds']:.0f}" if r.get("train_seconds") is not None else "-"
        print(f"{r['run']:<28} {cells[0]:>6} {cells[1]:>6} {cells[2]:>6} {seconds:>8}"
              + ("" if r["finished"] else f"   (not finished: exit {r['exit_code']}, see {r['run']}.log)"))
    summary = summarize(rows)
    print(f"\n{'name':<22} {'seeds':>5} {'BLEU mean (spread)':>20} {'moses mean (spread)':>20}")
    for s in summary:
        bleu, moses = (f"{s[k]['mean']:.2f} ({s[k]['spread']:.2f})" if k in s else "-"
                       for k in ("bleu", "bleu_moses_lowercase"))
        print(f"{s['name']:<22} {s['finished']:>5} {bleu:>20} {moses:>20}")
    (out / "sweep.json").write_text(json.dumps({"runs": rows, "summary": summary}, indent=1))
    if interrupted:
        print("interrupted: the same command goes on where this stopped", file=sys.stderr)
        return INTERRUPTED
    return 0 if all(r["finished"] for r in rows) else 1


if __name__ == "__main__":
    # a command a non-interactive shell starts with `&` (nohup, CI runners, cron) begins with SIGINT
    # ignored, and Python then installs no KeyboardInterrupt: the SIGINT that stops a sweep would be lost
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
