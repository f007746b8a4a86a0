"""What the two command lines (``python -m minitx.translate``, ``python -m minitx.encoder``) share:
how an option's value is read, and how a command ends when it cannot go on.

A command ends in one of three ways, and never in a traceback for anything the user can cause:

* done: exit code 0;
* a documented failure: one line on stderr, ``<program> <command>: error: <what>``, naming the
  option or file, what it held and what was expected; exit code 2, as for argparse's own usage
  errors (a bad option value is refused by argparse before anything runs, also with 2);
* Ctrl-C: a line saying where the run was left (a training run saves last.npz first) and, when
  there is a run to continue, the command that continues it; exit code 130 (128 + SIGINT).

And when the reader of stdout goes away (``recipes | head -2``), the command ends quietly, as Unix
tools do: no message, exit code 141 (128 + SIGPIPE), the code a shell shows for ``cat`` or ``yes``
stopped so, so that a pipeline with ``set -o pipefail`` treats it as it treats them (0 would claim
that all the output was written).
"""
from __future__ import annotations

import argparse
import math
import os
import shlex
import sys

#: the failures a user can cause (a bad option, file, run directory, checkpoint, a device that is
#: not there, a diverging loss) and their messages say what to do; anything else is a bug in
#: minitx and keeps its traceback. CheckpointError is a ValueError, DataNotFoundError a
#: FileNotFoundError, an unreadable path an OSError.
DOCUMENTED_FAILURES = (ValueError, OSError, RuntimeError, FloatingPointError)
USAGE_ERROR, INTERRUPTED, READER_GONE = 2, 130, 141


def run_command(prog: str, command: str, body, continue_with=None) -> int:
    """Run ``body()`` (the command), ending as the module docstring says. ``continue_with()`` gives
    the command line that continues an interrupted run, or None when there is nothing to continue."""
    try:
        code = body() or 0
        sys.stdout.flush()  # (a closed pipe is found here, not in the interpreter's flush at exit)
        return code
    except BrokenPipeError:  # (an OSError: caught before the documented failures)
        _quiet_stdout()
        return READER_GONE
    except KeyboardInterrupt as stop:
        print(f"{prog} {command}: {str(stop) or 'interrupted; nothing was saved'}", file=sys.stderr)
        again = continue_with() if continue_with else None
        if again:
            print(f"continue it with: {again}", file=sys.stderr)
        return INTERRUPTED
    except DOCUMENTED_FAILURES as error:
        print(f"{prog} {command}: error: {_one_line(error)}", file=sys.stderr)
        return USAGE_ERROR


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: its reader is gone, and the interpreter's last flush of what is
    still buffered would fail again ("Exception ignored ... BrokenPipeError") on the way out."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # (stdout is no file: a caller's stream; nothing to do)
        pass


def _one_line(error) -> str:
    """The error's message on one line (an OSError's names its file: '[Errno 21] Is a directory: x')."""
    return " ".join(str(error).split()) or type(error).__name__


def config_stamp(run_dir):
    """(inode, modification time) of run_dir's config.json, or None: a run's start writes it
    anew (an atomic rename: a new inode), so a changed stamp says this command wrote it."""
    from pathlib import Path  # noqa: PLC0415

    try:
        stat = (Path(run_dir) / "config.json").stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def resume_line(prog: str, command: str, run_dir, resumed: bool, stamp_before) -> str | None:
    """The command that continues a training run this command was stopped in, or None where there
    is none: no config.json (a start stopped before it wrote one: a new run starts there), or the
    config.json an earlier run left, a new run (not ``resumed``) having stopped before writing
    its own (``stamp_before``: config_stamp when the command began)."""
    if run_dir is None or config_stamp(run_dir) is None:
        return None
    if not resumed and config_stamp(run_dir) == stamp_before:
        return None
    return command_line(prog, command, "--output-dir", run_dir, "--resume")


def command_line(prog: str, *words) -> str:
    """A command line to show the user, each word quoted where the shell needs it."""
    return " ".join([prog, *(shlex.quote(str(w)) for w in words)])


# ---------------------------------------------------------------------- option values
_BOOLEAN_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False,
                  "off": False}


def boolean(text: str) -> bool:
    """true/false (also yes/no, on/off, 1/0), any case."""
    if text.lower() not in _BOOLEAN_WORDS:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return _BOOLEAN_WORDS[text.lower()]


def boolean_or_auto(text: str):
    """true/false as :func:`boolean`, or auto: None, the program chooses."""
    if text.lower() == "auto":
        return None
    if text.lower() not in _BOOLEAN_WORDS:
        raise argparse.ArgumentTypeError(f"expected true, false or auto, got {text!r}")
    return _BOOLEAN_WORDS[text.lower()]


def number(kind=float, low=None, low_open=False, high=None, high_open=False):
    """An argparse type: ``kind`` (int or float) within the bounds, finite; refused values become a
    usage error naming the option (exit code 2) before anything runs."""
    def read(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") \
                from None
        ok = math.isfinite(value)
        if ok and low is not None:
            ok = value > low if low_open else value >= low
        if ok and high is not None:
            ok = value < high if high_open else value <= high
        if not ok:
            bounds = " and ".join(part for part in (
                None if low is None else f"{'>' if low_open else '>='} {low}",
                None if high is None else f"{'<' if high_open else '<='} {high}") if part)
            raise argparse.ArgumentTypeError(f"must be {bounds or 'a finite number'}, got {text}")
        return value
    return read


positive_int = number(int, low=1)
