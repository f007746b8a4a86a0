"""Fuzz ``minitx.serialization.load`` with damaged and hostile checkpoint files.

    python tools/fuzz_checkpoints.py [--files 10000] [--seed 0]

Every file is a small checkpoint (a model, optimizer state, scalars, strings) damaged in one of
these ways, drawn from a seeded generator:

* bit flips and overwritten bytes anywhere in the file, truncations, inserted or deleted bytes;
* member swaps: two members' contents exchanged, members renamed, removed, duplicated, or one
  added that is not an .npy array;
* hostile .npy headers: shapes claiming 10^12 elements, negative sizes, object dtypes (pickle),
  headers that do not parse, that nest deeply, that claim more bytes than there are;
* hostile structure JSON: nested 10^5 deep, wrong types at every kind of node, missing or
  repeated array references, bad versions, invalid UTF-8;
* zip tricks: encrypted flags, compressed members (a zip bomb among them), sizes and offsets
  in the directory that lie, overlapping and duplicated entries, garbage before or after.

Each load must end in ``CheckpointError`` naming the file, or return exactly what was saved
(some bytes, like zip timestamps, are not used). Anything else -- another exception, a
different value, a call to pickle -- is a failure. The script prints a table of outcomes per
kind of damage and exits 1 on any failure. tests/test_checkpoint_fuzz.py runs a few hundred
of the same files in CI.
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import pickle
import struct
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's minitx

import minitx  # noqa: E402
from minitx.serialization import STRUCTURE_KEY, CheckpointError, load, save  # noqa: E402

OK_ERROR, OK_SAME = "CheckpointError", "loaded unchanged"


# ---------------------------------------------------------------------- the checkpoint
def base_checkpoint():
    """A small checkpoint with every kind of value ``save`` supports."""
    rng = np.random.default_rng(1234)
    return {
        "model": {"embed.weight": minitx.Tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True),
                  "out.bias": minitx.Tensor(np.zeros(3, np.float64)),
                  "steps": minitx.Tensor(np.arange(4, dtype=np.int64))},
        "optimizer": {"state": [{"step": 3, "exp_avg": rng.standard_normal((5, 3)).astype(np.float32)}, {}],
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.98), "params": [0, 1]}]},
        "rng": (np.uint64(2 ** 63 + 5), np.asfortranarray(rng.integers(0, 9, (3, 2)))),
        "names": np.array(["eins", "zwei"]), "zero_d": np.array(2.5), "empty": np.zeros((0, 4)),
        "best": np.float64(31.25), "flag": np.bool_(True), "note": "résumé ✓", "none": None,
        "nan": float("nan"),
        # stored as its uint16 bits, the node recording "bfloat16" (.npy headers cannot name it)
        "low": minitx.Tensor(rng.standard_normal((2, 3)).astype(minitx.backend.bfloat16())),
    }


def base_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "base.npz"
        save(base_checkpoint(), path)
        return path.read_bytes()


def members_of(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def zip_of(members, method=zipfile.ZIP_STORED) -> bytes:
    """An archive of (name, bytes) pairs (a list allows duplicate names)."""
    out = io.BytesIO()
    items = members.items() if isinstance(members, dict) else members
    with zipfile.ZipFile(out, "w", method) as z, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a duplicate name is what some damage wants
        for name, data in items:
            info = zipfile.ZipInfo(str(name), (2026, 1, 1, 0, 0, 0))
            info.compress_type = method
            with z.open(info, "w") as f:
                f.write(data)
    return out.getvalue()


def npy(header: str, payload: bytes = b"", version=(1, 0), length=None) -> bytes:
    raw = header.encode("latin1" if version < (3, 0) else "utf8", "replace")
    size = len(raw) if length is None else length
    size_field = struct.pack("<H" if version == (1, 0) else "<I", size % (1 << (16 if version == (1, 0) else 32)))
    return b"\x93NUMPY" + bytes(version) + size_field + raw + payload


def header(descr="'<f8'", fortran="False", shape="(3,)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


# ---------------------------------------------------------------------- damage, by kind
def bit_flips(rng, data, members):
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 9))):
        out[int(rng.integers(len(out)))] ^= 1 << int(rng.integers(8))
    return bytes(out)


def overwrites(rng, data, members):
    out = bytearray(data)
    start = int(rng.integers(len(out)))
    end = min(len(out), start + int(rng.integers(1, 64)))
    out[start:end] = rng.integers(0, 256, end - start, dtype=np.uint8).tobytes()
    return bytes(out)


def truncations(rng, data, members):
    return data[:int(rng.integers(len(data)))]


def insertions(rng, data, members):
    at = int(rng.integers(len(data)))
    if rng.random() < 0.5:
        return data[:at] + rng.integers(0, 256, int(rng.integers(1, 32)), dtype=np.uint8).tobytes() + data[at:]
    return data[:at] + data[at + int(rng.integers(1, 32)):]


def member_swaps(rng, data, members):
    names = list(members)
    arrays = [n for n in names if n != STRUCTURE_KEY + ".npy"]
    a, b = rng.choice(names, 2, replace=False)
    choice = int(rng.integers(7))
    items = list(members.items())
    if choice == 0:  # contents exchanged
        swapped = dict(members)
        swapped[a], swapped[b] = members[b], members[a]
        return zip_of(swapped)
    if choice == 1:  # renamed to another array's name (which then appears twice or is lost)
        return zip_of([(b if n == a else n, d) for n, d in items])
    if choice == 2:  # removed
        return zip_of({n: d for n, d in items if n != a})
    if choice == 3:  # a member that is not .npy, under a name the structure refers to
        return zip_of([(n[:-4] if n == a else n, d) for n, d in items])
    if choice == 4:  # a second copy of a member
        return zip_of(items + [(a, members[b])])
    if choice == 5:  # an extra member that is not an array
        return zip_of(items + [("readme.txt", b"hello")])
    last, renamed = len(arrays) - 1, str(rng.choice(arrays))  # an array renamed past the last index
    return zip_of([(f"a{last + 1}.npy" if n == renamed else n, d) for n, d in items])


HOSTILE_HEADERS = [
    header(shape="(1000000000000,)"), header(shape="(1000000, 1000000)"), header(shape="(-1,)"),
    header(shape="(2**63,)"), header(shape="(9223372036854775808,)"), header(shape="(True,)"),
    header(shape="[3]"), header(shape="3"), header(shape="((1,),)"), header(shape="(1,) * 70"),
    header(shape="(" + "1, " * 70 + ")"), header(shape="(" + "0, " * 70 + ")"),
    header(descr="'|O'"), header(descr="[('a', '|O')]"), header(descr="[('a', '<f8'), ('b', '|O')]"),
    header(descr="'|V0'", shape="(1000000000000,)"), header(descr="'<U0'", shape="(1000000000000,)"),
    header(descr="'|V0'", shape="(0,)"), header(descr="('<f8', (1000000, 1000000))", shape="()"),
    header(descr="'garbage'"), header(descr="12"), header(descr="None"), header(descr="'" + "x" * 5000 + "'"),
    header(descr="(" * 3000 + "'<f8'" + ",)" * 3000), header(descr="[" * 3000 + "]" * 3000),
    header(descr="'<f8'", shape="(" + "-" * 5000 + "1,)"), header(shape="(" + "9" * 5000 + ",)"),
    header(fortran="'yes'"), header(fortran="1"), header(fortran="None"),
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }",   # Python 2
    "{'descr': '<f8', 'fortran_order': False, }", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}",
    "[1, 2, 3]", "{'descr': '<f8', ", "", "\x00" * 100, "{" * 100000, "__import__('os').system('true')",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }" + " " * 20000,
]


def hostile_headers(rng, data, members):
    target = str(rng.choice(list(members)))
    text = HOSTILE_HEADERS[int(rng.integers(len(HOSTILE_HEADERS)))]
    version = [(1, 0), (2, 0), (3, 0)][int(rng.integers(3))]
    kind = int(rng.integers(6))
    if kind == 0:
        body = npy(text, b"\x00" * int(rng.integers(0, 64)), version)
    elif kind == 1:  # the header length field lies
        body = npy(text, b"\x00" * 24, version, length=int(rng.choice([0, 1, 65535, 2 ** 32 - 1])))
    elif kind == 2:  # a plausible header over too little or too much data
        body = npy(header(shape=f"({int(rng.integers(0, 10 ** 6))},)"), b"\x00" * int(rng.integers(0, 80)), version)
    elif kind == 3:  # unknown versions and broken magic
        body = b"\x93NUMPY" + bytes(rng.integers(0, 256, 2, dtype=np.uint8)) + members[target][8:]
    elif kind == 4:
        body = members[target][:int(rng.integers(0, 12))]
    else:  # a valid header, the data of another dtype
        body = npy(header(descr="'<U3'", shape="(2,)"), b"\x00" * 24, version)
    return zip_of({**members, target: body})


def structure_text(members) -> bytes:
    """The JSON of an intact checkpoint's structure member."""
    return np.lib.format.read_array(io.BytesIO(members[STRUCTURE_KEY + ".npy"])).tobytes()


def _structure(text: bytes) -> bytes:
    return npy(header(descr="'|u1'", shape=f"({len(text)},)"), text)


def _nodes(node, out):
    if isinstance(node, dict):
        out.append(node)
        for item in node.get("items", []):
            _nodes(item[1] if node["type"] == "dict" else item, out)
    return out


# Values a structure never holds where they are put: every load of these must be refused.
BAD_NODES = [[], {}, [1, 2, 3], {"type": "dict"}, {"type": "dict", "items": [[1, 2]]},
             {"type": "dict", "items": [["k"]]}, {"type": "dict", "items": {"k": 1}}, {"type": "list", "items": 5},
             {"type": "tuple", "items": None}, {"type": "array"}, {"type": "array", "index": "0"},
             {"type": "array", "index": -1}, {"type": "array", "index": 10 ** 30}, {"type": "array", "index": 1.0},
             {"type": "array", "index": True}, {"type": "tensor", "index": 99, "requires_grad": "yes"},
             {"type": "pickle", "index": 0}, {"type": 3}, {"type": None}, {"items": []}]
BAD_FIELDS = {"type": ["pickle", 3, None, "Array", ""], "index": ["0", -1, 10 ** 30, 1.0, None, True],
              "items": [5, None, "x", {}], "requires_grad": ["yes", 1, None, []],
              "dtype": ["<f2", 5, "|O", "bfloat16", ["bfloat16"]], "shape": [[1, 2, 3], "x", [-1]],
              "crc32": [-1, "x", 2 ** 40]}
BAD_TOP = {"format": [None, "minitx", 1, "MINITX-CHECKPOINT"], "version": [0, 2, "1", 1.0, True, None, -1, 99],
           "root": BAD_NODES}


def _pick(rng, values):
    return values[int(rng.integers(len(values)))]


def hostile_structures(rng, data, members):
    text = structure_text(members)
    tree = json.loads(text)
    kind = int(rng.integers(10))
    if kind == 0:  # deep nesting
        depth = int(rng.choice([100, 200, 1000, 100_000]))
        root = "[" * depth + "]" * depth if rng.random() < 0.5 else '{"type": "list", "items": [' * depth + "]}" * depth
        raw = ('{"format": "minitx-checkpoint", "version": 1, "root": %s}' % root).encode()
    elif kind == 1:
        raw = text[:int(rng.integers(len(text)))]
    elif kind == 2:
        raw = bytearray(text)
        raw[int(rng.integers(len(raw)))] = int(rng.choice([0x80, 0xff, 0xc3]))
        raw = bytes(raw)
    elif kind == 3:
        field = _pick(rng, list(BAD_TOP))
        tree[field] = _pick(rng, BAD_TOP[field])
        raw = json.dumps(tree).encode()
    elif kind == 4:
        raw = json.dumps(_pick(rng, [None, 1, "x", [], {"format": "minitx-checkpoint"}])).encode()
    elif kind == 7:  # two arrays' nodes made to look older (no dtype, shape, CRC), then their indices swapped
        arrays = [n for n in _nodes(tree["root"], []) if "index" in n]
        first, second = (arrays[int(i)] for i in rng.choice(len(arrays), 2, replace=False))
        for node in (first, second):
            for field in ("dtype", "shape", "crc32"):
                node.pop(field, None)
        first["index"], second["index"] = second["index"], first["index"]
        raw = json.dumps(tree).encode()
    elif kind == 8:  # a dict key repeated: loading would keep one of the two values
        dicts = [n for n in _nodes(tree["root"], []) if n["type"] == "dict" and len(n["items"]) > 1]
        node = _pick(rng, dicts)
        i, j = rng.choice(len(node["items"]), 2, replace=False)
        node["items"][int(j)][0] = node["items"][int(i)][0]
        raw = json.dumps(tree).encode()
    else:  # one node of the tree replaced, or one of its fields
        nodes = _nodes(tree["root"], [])
        node = _pick(rng, nodes)
        if kind == 5 and node["type"] in ("dict", "list", "tuple") and node["items"]:
            i = int(rng.integers(len(node["items"])))
            if node["type"] == "dict":
                node["items"][i][1] = _pick(rng, BAD_NODES)
            else:
                node["items"][i] = _pick(rng, BAD_NODES)
        elif kind == 6 and "index" in node:  # a reference to another array
            others = [n["index"] for n in nodes if "index" in n and n["index"] != node["index"]]
            node["index"] = _pick(rng, others)
        else:
            fields = [f for f in BAD_FIELDS if f in node]
            field = _pick(rng, fields)
            node[field] = _pick(rng, BAD_FIELDS[field])
        raw = json.dumps(tree).encode()
    return zip_of({**members, STRUCTURE_KEY + ".npy": _structure(raw)})


def _central(data):
    """Offsets of the central directory entries and of the end record."""
    end = data.rfind(b"PK\x05\x06")
    (start,) = struct.unpack_from("<I", data, end + 16)
    offsets, at = [], start
    while data[at:at + 4] == b"PK\x01\x02":
        offsets.append(at)
        n, m, k = struct.unpack_from("<HHH", data, at + 28)
        at += 46 + n + m + k
    return offsets, end


def zip_tricks(rng, data, members):
    out = bytearray(data)
    entries, end = _central(data)
    entry = entries[int(rng.integers(len(entries)))]
    (local,) = struct.unpack_from("<I", data, entry + 42)
    kind = int(rng.integers(14))
    if kind == 0:  # encrypted
        out[entry + 8] |= 1
        if rng.random() < 0.5:
            out[local + 6] |= 1
    elif kind == 1:  # compression method
        method = int(rng.choice([1, 6, 9, 12, 14, 19, 97, 98, 99]))
        struct.pack_into("<H", out, entry + 10, method)
        struct.pack_into("<H", out, local + 8, method)
    elif kind in (2, 3):  # sizes that lie
        value = int(rng.choice([0, 1, 2 ** 31, 2 ** 32 - 2, 10 ** 9])) if rng.random() < 0.7 else int(rng.integers(2 ** 32))
        struct.pack_into("<I", out, entry + (20 if kind == 2 else 24), value)
    elif kind == 4:  # the entry points at another member's data (overlap) or anywhere
        other = entries[int(rng.integers(len(entries)))]
        target = struct.unpack_from("<I", data, other + 42)[0] if rng.random() < 0.5 else int(rng.integers(2 ** 32))
        struct.pack_into("<I", out, entry + 42, target)
    elif kind == 5:  # an entry listed twice
        size = 46 + sum(struct.unpack_from("<HHH", data, entry + 28))
        count, cd_size = struct.unpack_from("<HI", data, end + 10)
        out[end:end] = data[entry:entry + size]  # the end record moves back by size
        struct.pack_into("<HHI", out, end + size + 8, count + 1, count + 1, cd_size + size)
    elif kind == 6:  # the end record lies about the directory
        field, fmt = [(8, "<H"), (10, "<H"), (12, "<I"), (16, "<I")][int(rng.integers(4))]
        struct.pack_into(fmt, out, end + field, int(rng.integers(0, 2 ** (16 if fmt == "<H" else 32))))
    elif kind == 7:  # garbage before the archive (zip readers find it by the end record)
        return rng.integers(0, 256, int(rng.integers(1, 200)), dtype=np.uint8).tobytes() + data
    elif kind == 8:  # garbage after it, or a comment length that lies
        if rng.random() < 0.5:
            return data + rng.integers(0, 256, int(rng.integers(1, 200)), dtype=np.uint8).tobytes()
        struct.pack_into("<H", out, end + 20, int(rng.integers(1, 2 ** 16)))
    elif kind == 9:  # a name in the directory that differs from the local header's
        n = struct.unpack_from("<H", data, entry + 28)[0]
        out[entry + 46 + int(rng.integers(n))] ^= 0x20
    elif kind == 10:  # a deflated archive (as numpy.savez_compressed writes): save never writes one
        return zip_of(members, zipfile.ZIP_DEFLATED)
    elif kind == 11:  # a bzip2 member: readable by zipfile, refused by minitx
        out_zip = io.BytesIO()
        with zipfile.ZipFile(out_zip, "w") as z:
            for i, (name, body) in enumerate(members.items()):
                z.writestr(name, body, zipfile.ZIP_BZIP2 if i == 0 else zipfile.ZIP_STORED)
        return out_zip.getvalue()
    elif kind == 12:  # a zip64 extra field full of junk
        n, m = struct.unpack_from("<HH", data, entry + 28)
        junk = struct.pack("<HH", 1, 24) + rng.integers(0, 256, 24, dtype=np.uint8).tobytes()
        out[entry + 46 + n + m:entry + 46 + n + m] = junk
        struct.pack_into("<H", out, entry + 30, m + len(junk))
        struct.pack_into("<I", out, end + len(junk) + 12, struct.unpack_from("<I", data, end + 12)[0] + len(junk))
    else:  # a zip bomb: a member that inflates 1000-fold, under a header claiming 10^9 elements
        target = str(rng.choice(list(members)))
        return zip_of({**members, target: BOMB}, zipfile.ZIP_DEFLATED)
    return bytes(out)


# 4 MB of zeros after a header claiming 10^9 float64: about 4 kB once deflated
BOMB = npy(header(shape="(1000000000,)"), bytes(4 << 20))


KINDS = {"bit flips": bit_flips, "overwritten bytes": overwrites, "truncations": truncations,
         "inserted/deleted bytes": insertions, "member swaps": member_swaps,
         "hostile .npy headers": hostile_headers, "hostile structures": hostile_structures,
         "zip tricks": zip_tricks}


# ---------------------------------------------------------------------- running
def same(a, b) -> bool:
    """Equal values, types, dtypes and shapes (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, minitx.Tensor):
        return a.requires_grad == b.requires_grad and same(a.data, b.data)
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def outcome(path: Path, expected) -> str:
    """What loading ``path`` did: OK_ERROR, OK_SAME, or a failure described in words."""
    try:
        value = load(path)
    except CheckpointError as e:
        return OK_ERROR if str(path) in str(e) else f"CheckpointError without the file name: {e}"
    except Exception as e:  # a failure, to report
        return f"{type(e).__name__}: {str(e)[:120]}"
    return OK_SAME if same(value, expected) else "loaded a DIFFERENT value"


class PickleCalled(BaseException):
    """Not an Exception, so that no ``except Exception`` in the loader can turn it into a
    CheckpointError and hide the call."""


def forbid_pickle():
    """Make every pickle entry point raise (load must never unpickle); returns an undo."""
    saved = {name: getattr(pickle, name) for name in ("load", "loads", "Unpickler")}

    def refuse(*args, **kwargs):
        raise PickleCalled("pickle was called")

    for name in saved:
        setattr(pickle, name, refuse)
    return lambda: [setattr(pickle, name, value) for name, value in saved.items()]


def fuzz(files: int, seed: int, directory: Path):
    """Yield (kind, outcome, seconds) for ``files`` damaged files (kinds in turn)."""
    rng = np.random.default_rng(seed)
    data = base_bytes()
    members = members_of(data)
    expected = base_checkpoint()
    kinds = list(KINDS.items())
    for i in range(files):
        name, damage = kinds[i % len(kinds)]
        path = directory / f"damaged-{i}.npz"
        path.write_bytes(damage(rng, data, members))
        started = time.perf_counter()
        result = outcome(path, expected)  # a PickleCalled goes through: it is no Exception
        yield name, result, time.perf_counter() - started
        path.unlink()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000, help="how many damaged files (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    undo = forbid_pickle()
    table = collections.defaultdict(collections.Counter)
    failures = collections.Counter()
    slowest = 0.0
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for kind, result, seconds in fuzz(args.files, args.seed, Path(tmp)):
                ok = result in (OK_ERROR, OK_SAME)
                table[kind][result if ok else "FAILURE"] += 1
                if not ok:
                    failures[f"{kind}: {result}"] += 1
                slowest = max(slowest, seconds)
    finally:
        undo()
    columns = [OK_ERROR, OK_SAME, "FAILURE"]
    print(f"{args.files} damaged checkpoints, seed {args.seed}, {time.perf_counter() - started:.1f} s "
          f"(slowest load {slowest * 1000:.0f} ms)\n")
    print(f"| {'damage':<22} | " + " | ".join(columns) + " |")
    print(f"|{'-' * 24}|" + "|".join("-" * (len(c) + 2) for c in columns) + "|")
    for kind in KINDS:
        print(f"| {kind:<22} | " + " | ".join(f"{table[kind][c]:>{len(c)}}" for c in columns) + " |")
    totals = [sum(table[k][c] for k in KINDS) for c in columns]
    print(f"| {'all':<22} | " + " | ".join(f"{t:>{len(c)}}" for t, c in zip(totals, columns)) + " |")
    for failure, count in failures.most_common(20):
        print(f"FAILURE x{count}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
