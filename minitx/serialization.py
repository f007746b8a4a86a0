"""Checkpoints without pickle: ``save(obj, path)`` and ``load(path, device='cpu')``.

What can be saved: nested dicts (string keys only), lists and tuples of

* numpy or cupy arrays (any dtype except ``object``), 0-d arrays included;
* minitx Tensors (their data, and whether they require a gradient);
* numpy scalars (``np.float64(1.5)``, ``np.int64(3)``, ``np.bool_(True)``, ...);
* Python ``int``, ``float``, ``bool``, ``None`` and ``str``.

What comes back from ``load``: the same structure, with the same types: dicts keep their key
order, a tuple comes back as a tuple and a list as a list; an array comes back as an array of
``device`` (numpy for 'cpu', cupy for 'cuda'), a Tensor as a Tensor on ``device``, a numpy
scalar as a numpy scalar of the same dtype, and Python values as themselves. Dtypes and
shapes are preserved exactly.

The file format is ONE .npz archive (``numpy.savez``), readable with plain numpy:

* ``a0``, ``a1``, ...  the arrays, in the order they were met walking the structure;
* ``minitx_structure``  a uint8 array holding UTF-8 JSON:
  ``{"format": "minitx-checkpoint", "version": 1, "root": NODE}`` where a NODE is
  a JSON number, string, true/false or null for a Python scalar, or an object
  ``{"type": "dict", "items": [[key, NODE], ...]}``, ``{"type": "list" | "tuple", "items":
  [NODE, ...]}``, ``{"type": "array", "index": k}``, ``{"type": "tensor", "index": k,
  "requires_grad": bool}`` or ``{"type": "scalar", "index": k}`` (a numpy scalar, stored as
  the 0-d array ``ak``).

Loading uses ``numpy.load(path, allow_pickle=False)``: a file can never run code when it is
read. Saving is atomic: the archive is written to a temporary file next to ``path``, flushed
and fsync'ed, then renamed over ``path`` (``os.replace``), so a crash or an error mid-save
leaves any previous checkpoint intact. ``path`` is used exactly as given (no '.npz' added).
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile

import numpy as np

from minitx import backend
from minitx.autograd.tensor import Tensor

FORMAT = "minitx-checkpoint"
FORMAT_VERSION = 1
STRUCTURE_KEY = "minitx_structure"

__all__ = ["save", "load", "write_atomically", "CheckpointError", "FORMAT_VERSION"]


class CheckpointError(ValueError):
    """A file that is not a minitx checkpoint, or one that is truncated or corrupt."""


# ---------------------------------------------------------------------- save
def save(obj, path) -> None:
    """Write ``obj`` (see the module docstring for what it may hold) to ``path`` atomically.

    Raises TypeError naming the key path (like ``model/encoder.0.weight``) for an object that
    cannot be saved or a dict key that is not a string; the file is then not touched.
    """
    path = os.fspath(path)
    arrays: dict[str, np.ndarray] = {}
    root = _encode(obj, arrays, path_parts=[], seen=set())
    header = {"format": FORMAT, "version": FORMAT_VERSION, "root": root}
    text = json.dumps(header, ensure_ascii=True, allow_nan=True)
    arrays[STRUCTURE_KEY] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)

    write_atomically(path, lambda f: np.savez(f, **arrays))


def write_atomically(path, write) -> None:
    """Call ``write(f)`` on a binary file that becomes ``path`` only once complete: a
    temporary file next to it, flushed and fsync'ed, then renamed over it (``os.replace``).
    An error or a kill midway leaves any previous file at ``path`` as it was."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); silently skipped where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _where(parts) -> str:
    return "/".join(parts) if parts else "<root>"


def _add_array(array: np.ndarray, arrays: dict, parts) -> int:
    if array.dtype.hasobject:
        raise TypeError(f"save: cannot save the object-dtype array at '{_where(parts)}'; "
                        "checkpoints hold numeric, bool and string arrays only (no pickle)")
    index = len(arrays)
    arrays[f"a{index}"] = array
    return index


def _to_numpy(array) -> np.ndarray:
    if type(array).__module__.startswith("cupy"):
        return array.get()
    return np.asarray(array)


def _encode(obj, arrays: dict, path_parts: list, seen: set):
    """Turn ``obj`` into a JSON node, moving arrays into ``arrays``."""
    if isinstance(obj, Tensor):
        index = _add_array(_to_numpy(obj.data), arrays, path_parts)
        return {"type": "tensor", "index": index, "requires_grad": bool(obj.requires_grad)}
    if isinstance(obj, np.ndarray) or (type(obj).__module__.startswith("cupy")
                                       and type(obj).__name__ == "ndarray"):
        return {"type": "array", "index": _add_array(_to_numpy(obj), arrays, path_parts)}
    if isinstance(obj, np.generic):  # before float: np.float64 is a subclass of float
        return {"type": "scalar", "index": _add_array(np.asarray(obj), arrays, path_parts)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, (dict, list, tuple)):
        if id(obj) in seen:
            raise ValueError(f"save: circular reference at '{_where(path_parts)}'")
        seen.add(id(obj))
        try:
            if isinstance(obj, dict):
                items = []
                for key, value in obj.items():
                    if not isinstance(key, str):
                        raise TypeError(f"save: dict key {key!r} ({type(key).__name__}) at "
                                        f"'{_where(path_parts)}' is not a string; checkpoint "
                                        "dict keys must be strings")
                    items.append([key, _encode(value, arrays, path_parts + [key], seen)])
                return {"type": "dict", "items": items}
            return {"type": "tuple" if isinstance(obj, tuple) else "list",
                    "items": [_encode(v, arrays, path_parts + [str(i)], seen)
                              for i, v in enumerate(obj)]}
        finally:
            seen.discard(id(obj))
    raise TypeError(f"save: cannot save '{_where(path_parts)}' of type "
                    f"{type(obj).__module__}.{type(obj).__qualname__}; supported: dict, list, "
                    "tuple, numpy/cupy arrays and scalars, Tensor, int, float, bool, None, str")


# ---------------------------------------------------------------------- load
def load(path, device: str = "cpu"):
    """Read a checkpoint written by ``save``; arrays and Tensors are placed on ``device``.

    Raises FileNotFoundError for a missing file and CheckpointError (a ValueError) naming the
    file for anything that is not an intact minitx checkpoint.
    """
    path = os.fspath(path)
    device = backend.check_device(device)
    # We open the file ourselves so that it is closed even when numpy fails half-way.
    with open(path, "rb") as f:
        try:
            archive = np.load(f, allow_pickle=False)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
            raise CheckpointError(f"load: {path} is not a minitx checkpoint, or it is truncated "
                                  f"or corrupt ({type(e).__name__}: {e})") from e
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise CheckpointError(f"load: {path} is a single .npy array, not a minitx checkpoint "
                                  "(an .npz archive)")
        with archive:
            return _read_checkpoint(archive, path, device)


def _read_checkpoint(archive, path, device):
    if STRUCTURE_KEY not in archive.files:
        raise CheckpointError(f"load: {path} is an .npz archive but not a minitx checkpoint "
                              f"(it has no '{STRUCTURE_KEY}' member; members: "
                              f"{sorted(archive.files)[:10]})")
    try:
        raw = archive[STRUCTURE_KEY]
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"load: {path}: the structure description is truncated or "
                              f"corrupt ({type(e).__name__}: {e})") from e
    if not isinstance(header, dict) or header.get("format") != FORMAT or "root" not in header:
        raise CheckpointError(f"load: {path} is not a minitx checkpoint (bad header)")
    version = header.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(f"load: {path} has checkpoint format version {version!r}; this "
                              f"minitx reads versions up to {FORMAT_VERSION}")
    return _decode(header["root"], archive, path, device, [])


def _read_array(archive, index, path, parts) -> np.ndarray:
    name = f"a{index}"
    if not isinstance(index, int) or name not in archive.files:
        raise CheckpointError(f"load: {path}: '{_where(parts)}' refers to a missing array {name!r}")
    try:
        return archive[name]
    except ValueError as e:
        if "pickle" in str(e):
            raise CheckpointError(f"load: {path}: array {name!r} at '{_where(parts)}' holds "
                                  "pickled objects; minitx never loads pickles") from e
        raise CheckpointError(f"load: {path}: array {name!r} at '{_where(parts)}' is corrupt "
                              f"({e})") from e
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise CheckpointError(f"load: {path}: array {name!r} at '{_where(parts)}' is truncated "
                              f"or corrupt ({type(e).__name__}: {e})") from e


def _decode(node, archive, path, device, parts):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict) or "type" not in node:
        raise CheckpointError(f"load: {path}: malformed structure at '{_where(parts)}'")
    kind = node["type"]
    if kind == "dict":
        return {key: _decode(value, archive, path, device, parts + [key])
                for key, value in node["items"]}
    if kind in ("list", "tuple"):
        items = [_decode(v, archive, path, device, parts + [str(i)])
                 for i, v in enumerate(node["items"])]
        return tuple(items) if kind == "tuple" else items
    if kind == "scalar":
        array = _read_array(archive, node.get("index"), path, parts)
        return array[()]
    if kind == "array":
        array = _read_array(archive, node.get("index"), path, parts)
        return backend.to_device(array, device)
    if kind == "tensor":
        array = _read_array(archive, node.get("index"), path, parts)
        return Tensor(backend.to_device(array, device),
                      requires_grad=bool(node.get("requires_grad", False)))
    raise CheckpointError(f"load: {path}: unknown entry type {kind!r} at '{_where(parts)}'")
