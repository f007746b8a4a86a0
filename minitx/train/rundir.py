"""Run directories: what a new run refuses, what --overwrite deletes, what --resume may change.

A run directory is made only when training starts (``start_new_run``), once everything that
can fail has been checked or loaded: a failed start leaves nothing behind to refuse.

A run directory holds config.json and the trainer's files (TRAINER_FILES, epoch-<n>.npz), plus
whatever the application adds (tokenizers, results). A new run refuses a directory that
already holds a run, unless ``overwrite`` deletes that run's files (and nothing else); a
resumed run keeps its saved configuration, and only the keys the application lists as
harmless (how long to run, how often to save, where to run) may take new values.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from minitx.serialization import read_json

# the files the trainer writes; with epoch-<n>.npz (TRAINER_PATTERNS)
TRAINER_FILES = ("config.json", "last.npz", "best.npz", "averaged.npz", "history.json")
TRAINER_PATTERNS = ("epoch-*.npz",)
# the files minitx's two applications add beside the trainer's: a translation run's tokenizers, plot
# and test translations (<split>.hyp.<lang>), a pretraining run's tokenizer, either's results. Both
# list all of them as their run's files, so an --overwrite of a run of the other kind leaves none of
# its files behind for the new run's commands to misread (a pretraining run's tokenizer.json beside
# a translation run, say)
APPLICATION_FILES = ("tokenizer.src.json", "tokenizer.tgt.json", "tokenizer.json", "results.json", "history.png")
APPLICATION_PATTERNS = ("*.hyp.*",)


def log(message: str) -> None:
    """Progress messages go to stderr, so the program's own output on stdout stays clean; above
    any progress bar (tqdm.write), not through it."""
    from tqdm.auto import tqdm

    tqdm.write(message, file=sys.stderr)
    sys.stderr.flush()


def json_safe(config) -> dict:
    """The configuration as JSON writes and reads it back (tuples become lists)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in config.items()}


def shown(value) -> str:
    """A setting as the command lines spell it: true/false/none, not Python's True/False/None."""
    if value is None or isinstance(value, bool):
        return str(value).lower()
    return repr(value)


def run_files(run_dir, names=TRAINER_FILES, patterns=TRAINER_PATTERNS) -> list:
    """The files of a run in run_dir, in the order given (nothing else in it is listed)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return []
    found = [run_dir / name for name in names if (run_dir / name).is_file()]
    for pattern in patterns:
        found += sorted(p for p in run_dir.glob(pattern) if p.is_file())
    return found


def clear_leftovers(run_dir) -> list:
    """Delete the temporary files a kill left in run_dir in the middle of a write: an atomic
    write (serialization.write_atomically) writes ``.<name>.<random>.tmp`` beside ``<name>`` and
    renames it when complete, so one still there is a write that never finished. Returns them."""
    run_dir = Path(run_dir)
    left = sorted(run_dir.glob(".*.tmp")) if run_dir.is_dir() else []
    for path in left:
        path.unlink()
    if left:
        log(f"deleted {len(left)} unfinished temporary file(s) in {run_dir} (a write a kill interrupted): "
            + ", ".join(p.name for p in left[:3]) + (", ..." if len(left) > 3 else ""))
    return left


def check_new_run(run_dir, overwrite: bool, names=TRAINER_FILES, patterns=TRAINER_PATTERNS, start_files=()) -> list:
    """The files of an earlier run in run_dir, which ``start_new_run`` deletes; without
    ``overwrite`` a directory that holds a run (any of its files) is refused. Nothing is
    changed yet: a start that fails later leaves the earlier run as it was.

    ``start_files``: the files a start writes before config.json. A directory holding only
    those is a start interrupted before it wrote config.json, not a run (a resume has no
    configuration to continue): a new run starts, writing them again."""
    existing = run_files(run_dir, names, patterns)
    if existing and all(path.name in start_files for path in existing):
        log(f"{run_dir} holds only {', '.join(p.name for p in existing)}, the files of a start interrupted before "
            "it wrote config.json: a new run starts there")
        return []
    if existing and not overwrite:
        shown = ", ".join(p.name for p in existing[:4]) + (", ..." if len(existing) > 4 else "")
        raise ValueError(f"{run_dir} already holds a training run ({shown}); continue it with --resume "
                         "(resume=True), choose another --output-dir, or pass --overwrite (overwrite=True) "
                         "to delete its files and start a new run")
    return existing


def start_new_run(run_dir, earlier_run=()) -> None:
    """Make the run directory, deleting the files of the earlier run (check_new_run's list);
    other files in the directory are left alone."""
    for path in earlier_run:
        path.unlink()
    if earlier_run:
        log(f"overwrite: deleted the {len(earlier_run)} files of the earlier run in {run_dir}")
    Path(run_dir).mkdir(parents=True, exist_ok=True)


def read_saved_config(run_dir, kind: str = "training") -> dict:
    """The config.json of a run to resume; a clear error when the directory holds none."""
    path = Path(run_dir) / "config.json"
    if not path.is_file() and (Path(run_dir) / "last.npz").is_file():  # a run that lost its config.json
        raise FileNotFoundError(f"cannot resume: {run_dir} holds last.npz but no config.json, which a resume reads "
                                "the run's settings from; restore it (a copy of the run's), or start a new run")
    if not path.is_file():
        raise FileNotFoundError(f"cannot resume: {run_dir} has no config.json, so it is not a minitx {kind} "
                                "run; check --output-dir, or train without --resume to start a new run")
    return read_json(path)


def resume_config(saved: dict, given: dict, run_dir, may_change, defaults: dict, extra_keys=()) -> tuple:
    """(configuration, changes) of a resumed run: the saved configuration, with the given
    values of the ``may_change`` keys. Every key in ``given`` is compared with the saved value
    (output_dir and 'built' excepted); a key neither in ``defaults`` nor ``extra_keys`` is
    unknown. A different value of any key not in ``may_change`` would change what the run
    learns: ValueError names each such key with both values. ``changes`` maps each changed
    key to (old, new)."""
    normal = json_safe(given)
    refused, changes = [], {}
    for key, value in normal.items():
        if key in ("output_dir", "built") or (key in saved and value == saved[key]):
            continue
        if key not in defaults and key not in extra_keys:
            raise ValueError(f"unknown configuration keys {[key]}")
        old = saved.get(key, defaults.get(key))
        if value == old:
            continue
        if key in may_change:
            changes[key] = (old, value)
        else:
            refused.append(f"{key} {shown(old)} (saved) != {shown(value)} (given)")
    if refused:
        raise ValueError(f"cannot resume {run_dir} with other settings: " + ", ".join(refused)
                         + ". These change what the run learns; resume without them, or start a new run "
                         "(another --output-dir, or --overwrite). Only "
                         + ", ".join(may_change) + " may change on resume")
    config = dict(saved)
    config.update({key: new for key, (_, new) in changes.items()})
    for key, value in defaults.items():
        config.setdefault(key, value)  # a run saved before the key existed
    return config, changes


#: what check_data records in a run's configuration (an application lists them among its keys)
DATA_KEYS = ("data_sha256", "data_read_from")


def data_digest(examples) -> str:
    """SHA-256 of a split's examples as read (sentence pairs, or sentences; as JSON, so no
    sentence's characters can pass for the boundary between two). The examples, not the .gz
    files: the same text gzipped again, or saved with \\r\\n line ends, is the same data, and a run
    trains on it alike."""
    return hashlib.sha256(json.dumps(examples, ensure_ascii=False).encode("utf-8")).hexdigest()


def resolve_data_dir(config, from_run=False) -> None:
    """Make config["data_dir"] absolute (None stays None: the Multi30k search finds the data), so
    that the run finds it again from another working directory (a resume, evaluate, fine-tuning).
    ``from_run``: it is the resumed run's own (config.json's), not given to this command: it must
    still be there (runs_data_dir)."""
    if config["data_dir"] is not None:
        found = runs_data_dir(config) if from_run else Path(config["data_dir"]).expanduser()
        config["data_dir"] = str(found.resolve())


def runs_data_dir(config) -> Path:
    """The data_dir a run's config.json names, where a command given no --data-dir reads: a
    directory no longer there (moved, or named relative to where the run was started) is an error
    that says what to do."""
    directory = Path(config["data_dir"]).expanduser()
    if not directory.is_dir():
        raise FileNotFoundError(f"the run's data directory {directory} (data_dir in its config.json) is not there "
                                f"(from {Path.cwd()}); give --data-dir where its Multi30k files are now")
    return directory


def log_data_read(files: dict, data_dir, from_run=False) -> None:
    """Log where the data ``files`` ({split: paths}) were read from and how that directory was
    chosen: ``data: read from <directories> (<how>)``. ``data_dir``: the one the run was given
    (None: the Multi30k search found them); ``from_run``: it is the resumed run's own (its
    config.json's), not given to this command."""
    directories = sorted({str(Path(path).parent) for paths in files.values() for path in paths})
    log(f"data: read from {', '.join(directories)} ({_data_source(data_dir, directories, from_run)})")


def _data_source(data_dir, directories, from_run=False) -> str:
    """How the data directory was chosen (multi30k's search order), for the log."""
    from minitx.data import DATA_DIR_ENV  # noqa: PLC0415 (the data package is the applications')

    if data_dir is not None:
        return "the run's data_dir" if from_run else "--data-dir"
    env = os.environ.get(DATA_DIR_ENV)
    if env and directories == [str(Path(env).expanduser())]:
        return f"${DATA_DIR_ENV}"
    return "the download cache: no --data-dir, and $MINITX_DATA_DIR " + ("lacks them" if env else "is not set")


def check_data(config, data: dict, read_from: dict, resumed_dir=None) -> None:
    """Record in ``config`` the digest of each split of ``data`` ({split: examples}: the
    training and validation data; data_sha256) and where each was read (``read_from``, {split:
    the files}; data_read_from). A resumed run (``resumed_dir``) must read the data it was trained
    on: other data is a ValueError naming both digests and where each was read; a run saved
    before runs recorded digests is resumed unchecked, and says so."""
    from minitx.data import DATA_DIR_ENV  # noqa: PLC0415 (the data package is the applications')

    digests = {split: data_digest(examples) for split, examples in data.items()}
    saved, saved_from = config.get("data_sha256"), config.get("data_read_from") or {}
    if resumed_dir is not None and saved is None:
        log(f"resume: {resumed_dir / 'config.json'} records no digest of the run's data (it was saved before runs "
            "recorded one), so the data read now cannot be checked against it; it is recorded from now on")
    elif resumed_dir is not None:
        differ = [split for split in digests if saved.get(split) != digests[split]]
        # (a run with a data_dir reads there only: the environment's directory is not looked at)
        how = "--data-dir" if config.get("data_dir") is not None else f"--data-dir, or ${DATA_DIR_ENV}"
        if differ:
            raise ValueError(f"cannot resume {resumed_dir}: it was trained on other data. " + "; ".join(
                f"The {split} data read now have SHA-256 {digests[split]} ({read_from[split]}); the run's have "
                f"{saved.get(split)} ({saved_from.get(split, 'files not recorded')}, in config.json)"
                for split in differ) + f". Give the run's data ({how}), or start a new run")
        for split in digests:
            if saved_from.get(split) not in (None, read_from[split]):
                log(f"resume: the {split} data are read from {read_from[split]}, the run read them from "
                    f"{saved_from[split]}: the same data (SHA-256 {digests[split]})")
    config["data_sha256"], config["data_read_from"] = digests, dict(read_from)
