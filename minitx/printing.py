"""How a Tensor prints: PyTorch's ``set_printoptions`` and the options ``Tensor.__repr__`` reads.

The numbers are laid out by NumPy's array2string, so columns are NumPy's (``tensor([1.5 , 2.25])``
where PyTorch writes ``tensor([1.5000, 2.2500])``); the options mean what PyTorch's mean.
"""
from __future__ import annotations

import sys

import numpy as np

# PyTorch's profiles: "default" is also where minitx starts
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)}

OPTIONS = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """How tensors print from now on (PyTorch's ``torch.set_printoptions``):

    * precision: digits after the point (4);
    * threshold: more elements than this print as their first and last ``edgeitems`` along each
      axis with ``...`` between (1000, and 3);
    * linewidth: characters per line (80);
    * profile: "default", "short" (precision 2, 2 edge items) or "full" (no threshold) first,
      then the other arguments given;
    * sci_mode: True for scientific notation (``1.5000e+00``), False for none, None (as unless
      given, PyTorch's too) to let the numbers decide.

    An unknown profile is a ValueError (PyTorch ignores it), and so is any bad value: then no
    option changes."""
    if profile is not None and profile not in _PROFILES:
        raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
    given = {name: value for name, value in (("precision", precision), ("threshold", threshold),
                                             ("edgeitems", edgeitems), ("linewidth", linewidth)) if value is not None}
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"set_printoptions: {name} must be a number >= 0, got {value!r}")
    if sci_mode not in (None, True, False):
        raise ValueError(f"set_printoptions: sci_mode must be True, False or None, got {sci_mode!r}")
    OPTIONS.update(_PROFILES.get(profile, {}), **given, sci_mode=sci_mode)  # (all checked: all at once)


def array_string(array, prefix: str) -> str:
    """``array`` (a NumPy array) as the body of a tensor's repr, by OPTIONS, its later lines
    indented past ``prefix``."""
    precision = int(OPTIONS["precision"])
    threshold = OPTIONS["threshold"]
    formatter = {"float_kind": lambda v: f"{v:.{precision}e}"} if OPTIONS["sci_mode"] else None
    return np.array2string(array, precision=precision, separator=", ", prefix=prefix,
                           threshold=sys.maxsize if threshold == float("inf") else int(threshold),
                           edgeitems=int(OPTIONS["edgeitems"]), max_line_width=int(OPTIONS["linewidth"]),
                           suppress_small=OPTIONS["sci_mode"] is False, formatter=formatter)
