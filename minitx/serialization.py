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
  [NODE, ...]}``, ``{"type": "array", "index": k, ...}``, ``{"type": "tensor", "index": k,
  "requires_grad": bool, ...}`` or ``{"type": "scalar", "index": k, ...}`` (a numpy scalar,
  stored as the 0-d array ``ak``), where ``...`` is ``"dtype"`` (like ``"<f4"``), ``"shape"``
  and ``"crc32"`` (of the member's bytes in C order), recorded so that a member swapped or
  damaged is detected. Dicts, lists and tuples nest at most ``MAX_DEPTH`` levels.
  A bfloat16 array (ml_dtypes' type, which the .npy format has no name for) is stored as its
  bits, a uint16 array, and its node records the dtype ``"bfloat16"``.

Loading never unpickles and never trusts a size written in the file: ``load`` reads the zip
archive and the .npy headers itself, checks every claimed size against the member's real size
before allocating, and raises ``CheckpointError`` naming the file and the member for anything
damaged or hostile (see ``load``).

Saving is atomic: the archive is written to a temporary file next to ``path``, flushed and
fsync'ed, then renamed over ``path`` (``os.replace``), so a crash or an error mid-save leaves
any previous checkpoint intact. ``path`` is used exactly as given (no '.npz' added).
"""
from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import re
import struct
import tempfile
import zipfile
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

from minitx import backend
from minitx.autograd.tensor import Tensor

FORMAT = "minitx-checkpoint"
FORMAT_VERSION = 1
STRUCTURE_KEY = "minitx_structure"
MAX_DEPTH = 64  # dicts, lists and tuples nest at most this deep (load refuses deeper JSON)
# a dict level is three JSON levels ({"items": [[key, NODE]]}), plus the header and a leaf
_MAX_JSON_DEPTH = 3 * MAX_DEPTH + 3

__all__ = ["save", "load", "write_atomically", "read_json", "write_json", "CheckpointError", "FORMAT_VERSION"]


class CheckpointError(ValueError):
    """A file that is not a minitx checkpoint, or one that is truncated or corrupt."""


# ---------------------------------------------------------------------- save
def save(obj, path) -> None:
    """Write ``obj`` (see the module docstring for what it may hold) to ``path`` atomically.

    Raises TypeError naming the key path (like ``model/encoder.0.weight``) for an object that
    cannot be saved or a dict key that is not a string; the file is then not touched.
    """
    path = _file_path("save", path)
    arrays: dict[str, np.ndarray] = {}
    root = _encode(obj, arrays, path_parts=[], seen=set())
    header = {"format": FORMAT, "version": FORMAT_VERSION, "root": root}
    text = json.dumps(header, ensure_ascii=True, allow_nan=True)
    arrays[STRUCTURE_KEY] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)

    write_atomically(path, lambda f: np.savez(f, **arrays))


def _file_path(op, path) -> str:
    """``path`` (a str, bytes or os.PathLike, as open() takes) as a str, or a TypeError naming ``op``
    (save(path, obj), the arguments swapped, would say only what os.fspath expected)."""
    try:
        return os.fsdecode(path)
    except TypeError:
        raise TypeError(f"{op}: the path must be a str, bytes or os.PathLike, got {type(path).__name__}") from None


def write_atomically(path, write) -> None:
    """Call ``write(f)`` on a binary file that becomes ``path`` only once complete: a
    temporary file next to it, flushed and fsync'ed, then renamed over it (``os.replace``).
    An error or a kill midway leaves any previous file at ``path`` as it was."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp")
    except FileNotFoundError:  # its message would name only the temporary file, never made
        raise FileNotFoundError(f"cannot write {path}: the directory {directory} does not exist") from None
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


def write_json(path, obj, **dumps_options) -> None:
    """Write ``obj`` as UTF-8 JSON (``json.dumps`` with ``dumps_options``, and a final newline)
    to ``path`` atomically: a kill midway leaves any earlier file whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, **dumps_options) + "\n"
    write_atomically(path, lambda f: f.write(text.encode("utf-8")))


def read_json(path, kind=dict):
    """The JSON value in ``path``, which must be a ``kind`` (dict: a JSON object, list: an
    array). A file that is not UTF-8 JSON, or holds another kind of value, raises ValueError
    naming the file, where it broke and what was expected; a missing one FileNotFoundError."""
    path = Path(path)
    expected = {dict: "a JSON object {...}", list: "a JSON array [...]"}[kind]
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); "
                         f"expected {expected}") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start}); expected {expected}") from None
    if not isinstance(data, kind):
        raise ValueError(f"{path} holds a JSON {type(data).__name__}, expected {expected}")
    return data


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


# The dtype a node records for a bfloat16 array, whose member holds its bits as uint16.
_BFLOAT16 = "bfloat16"
# What save recorded for one before that (bfloat16's dtype.str; no other dtype's reads so): the
# member, written by numpy.savez, reads back as 2-byte voids '|V2'. Such files load as bfloat16.
_EARLIER_BFLOAT16 = "<V2"


def _add_array(array: np.ndarray, arrays: dict, parts, kind: str) -> dict:
    """Store ``array`` as the next member; its node records dtype, shape and CRC-32 so that
    ``load`` can tell the member is the one that was written."""
    if array.dtype.hasobject:
        raise TypeError(f"save: cannot save the object-dtype array at '{_where(parts)}'; "
                        "checkpoints hold numeric, bool and string arrays only (no pickle)")
    dtype = array.dtype.str
    if array.dtype.name == "bfloat16":  # .npy headers cannot name it (numpy reads back 2-byte voids)
        array, dtype = array.view(np.uint16), _BFLOAT16
    elif array.dtype.fields is None and not _names_itself(array.dtype):
        raise TypeError(f"save: cannot save the {array.dtype.name} array at '{_where(parts)}': a .npy member cannot "
                        "name its dtype (it would load back as raw bytes); convert it first (to float32, say)")
    index = len(arrays)
    arrays[f"a{index}"] = array
    return {"type": kind, "index": index, "dtype": dtype, "shape": list(array.shape),
            "crc32": _crc32(array)}


def _names_itself(dtype) -> bool:
    """Whether a .npy header's dtype string reads back as ``dtype`` (ml_dtypes' float8 types do not)."""
    try:
        return np.dtype(dtype.str) == dtype
    except TypeError:  # ('<f1': float8_e5m2)
        return False


def _to_numpy(array) -> np.ndarray:
    if type(array).__module__.startswith("cupy"):
        return array.get()
    return np.asarray(array)


def _encode(obj, arrays: dict, path_parts: list, seen: set):
    """Turn ``obj`` into a JSON node, moving arrays into ``arrays``."""
    if isinstance(obj, Tensor):
        node = _add_array(_to_numpy(obj.data), arrays, path_parts, "tensor")
        return {**node, "requires_grad": bool(obj.requires_grad)}
    if isinstance(obj, np.ndarray) or (type(obj).__module__.startswith("cupy")
                                       and type(obj).__name__ == "ndarray"):
        return _add_array(_to_numpy(obj), arrays, path_parts, "array")
    if isinstance(obj, np.generic):  # before float: np.float64 is a subclass of float
        return _add_array(np.asarray(obj), arrays, path_parts, "scalar")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, (dict, list, tuple)):
        if id(obj) in seen:
            raise ValueError(f"save: circular reference at '{_where(path_parts)}'")
        if len(path_parts) >= MAX_DEPTH:
            raise ValueError(f"save: '{_where(path_parts)}' nests dicts, lists and tuples more than "
                             f"{MAX_DEPTH} levels deep, more than load reads")
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
# Loading reads the zip archive and the .npy headers itself instead of calling numpy.load:
# numpy trusts sizes claimed by the file (it allocates what a header claims before reading),
# and a damaged file can make it raise almost any exception. Here every claim is checked
# against the bytes that are really there before anything is allocated, and every failure
# is a CheckpointError naming the file and the member.
_NPY_MAGIC = b"\x93NUMPY"
_NPY_HEADER_FORMATS = {(1, 0): ("<H", "latin1"), (2, 0): ("<I", "latin1"), (3, 0): ("<I", "utf8")}
_MAX_NPY_HEADER = 10_000          # numpy's own limit for headers it parses safely


def load(path, device: str = "cpu"):
    """Read a checkpoint written by ``save``; arrays and Tensors are placed on ``device``.

    Raises FileNotFoundError for a missing file and CheckpointError (a ValueError) naming the
    file, and the archive member where one is at fault, for anything that is not an intact
    minitx checkpoint: not a zip archive, truncated, bit-flipped (the zip CRC of each member
    and a CRC of each array recorded in the structure are checked), members renamed or
    swapped, encrypted or compressed (save stores members as they are, so each member's size
    is bounded by the file's and a small file cannot expand), .npy headers that claim more
    data than the member holds or an object dtype (pickle never runs), a structure description
    that is not JSON, nested deeper than MAX_DEPTH, or refers to what is not there.
    """
    path = _file_path("load", path)
    device = backend.check_device(device, "load")
    # We open the file ourselves so that it is closed even when reading fails half-way.
    with open(path, "rb") as f:
        if f.read(len(_NPY_MAGIC)) == _NPY_MAGIC:
            raise CheckpointError(f"load: {path} is a single .npy array, not a minitx checkpoint "
                                  "(an .npz archive)")
        f.seek(0)
        size = os.fstat(f.fileno()).st_size
        with _damage(path, None, "is not a minitx checkpoint, or it is truncated or corrupt"):
            archive = zipfile.ZipFile(f)
        with archive:
            return _Reader(archive, path, size).checkpoint(device)


@contextlib.contextmanager
def _damage(path, member, what):
    """Turn any exception raised while parsing untrusted bytes into a CheckpointError.

    The parsers used (zipfile, zlib, ast, json) raise many types on hostile input (ValueError,
    KeyError, TypeError, EOFError, NotImplementedError, RecursionError, ...); all of them mean
    the same thing here. Sizes are checked before anything is allocated, so a MemoryError
    cannot come from a claim in the file.
    """
    try:
        yield
    except CheckpointError:
        raise
    except Exception as e:  # whatever the parser raised: see the docstring
        where = f"{path}: member {member!r}" if member else path
        raise CheckpointError(f"load: {where} {what} ({type(e).__name__}: {e})") from e


class _Reader:
    """The members of one open archive, checked against the archive's real size."""

    def __init__(self, archive: zipfile.ZipFile, path: str, size: int):
        self.path = path
        self.members = {}
        total = 0
        for info in archive.infolist():
            name = info.filename
            self._check(not name.endswith("data.pkl"), name, "is a pickle: this is PyTorch's file (torch.save), "
                        "which minitx does not unpickle; read it with torch.load and give the state dict to "
                        "load_state_dict, which takes PyTorch tensors as they are")
            self._check(name.endswith(".npy"), name, "is not an .npy array; a minitx checkpoint "
                        "holds .npy members only")
            self._check(name[:-4] not in self.members, name, "appears twice in the archive")
            self._check(not info.flag_bits & 0x1, name, "is encrypted")
            self._check(info.compress_type == zipfile.ZIP_STORED, name, f"uses compression method "
                        f"{info.compress_type}; save stores members uncompressed (method 0), and only "
                        "those are read")
            self._check(info.header_offset + info.compress_size <= size, name,
                        f"claims {info.compress_size} bytes at offset {info.header_offset}, past "
                        f"the end of the {size}-byte file")
            self._check(info.file_size == info.compress_size, name, f"claims {info.file_size} bytes "
                        f"stored in {info.compress_size}")
            total += info.compress_size
            self.members[name[:-4]] = info
        # members that overlap could make a small file expand to any size
        self._check(total <= size, None, f"has members that claim {total} bytes in all, more than "
                    f"the file's {size}: they overlap")
        self.archive = archive
        self.used = set()
        self.legacy = []  # (member, where) of the arrays whose node records no dtype, shape and CRC
        self.recorded = 0  # how many nodes record them

    def _check(self, condition, member, what):
        if not condition:
            where = f"{self.path}: member {member!r}" if member else self.path
            raise CheckpointError(f"load: {where} {what}")

    def checkpoint(self, device):
        self._check(STRUCTURE_KEY in self.members, None,
                    f"is an .npz archive but not a minitx checkpoint (it has no '{STRUCTURE_KEY}' "
                    f"member; members: {sorted(self.members)[:10]})")
        member = STRUCTURE_KEY + ".npy"
        raw = self.array(STRUCTURE_KEY, "<structure>")
        self._check(raw.dtype == np.uint8 and raw.ndim == 1, member,
                    f"should hold uint8 JSON text but holds {raw.dtype} {raw.shape}")
        with _damage(self.path, member, "is not valid UTF-8 JSON"):
            text = raw.tobytes().decode("utf-8")
            depth = _json_depth(text)
            self._check(depth <= _MAX_JSON_DEPTH, member, f"nests {depth} levels deep; at most "
                        f"{_MAX_JSON_DEPTH} are read (a structure of depth {MAX_DEPTH})")
            header = json.loads(text)
        self._check(isinstance(header, dict) and header.get("format") == FORMAT and "root" in header,
                    member, "is not a minitx checkpoint structure (bad header)")
        version = header.get("version")
        self._check(type(version) is int and 1 <= version <= FORMAT_VERSION, member,
                    f"has checkpoint format version {version!r}; this minitx reads versions 1 to "
                    f"{FORMAT_VERSION}")
        root = _decode(header["root"], self, device, [])
        if self.legacy and self.recorded:  # an older file records none; save records every one
            member, where = self.legacy[0]
            self._check(False, member, f"(at '{where}') has lost the dtype, shape and CRC-32 that the "
                        f"structure records for the file's other {self.recorded} arrays: an edited structure")
        unused = sorted(set(self.members) - self.used - {STRUCTURE_KEY})
        # save refers to every array it writes: one left over means a reference was lost
        self._check(not unused, f"{unused[0]}.npy" if unused else None,
                    "is not referenced by the structure")
        return root

    def array(self, key, where) -> np.ndarray:
        """The array in member ``key + '.npy'``; ``where`` is its place in the structure."""
        member = f"{key}.npy"
        self._check(key in self.members, None,
                    f"'{where}' refers to the member {member!r}, which is not in the archive")
        # save gives every array its own member: reading one twice could only multiply memory
        self._check(key not in self.used, member, f"is referenced a second time, at '{where}'")
        self.used.add(key)
        with _damage(self.path, member, f"(at '{where}') is truncated or corrupt"):
            with self.archive.open(self.members[key]) as f:
                data = f.read()  # at most the size checked in __init__; the zip CRC is checked at the end
            offset, shape, fortran_order, dtype = _npy_header(data)
        if dtype.hasobject:
            raise CheckpointError(f"load: {self.path}: member {member!r} (at '{where}') holds "
                                  "pickled objects; minitx never loads pickles")
        count = math.prod(shape)
        needed = count * dtype.itemsize
        self._check(needed == len(data) - offset and (dtype.itemsize > 0 or count == 0), member,
                    f"(at '{where}') has a header claiming {dtype} {shape} ({needed} bytes) but "
                    f"holds {len(data) - offset} bytes of data")
        with _damage(self.path, member, f"(at '{where}') has an impossible shape {shape}"):
            order = "F" if fortran_order else "C"
            if count == 0:
                return np.empty(shape, dtype, order=order)
            return np.frombuffer(data, dtype, count, offset).reshape(shape, order=order).copy(order="K")


def _npy_header(data: bytes):
    """(data offset, shape, fortran_order, dtype) from the bytes of a .npy member."""
    if data[:len(_NPY_MAGIC)] != _NPY_MAGIC or len(data) < 8:
        raise ValueError("it does not start with the .npy magic string")
    version = (data[6], data[7])
    if version not in _NPY_HEADER_FORMATS:
        raise ValueError(f"unknown .npy format version {version}")
    length_format, encoding = _NPY_HEADER_FORMATS[version]
    start = 8 + struct.calcsize(length_format)
    (length,) = struct.unpack(length_format, data[8:start])
    if length > _MAX_NPY_HEADER or start + length > len(data):
        raise ValueError(f"the header claims {length} bytes")
    fields = ast.literal_eval(data[start:start + length].decode(encoding))
    if not isinstance(fields, dict) or set(fields) != {"descr", "fortran_order", "shape"}:
        raise ValueError(f"the header is not a .npy header: {fields!r:.200}")
    shape, fortran_order = fields["shape"], fields["fortran_order"]
    if not (isinstance(shape, tuple) and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"the header's shape {shape!r:.200} is not a tuple of sizes")
    if type(fortran_order) is not bool:
        raise ValueError(f"the header's fortran_order {fortran_order!r:.200} is not a bool")
    return start + length, shape, fortran_order, np.lib.format.descr_to_dtype(fields["descr"])


def _json_depth(text: str) -> int:
    """How deeply the JSON ``text`` nests arrays and objects (brackets inside strings skipped);
    checked before json.loads, which would recurse once per level."""
    outside_strings = re.sub(r'"[^"\\]*(?:\\.[^"\\]*)*"', '""', text).encode("utf-8")
    codes = np.frombuffer(outside_strings, np.uint8)
    steps = (np.isin(codes, _OPENING).astype(np.int64) - np.isin(codes, _CLOSING))
    return int(np.cumsum(steps).max(initial=0))


_OPENING, _CLOSING = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def _decode(node, reader: _Reader, device, parts):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    where = _where(parts)
    member = STRUCTURE_KEY + ".npy"
    reader._check(isinstance(node, dict) and isinstance(node.get("type"), str), member,
                  f"is malformed at '{where}': {str(node)[:100]}")
    kind = node["type"]
    if kind in ("dict", "list", "tuple"):
        items = node.get("items")
        reader._check(isinstance(items, list), member, f"has no list of items at '{where}'")
        if kind == "dict":
            reader._check(all(isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                              for item in items), member, f"has a malformed dict item at '{where}'")
            duplicate = next((key for key, n in Counter(key for key, _ in items).items() if n > 1), None)
            reader._check(duplicate is None, member, f"has the key {duplicate!r} twice at '{where}'; "
                          "a dict saves each key once, so one of its values would be lost")
            return {key: _decode(value, reader, device, parts + [key]) for key, value in items}
        values = [_decode(v, reader, device, parts + [str(i)]) for i, v in enumerate(items)]
        return tuple(values) if kind == "tuple" else values
    if kind not in ("array", "tensor", "scalar"):
        reader._check(False, member, f"has the unknown entry type {kind!r} at '{where}'")
    index = node.get("index")
    reader._check(type(index) is int and index >= 0, member,
                  f"has the array index {index!r} at '{where}'")
    array = _check_recorded(node, reader.array(f"a{index}", where), reader, f"a{index}.npy", where)
    if kind == "scalar":
        reader._check(array.ndim == 0, f"a{index}.npy", f"(at '{where}') should hold a scalar "
                      f"but has shape {array.shape}")
        return array[()]
    if kind == "array":
        return backend.to_device(array, device)
    requires_grad = node.get("requires_grad", False)
    reader._check(type(requires_grad) is bool, member, f"has requires_grad {requires_grad!r} at '{where}'")
    with _damage(reader.path, f"a{index}.npy", f"(at '{where}') cannot be a Tensor"):
        tensor = Tensor(backend.to_device(array, device), requires_grad=requires_grad)
    reader._check(tensor.dtype == array.dtype, f"a{index}.npy", f"(at '{where}') has the dtype "
                  f"{array.dtype}, which a Tensor cannot hold")
    return tensor


def _check_recorded(node, array, reader, member, where):
    """The dtype, shape and CRC-32 that ``save`` recorded must match the member's array: a
    member swapped for another, renamed, or damaged in a way the zip CRC misses is caught.
    Returns the array as it was saved: a bfloat16 member (recorded "bfloat16" over its uint16
    bits, or "<V2" over 2-byte voids by an earlier save) viewed as bfloat16."""
    recorded = (node.get("dtype"), node.get("shape"), node.get("crc32"))
    if recorded == (None, None, None):  # written before these were recorded: checked in checkpoint()
        reader.legacy.append((member, where))
        return array
    reader.recorded += 1
    stored, bfloat16 = recorded[0], True  # the member's dtype (compared with ==: a hostile one may be a list)
    if recorded[0] == _BFLOAT16:
        stored = np.dtype(np.uint16).str
    elif recorded[0] == _EARLIER_BFLOAT16:
        stored = "|V2"
    else:
        bfloat16 = False
    actual = (array.dtype.str, list(array.shape), _crc32(array))
    reader._check((stored, *recorded[1:]) == actual, member, f"(at '{where}') holds {array.dtype.str} "
                  f"{list(array.shape)} with CRC-32 {actual[2]} but the structure recorded "
                  f"{recorded[0]}{f' (stored as {stored})' if bfloat16 else ''} {recorded[1]} with "
                  f"CRC-32 {recorded[2]}: a member swapped, renamed or damaged")
    return array.view(backend.bfloat16()) if bfloat16 else array


def _crc32(array: np.ndarray) -> int:
    """CRC-32 of the array's bytes in C order (whatever order it is stored in)."""
    if array.size == 0:
        return 0
    return zlib.crc32(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
