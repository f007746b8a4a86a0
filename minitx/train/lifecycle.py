"""A run's life, written once for every application (translation, encoder pretraining, yours).

    run = RunLifecycle(run_dir, config, kind="pretraining", resume=resume, overwrite=overwrite, ...)
    config, device = run.config, run.device       # 1-3: the rules, the configuration, the device
    ... load the data, build tokenizers and the model: anything that can fail ...
    run.begin(write_files)                        # 4: only now is the run directory touched
    trainer = Trainer(run.run_dir, model, ...)
    run.fit(trainer)                              # 5: resume from last.npz when resuming, then train

The steps, in order:

1. resume or overwrite: a resumed run continues the directory's run, an overwrite deletes it;
   asking for both is an error. A new run refuses a directory that holds a run unless
   ``overwrite`` (rundir.check_new_run; nothing is deleted yet).
2. The configuration: a new run's as given, over ``defaults`` (a key neither there nor in
   ``extra_keys`` is refused: config.json would hold it, and every resume refuse it); a resumed
   run's is its saved config.json, with the given values of the keys that may change on resume
   (rundir.resume_config). Either is validated once, here, by the application's ``validate``.
3. The device: a missing GPU is an error before anything is written.
4. ``begin``: once the application has loaded and built everything that can fail, the run
   directory is made (an earlier run's files deleted, and the temporary files of writes a kill
   interrupted), the application's own files are written (a new run's tokenizers, say) and
   config.json.
5. ``fit``: the Trainer resumes from last.npz when resuming, then trains. A resumed run's
   config.json (its changed settings) is written only once last.npz has been accepted: a resume
   refused there (a limit below what the run has reached) leaves the run as it was.

A third application writes only its model, data and loss around these calls.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from minitx.backend import resolve_device
from minitx.serialization import write_json
from minitx.train.rundir import (TRAINER_FILES, TRAINER_PATTERNS, check_new_run, clear_leftovers, json_safe, log,
                                 read_saved_config, resume_config, shown,
                                 start_new_run)


def check_resume_or_overwrite(resume: bool, overwrite: bool) -> None:
    """Step 1's rule (command lines ask it too, before they build anything): a resumed run
    continues the directory's run, an overwrite deletes it; both at once is an error."""
    if resume and overwrite:
        raise ValueError("--resume (resume=True) continues the run in the output directory, --overwrite "
                         "(overwrite=True) deletes it: choose one")


class RunLifecycle:
    """Steps 1-3 at construction; ``begin`` and ``fit`` are steps 4 and 5 (module docstring).

    kind          the application's name for its runs, in messages ("translation")
    files         the names of a run's files (what --overwrite deletes), and ``patterns``
    defaults      every configuration key and its default; ``extra_keys`` others a config may hold
    may_change    the keys a resumed run may change, or a function of the saved config giving them
    validate      ``validate(config)`` raises ValueError naming every bad setting
    upgrade       ``upgrade(saved)``: a config.json written by an older minitx, made current
    added_later   the keys a config.json saved by an older minitx may lack (their defaults fill
                  them); any other key missing is refused. None: any key may be missing.
    start_files   the files ``begin``'s ``write_files`` writes before config.json: a directory
                  holding only those (a start interrupted there) takes a new run
    """

    def __init__(self, run_dir, config: dict, *, kind: str, resume: bool = False, overwrite: bool = False,
                 defaults: dict, extra_keys=(), may_change=(), validate: Callable | None = None,
                 upgrade: Callable | None = None, files=TRAINER_FILES, patterns=TRAINER_PATTERNS,
                 added_later=None, start_files=()):
        self.run_dir, self.resume = Path(run_dir), resume
        check_resume_or_overwrite(resume, overwrite)
        self.earlier_run = ()
        if resume:
            saved = read_saved_config(self.run_dir, kind)
            saved = upgrade(saved) if upgrade is not None else saved
            _check_saved_keys(self.run_dir / "config.json", saved, kind, defaults, extra_keys, added_later)
            allowed = may_change(saved) if callable(may_change) else may_change
            config, self.changes = resume_config(saved, config, self.run_dir, allowed, defaults, extra_keys)
        else:
            if not overwrite:
                _refuse_another_kind(self.run_dir, kind, defaults, extra_keys, added_later, upgrade)
            unknown = sorted(key for key in config if key not in defaults and key not in extra_keys)
            if unknown:
                raise ValueError(f"a {kind} run has no setting {', '.join(map(repr, unknown[:6]))}; its settings "
                                 f"are {', '.join(sorted([*defaults, *extra_keys]))}")
            config, self.changes = {**defaults, **config}, {}
            self.earlier_run = check_new_run(self.run_dir, overwrite, files, patterns, start_files)
        if validate is not None:
            validate(config)
        self.config = config
        self.device = resolve_device(config["device"])
        for key, (old, new) in self.changes.items():
            log(f"resume: {key} changed from {shown(old)} to {shown(new)}")

    def begin(self, write_files: Callable[[Path], None] | None = None) -> None:
        """Training starts: make the run directory (deleting an earlier run's files), let a new
        run write its own files into it, write config.json (a resumed run's: in ``fit``)."""
        clear_leftovers(self.run_dir)
        if not self.resume:
            start_new_run(self.run_dir, self.earlier_run)
            if write_files is not None:
                write_files(self.run_dir)
            self._write_config()

    def fit(self, trainer):
        """Resume the trainer from last.npz when this run resumes (then write its config.json,
        with the settings changed), and train; returns it."""
        if self.resume:
            trainer.resume()  # (refuses a last.npz the settings given cannot continue: nothing written yet)
            self._write_config()
        trainer.fit()
        return trainer

    def _write_config(self) -> None:
        write_json(self.run_dir / "config.json", json_safe(self.config), indent=2)


def _refuse_another_kind(run_dir, kind, defaults, extra_keys, added_later, upgrade) -> None:
    """A new run into a directory that holds another kind of run (a pretraining run's for a
    translation): refused saying so, where check_new_run's refusal would advise a --resume that
    _check_saved_keys then refuses. A config.json that cannot be read is left to that refusal."""
    path = run_dir / "config.json"
    try:
        saved = read_saved_config(run_dir, kind) if path.is_file() else None
    except ValueError:
        return
    if not isinstance(saved, dict):
        return
    try:
        _check_saved_keys(path, upgrade(saved) if upgrade is not None else saved, kind, defaults, extra_keys,
                          added_later)
    except ValueError as error:
        raise ValueError(f"{run_dir} already holds a run of another kind: {error} (another --output-dir, or "
                         "--overwrite to delete its files)") from None


def _check_saved_keys(path, saved: dict, kind, defaults, extra_keys, added_later) -> None:
    """A config.json to resume holds this kind of run's settings: none it does not know (another
    kind of run's, say a translation run's for a pretraining), and all but those added later."""
    unknown = sorted(key for key in saved if key not in defaults and key not in extra_keys)
    missing = [] if added_later is None else sorted(set(defaults) - set(saved) - set(added_later))
    if unknown or missing:
        raise ValueError(f"{path} is not a {kind} run's configuration: it "
                         + " and ".join(part for part in (unknown and f"holds settings a {kind} run does not have "
                                                                       f"({', '.join(unknown[:6])})",
                                                          missing and f"lacks {', '.join(missing[:6])}") if part)
                         + "; check the directory, or start a new run")
