"""Lay what a call of tools/gpu_session/issue23.sh brought back into a dated results folder, and print
its table (tools/gpu_session/README.md):

    python tools/gpu_session/record.py FILES_AT results/2026-11-27-h100

FILES_AT is the folder the device tool put the call's $OUT files in. Every run in each PART.tar.gz
goes to RESULTS/training/RUN/ when it finished (results.json) and to RESULTS/interrupted/RUN/ when it
did not, with config.json, history.json, results.json and its log as train.log (the checkpoints,
tokenizers and translations stay behind), and history.png when matplotlib is installed; the call's
logs and device.txt go to RESULTS/logs/call-N/ (N counts the calls recorded there), with call.txt: the
commit here and whether the working tree was clean, and the dates, device and settings (the command)
issue23.sh wrote into device.txt. Then call.txt, one Markdown row per run and, for each name run over
several seeds, the mean and spread (max - min) of its scores: what results/README.md and issue 23's
note quote. Run it again after a later call: runs are laid anew, finished ones replacing their
interrupted selves; a finished run already recorded is never replaced by an unfinished one (a warning
says so).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import zlib
from datetime import datetime, timezone
from pathlib import Path

from minitx.translate.plotting import plot_history

ROOT = Path(__file__).resolve().parents[2]  # the checkout, whose commit the record names
KEPT = ("config.json", "history.json", "results.json")
SCORES = ("bleu", "bleu_lowercase", "bleu_moses_lowercase")


def lay_run(run: Path, log: Path | None, results: Path) -> dict:
    """Copy one run directory's record into results/{training,interrupted}/NAME; its row. A finished
    run already recorded is never replaced by an unfinished one (a run that started over on a fresh
    machine, say): that is left behind, with a warning, and the row is the finished run's."""
    finished = (run / "results.json").exists()
    recorded = results / "training" / run.name
    if not finished and (recorded / "results.json").exists():
        print(f"record.py: {run.name} came back unfinished, but {recorded} holds it finished: not replaced "
              "(the unfinished run is left out)", file=sys.stderr)
        return row_of(recorded)
    target = results / ("training" if finished else "interrupted") / run.name
    for stale in (results / "training" / run.name, results / "interrupted" / run.name):
        shutil.rmtree(stale, ignore_errors=True)
    target.mkdir(parents=True)
    for name in KEPT:
        if (run / name).exists():
            shutil.copy2(run / name, target / name)
    if log is not None and log.exists():
        shutil.copy2(log, target / "train.log")
    if (target / "history.json").exists() and importlib.util.find_spec("matplotlib"):  # an extra (minitx[plot])
        plot_history(target, target / "history.png")
    return row_of(target)


def row_of(folder: Path) -> dict:
    """A recorded run's row: its scores when it finished (results.json), else how far it got."""
    finished = (folder / "results.json").exists()
    history = json.loads((folder / "history.json").read_text()) if (folder / "history.json").exists() else []
    row = {"run": folder.name, "finished": finished, "epochs": len([h for h in history if h.get("complete")]),
           "step": history[-1]["step"] if history else 0,
           "val_loss": history[-1].get("val_loss") if history else None}
    if finished:
        scores = json.loads((folder / "results.json").read_text())
        row.update({key: scores.get(key) for key in (*SCORES, "steps", "train_seconds")})
    return row


def call_folder(logs: Path, files_at: Path) -> Path:
    """logs/call-N/ for this call's logs: call 2's have call 1's names. The folder that already holds
    these very files when the same call is recorded again, else the next N."""
    returned = {p.name: p.read_bytes() for p in [*files_at.glob("*.log"), *files_at.glob("device.txt")]}
    numbers = []
    for folder in logs.glob("call-*"):
        if folder.is_dir() and folder.name.removeprefix("call-").isdigit():
            numbers.append(int(folder.name.removeprefix("call-")))
            if returned and all((folder / n).exists() and (folder / n).read_bytes() == b for n, b in returned.items()):
                return folder
    folder = logs / f"call-{max(numbers, default=0) + 1}"
    folder.mkdir(parents=True)
    return folder


def git(*args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def describe_call(device_txt: Path, results: Path) -> str:
    """What call.txt says: the commit here and whether the working tree was clean (the device machine has
    no .git; the tree a call was sent is this one when nothing changed between the call and this record),
    and the device, dates and settings issue23.sh wrote into device.txt, as the command that ran."""
    head = (git("rev-parse", "HEAD") or "unknown (not a git checkout)").strip()
    # the record being written (results/DATE-GPU, untracked until committed) does not make the tree dirty
    try:
        exclude = [f":(exclude){results.resolve().relative_to(ROOT)}"]
    except ValueError:
        exclude = []
    changed = git("status", "--porcelain", "--untracked-files=normal", "--", ".", *exclude)
    if changed is None:
        tree = "unknown"
    elif not changed.strip():
        tree = "clean"
    else:
        paths = [line[3:] for line in changed.splitlines()]
        tree = f"dirty ({len(paths)} paths: {', '.join(paths[:10])}{', ...' if len(paths) > 10 else ''})"
    lines = [f"recorded: {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')} by tools/gpu_session/record.py",
             f"commit: {head} (here, when recorded)", f"working tree: {tree}"]
    settings, device = {}, []
    if device_txt.exists():
        for line in device_txt.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and key.replace("_", "").isalnum() and " " not in key:
                settings[key] = value
            elif line.strip():
                device.append(line.strip())
    lines.append(f"device: {'; '.join(device) or 'not recorded (no nvidia-smi line in device.txt)'}")
    if "started" in settings:
        lines.append(f"started: {settings['started']} (the device's clock, UTC)")
    if "ended" in settings:
        lines.append(f"ended: {settings['ended']}, exit {settings.get('exit', '?')}")
    if "SET" in settings:
        given = [f"{key}={shlex.quote(settings[key])}"
                 for key in ("CALL", "PROOF", "SET", "SEEDS", "TRAIN_ARGS", "WORK")
                 if key in settings and not (key == "WORK" and settings[key] == "/tmp/issue23")]
        lines.append(f"command: {' '.join(given)} bash tools/gpu_session/issue23.sh")
    else:
        lines.append("command: not recorded (device.txt holds no settings: a call of issue23.sh before it wrote them)")
    return "\n".join(lines) + "\n"


def seed_name(run: str) -> str:
    """'tiny-en-de-s2' -> 'tiny-en-de' (a sweep names each seed's run NAME-s<seed>)."""
    stem, _, seed = run.rpartition("-s")
    return stem if stem and seed.isdigit() else run


def cell(value, digits=2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files_at", type=Path, help="the folder with the call's $OUT files")
    parser.add_argument("results", type=Path, help="the dated results folder, e.g. results/2026-11-27-h100")
    args = parser.parse_args(argv)
    parts = sorted(args.files_at.glob("*.tar.gz"))
    if not parts:
        parser.error(f"no PART.tar.gz in {args.files_at}: give the folder the call's files were put in")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for part in parts:
            unpacked = Path(scratch) / part.name.removesuffix(".tar.gz")
            try:
                with tarfile.open(part) as archive:
                    archive.extractall(unpacked, filter="data")
            except (EOFError, tarfile.ReadError, zlib.error) as error:  # what was read before the end stays
                print(f"record.py: {part} was cut short ({error}): its runs are laid as far as it holds them "
                      "(a run it held in part may show as unfinished)", file=sys.stderr)
                if not unpacked.exists():
                    continue
            for run in sorted(p for p in unpacked.iterdir() if (p / "config.json").exists()):
                # a sweep keeps each run's log beside its folder; a single run's log is the call's PART.log
                log = unpacked / f"{run.name}.log"
                rows.append(lay_run(run, log if log.exists() else args.files_at / f"{unpacked.name}.log",
                                    args.results))
    logs = call_folder(args.results / "logs", args.files_at)
    for path in [*args.files_at.glob("*.log"), *args.files_at.glob("device.txt")]:
        shutil.copy2(path, logs / path.name)
    about = describe_call(args.files_at / "device.txt", args.results)
    (logs / "call.txt").write_text(about)
    print(f"{logs.relative_to(args.results)}/call.txt:\n\n" + "".join(f"    {line}\n" for line in about.splitlines()))

    print("| run | BLEU | lowercased | Moses, lowercased | steps | train s |\n|---|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["finished"]:
            # the BLEU in bold, as results/README.md quotes it (tests/translate/test_recorded_runs.py)
            print(f"| {r['run']} | **{cell(r['bleu'])}** | {cell(r['bleu_lowercase'])} | "
                  f"{cell(r['bleu_moses_lowercase'])} | {r['steps']} | {cell(r['train_seconds'], 0)} |")
        else:
            print(f"| {r['run']} | not finished: epoch {r['epochs']}, step {r['step']}, "
                  f"validation loss {cell(r['val_loss'], 3)} | | | | |")
    groups: dict = {}
    for r in rows:
        if r["finished"]:
            groups.setdefault(seed_name(r["run"]), []).append(r)
    print("\n| name | seeds | " + " | ".join(f"{k} mean (spread)" for k in SCORES) + " |\n|---|---:|"
          + "---:|" * len(SCORES))
    for name, done in groups.items():
        cells = []
        for key in SCORES:
            values = [r[key] for r in done if r.get(key) is not None]
            if not values:
                cells.append("-")
                continue
            mean = f"{statistics.fmean(values):.2f}"
            cells.append(f"{f'**{mean}**' if key == 'bleu' else mean} ({max(values) - min(values):.2f})")
        print(f"| {name} | {len(done)} | " + " | ".join(cells) + " |")
    unfinished = [r["run"] for r in rows if not r["finished"]]
    if unfinished:
        print(f"\nnot finished ({len(unfinished)}): {', '.join(unfinished)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
