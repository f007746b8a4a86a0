"""Damaged and hostile checkpoints: every one is refused with a CheckpointError naming the file
and the member, or loads unchanged; never another exception, a different value, or pickle.

The damage comes from tools/fuzz_checkpoints.py (run it for 10,000 files); here a few hundred
seeded files, plus one file for each failure that was once seen."""
import collections
import importlib.util
import json
import re
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import serialization
from minitx.serialization import STRUCTURE_KEY, CheckpointError, load, save

TOOL = Path(__file__).resolve().parent.parent / "tools" / "fuzz_checkpoints.py"
spec = importlib.util.spec_from_file_location("fuzz_checkpoints", TOOL)
fz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fz)


@pytest.fixture
def no_pickle():
    undo = fz.forbid_pickle()  # raises a BaseException, which no `except Exception` can hide
    yield
    undo()


def test_seeded_fuzz_every_damaged_file_is_refused_or_unchanged(tmp_path, no_pickle):
    intact = tmp_path / "intact.npz"
    intact.write_bytes(fz.base_bytes())
    assert fz.same(load(intact), fz.base_checkpoint())  # what "unchanged" is measured against
    outcomes = collections.defaultdict(collections.Counter)
    for kind, result, _ in fz.fuzz(320, seed=2026, directory=tmp_path):
        outcomes[kind][result] += 1
    failures = {kind: {r: n for r, n in counts.items() if r not in (fz.OK_ERROR, fz.OK_SAME)}
                for kind, counts in outcomes.items()}
    assert not any(failures.values()), failures
    # each kind of damage really damaged most of its files (the generator did its job)
    for kind, counts in outcomes.items():
        assert counts[fz.OK_ERROR] >= 0.6 * sum(counts.values()), (kind, counts)
    assert set(outcomes) == set(fz.KINDS)


# ---------------------------------------------------------------------- one file per failure once seen
@pytest.fixture
def intact():
    data = fz.base_bytes()
    return data, fz.members_of(data)


def refused(path, *patterns):
    with pytest.raises(CheckpointError) as info:
        load(path)
    message = str(info.value)
    assert str(path) in message
    for pattern in patterns:
        assert re.search(pattern, message), message
    return message


def replaced(members, name, body):
    return fz.zip_of({**members, name: body})


def test_a_header_claiming_10_to_the_12_elements_is_refused_before_allocating(tmp_path, intact):
    path = tmp_path / "huge.npz"
    path.write_bytes(replaced(intact[1], "a0.npy", fz.npy(fz.header(shape="(1000000000000,)"))))
    refused(path, r"member 'a0\.npy' \(at 'model/embed\.weight'\)",
            r"claiming float64 \(1000000000000,\) \(8000000000000 bytes\) but holds 0 bytes")


def test_compressed_members_are_refused_so_no_file_expands(tmp_path, intact):
    bomb = tmp_path / "bomb.npz"  # 4 MB of zeros deflated to a few kB, under a header claiming 8 GB
    bomb.write_bytes(fz.zip_of({**intact[1], "a1.npy": fz.BOMB}, zipfile.ZIP_DEFLATED))
    refused(bomb, r"member 'a0\.npy' uses compression method 8; save stores members uncompressed")
    stored_bomb = tmp_path / "stored.npz"
    stored_bomb.write_bytes(fz.zip_of({**intact[1], "a1.npy": fz.BOMB}))
    refused(stored_bomb, r"member 'a1\.npy'", r"claiming float64 \(1000000000,\) \(8000000000 bytes\) but holds "
                                              r"4194304 bytes")


@pytest.mark.parametrize("text, pattern", [
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }", "SyntaxError"),  # Python 2: was TokenError
    (fz.header(descr="(" * 3000 + "'<f8'" + ",)" * 3000), "SyntaxError|RecursionError|MemoryError"),
    (fz.header(descr="'|O'"), "pickled objects"),
    (fz.header(shape="(-1,)"), "not a tuple of sizes"),
    (fz.header(descr="'garbage'"), "TypeError"),
    ("[1, 2, 3]", "not a .npy header"),
], ids=["python-2", "deep-descr", "object-dtype", "negative-size", "bad-descr", "not-a-dict"])
def test_hostile_npy_headers(tmp_path, intact, text, pattern):
    path = tmp_path / "header.npz"
    path.write_bytes(replaced(intact[1], "a2.npy", fz.npy(text, b"\0" * 24)))
    refused(path, r"member 'a2\.npy'", pattern)


def zip_with_central_field(data, member, offset, fmt, value, local_offset=None):
    out = bytearray(data)
    entries, _ = fz._central(data)
    names = [data[e + 46:e + 46 + int.from_bytes(data[e + 28:e + 30], "little")] for e in entries]
    entry = entries[names.index(member.encode())]
    struct.pack_into(fmt, out, entry + offset, value)
    if local_offset is not None:
        local = int.from_bytes(data[entry + 42:entry + 46], "little")
        struct.pack_into(fmt, out, local + local_offset, value)
    return bytes(out)


def test_zip_tricks(tmp_path, intact):
    data = intact[0]
    cases = {  # name: (file bytes, what the message must say)
        "encrypted": (zip_with_central_field(data, "a3.npy", 8, "<H", 1, 6), r"member 'a3\.npy' is encrypted"),
        "unknown method": (zip_with_central_field(data, "a3.npy", 10, "<H", 99, 8),
                           r"member 'a3\.npy' uses compression method 99"),
        "size past the end": (zip_with_central_field(data, "a3.npy", 20, "<I", 10 ** 9), r"'a3\.npy' claims"),
        "overlapping": (zip_with_central_field(data, "a3.npy", 42, "<I", 0), "truncated or corrupt|overlap"),
        "not npy": (fz.zip_of({("a4" if n == "a4.npy" else n): b for n, b in intact[1].items()}),
                    r"member 'a4' is not an \.npy array"),
        "duplicate": (fz.zip_of(list(intact[1].items()) + [("a4.npy", intact[1]["a5.npy"])]),
                      r"member 'a4\.npy' appears twice"),
    }
    for name, (body, pattern) in cases.items():
        path = tmp_path / f"{name}.npz"
        path.write_bytes(body)
        refused(path, pattern)


def test_swapped_members_are_caught_by_the_recorded_dtype_shape_and_crc(tmp_path, intact):
    members = dict(intact[1])
    members["a0.npy"], members["a3.npy"] = members["a3.npy"], members["a0.npy"]  # both float32 (5, 3)
    path = tmp_path / "swapped.npz"
    path.write_bytes(fz.zip_of(members))
    refused(path, r"member 'a0\.npy' \(at 'model/embed\.weight'\) holds <f4 \[5, 3\] with CRC-32 \d+ but the "
                  r"structure recorded <f4 \[5, 3\] with CRC-32 \d+")


def structure_file(tmp_path, root_text):
    raw = ('{"format": "minitx-checkpoint", "version": 1, "root": %s}' % root_text).encode()
    path = tmp_path / "structure.npz"
    path.write_bytes(fz.zip_of({STRUCTURE_KEY + ".npy": fz._structure(raw)}))
    return path


@pytest.mark.parametrize("root, pattern", [
    ("[" * 100_000 + "]" * 100_000, "nests 100001 levels deep"),                      # was RecursionError
    ('{"type": "dict", "items": [[1, 2]]}', "malformed dict item at '<root>'"),         # was TypeError
    ('{"type": "list"}', "no list of items at '<root>'"),                               # was KeyError
    ('{"type": "list", "items": [[1]]}', r"malformed at '0'"),                          # was AttributeError
    ('{"type": "array", "index": 0}', r"refers to the member 'a0\.npy', which is not in the archive"),
    ('{"type": "array", "index": true}', "array index True"),
], ids=["deep", "non-string-key", "no-items", "list-as-node", "missing-member", "bool-index"])
def test_hostile_structures(tmp_path, root, pattern):
    refused(structure_file(tmp_path, root), r"member 'minitx_structure\.npy'|member 'a0\.npy'", pattern)


def test_depth_is_bounded_on_save_and_load_alike(tmp_path):
    deep = leaf = []
    for _ in range(serialization.MAX_DEPTH - 1):
        leaf.append([])
        leaf = leaf[0]
    save(deep, tmp_path / "deepest.npz")
    assert load(tmp_path / "deepest.npz") == deep
    leaf.append([])
    with pytest.raises(ValueError, match=f"more than {serialization.MAX_DEPTH} levels deep"):
        save(deep, tmp_path / "too-deep.npz")


def test_an_unreferenced_or_twice_referenced_member_is_refused(tmp_path):
    arrays = {"a0.npy": fz.npy(fz.header(shape="(1,)"), b"\0" * 8)}
    for root, pattern in [('null', r"member 'a0\.npy' is not referenced"),
                          ('{"type": "list", "items": [{"type": "array", "index": 0}, '
                           '{"type": "array", "index": 0}]}', r"'a0\.npy' is referenced a second time, at '1'")]:
        raw = ('{"format": "minitx-checkpoint", "version": 1, "root": %s}' % root).encode()
        path = tmp_path / "refs.npz"
        path.write_bytes(fz.zip_of({**arrays, STRUCTURE_KEY + ".npy": fz._structure(raw)}))
        refused(path, pattern)


def test_older_nodes_in_a_file_with_crcs_and_a_repeated_key_are_refused(tmp_path, intact):
    """Two ways an edited structure loaded other data without a word: nodes stripped of their
    recorded dtype, shape and CRC (so they read as an older file's) and their arrays swapped;
    and a dict key written twice, which kept only one of its two values."""
    tree = json.loads(fz.structure_text(intact[1]))
    first, second = [n for n in fz._nodes(tree["root"], []) if "index" in n][:2]
    for node in (first, second):
        del node["dtype"], node["shape"], node["crc32"]
    first["index"], second["index"] = second["index"], first["index"]
    path = tmp_path / "legacy.npz"
    path.write_bytes(fz.zip_of({**intact[1], STRUCTURE_KEY + ".npy": fz._structure(json.dumps(tree).encode())}))
    refused(path, r"has lost the dtype, shape and CRC-32 that the structure records for the file's other \d+ arrays")

    tree = json.loads(fz.structure_text(intact[1]))
    items = tree["root"]["items"]
    items[1][0] = items[0][0]
    path = tmp_path / "repeated.npz"
    path.write_bytes(fz.zip_of({**intact[1], STRUCTURE_KEY + ".npy": fz._structure(json.dumps(tree).encode())}))
    refused(path, rf"has the key '{items[0][0]}' twice at '<root>'")


def test_a_file_from_before_crcs_still_loads(tmp_path, intact):
    """A structure with no recorded dtype, shape or CRC anywhere (the first format) loads."""
    tree = json.loads(fz.structure_text(intact[1]))
    for node in fz._nodes(tree["root"], []):
        for field in ("dtype", "shape", "crc32"):
            node.pop(field, None)
    path = tmp_path / "older.npz"
    path.write_bytes(fz.zip_of({**intact[1], STRUCTURE_KEY + ".npy": fz._structure(json.dumps(tree).encode())}))
    expected = fz.base_checkpoint()
    # only the recorded dtype says that uint16 bits are a bfloat16's (files of the first format hold none)
    expected["low"] = minitx.Tensor(expected["low"].data.view(np.uint16))
    assert fz.same(load(path), expected)


def _entry_of(data, name):
    """Offset of the central directory entry of member ``name``."""
    entries, _ = fz._central(data)
    return next(e for e in entries
                if data[e + 46:e + 46 + struct.unpack_from("<H", data, e + 28)[0]].decode() == name)


def test_a_member_that_claims_more_than_the_file_is_refused_before_reading(tmp_path):
    """Sizes are checked against the file's own before anything is read or allocated."""
    path = tmp_path / "big.npz"
    save({"w": np.zeros(1000)}, path)
    data = bytearray(path.read_bytes())
    entry = _entry_of(bytes(data), "a0.npy")
    struct.pack_into("<II", data, entry + 20, 10 ** 9, 10 ** 9)  # compressed and real size
    path.write_bytes(bytes(data))
    refused(path, r"member 'a0\.npy' claims 1000000000 bytes at offset \d+, past the end of the \d+-byte file")


def test_members_that_overlap_are_refused(tmp_path):
    """Two directory entries over the same bytes (the overlapping-files zip bomb: a small file
    whose members expand to many times its size) are refused by their total, before any read."""
    path = tmp_path / "overlap.npz"
    save({"w": np.zeros(1000), "b": np.zeros(1)}, path)
    data = bytearray(path.read_bytes())
    big, small = _entry_of(bytes(data), "a0.npy"), _entry_of(bytes(data), "a1.npy")
    data[small + 16:small + 28] = data[big + 16:big + 28]  # a1 claims a0's CRC and sizes ...
    data[small + 42:small + 46] = data[big + 42:big + 46]  # ... and a0's bytes
    path.write_bytes(bytes(data))
    refused(path, rf"has members that claim \d+ bytes in all, more than the file's {len(data)}: they overlap")
