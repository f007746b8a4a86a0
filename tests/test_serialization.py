"""save/load: exact round trips, atomic writes, no pickle, clear errors."""
import json
import math
import os
import pickle
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitx
from minitx import serialization
from minitx.serialization import CheckpointError, load, save

DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.uint64,
          np.bool_, np.complex64, ">f4", "<U5"]


# ---------------------------------------------------------------------- exact equality
def assert_same(a, b, where="<root>"):
    """Equal values, types, dtypes, shapes and nesting (NaN equals NaN)."""
    assert type(a) is type(b), f"{where}: {type(a)} vs {type(b)}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}/{i}")
    elif isinstance(a, minitx.Tensor):
        assert a.requires_grad == b.requires_grad, where
        assert_same(a.data, b.data, where)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=where)
        if a.dtype.kind in "fc":  # also the sign of zeros
            np.testing.assert_array_equal(np.signbit(np.real(a)), np.signbit(np.real(b)))
    elif isinstance(a, float):
        same_nan = math.isnan(a) and math.isnan(b)
        assert same_nan or (a == b and math.copysign(1, a) == math.copysign(1, b)), where
    else:
        assert a == b, where


# ---------------------------------------------------------------------- hypothesis structures
arrays = st.sampled_from(DTYPES).flatmap(
    lambda dt: hnp.arrays(np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
numpy_scalars = arrays.filter(lambda a: a.ndim == 0).map(lambda a: a[()])
tensors = st.tuples(st.sampled_from([np.float32, np.float64, np.int64, np.bool_]),
                    hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), st.booleans()).flatmap(
    lambda t: hnp.arrays(t[0], t[1]).map(
        lambda a: minitx.Tensor(a, requires_grad=t[2] and a.dtype.kind == "f")))
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), arrays, numpy_scalars, tensors)
structures = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=6), children, max_size=4)),
    max_leaves=12)


@given(obj=structures)
def test_round_trip_is_exact(obj, tmp_path_factory):
    path = tmp_path_factory.mktemp("rt") / "ck.npz"
    save(obj, path)
    assert_same(obj, load(path))


def test_round_trip_of_a_training_checkpoint(tmp_path):
    w = minitx.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    ck = {
        "model": {"encoder.0.weight": w, "encoder.0.bias": minitx.zeros(3)},
        "optimizer": {"state": [{"step": 3, "exp_avg": np.ones((2, 3), np.float32)}, {}],
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.98), "params": [0, 1]}]},
        "epoch": 7, "best_bleu": np.float64(31.25), "count": np.int64(12), "flag": np.bool_(True),
        "zero_d": np.array(2.5, dtype=np.float32), "note": "résumé ✓", "none": None,
        "empty": {}, "empty_list": [], "empty_tuple": (),
    }
    save(ck, tmp_path / "ck.npz")
    back = load(tmp_path / "ck.npz")
    assert_same(ck, back)
    assert isinstance(back["model"]["encoder.0.weight"], minitx.Tensor)
    assert back["model"]["encoder.0.weight"].requires_grad
    assert type(back["best_bleu"]) is np.float64 and type(back["count"]) is np.int64
    assert back["zero_d"].shape == () and isinstance(back["zero_d"], np.ndarray)
    assert isinstance(back["optimizer"]["param_groups"][0]["betas"], tuple)


def test_file_layout_is_plain_npz_with_json(tmp_path):
    save({"w": np.ones(3), "b": [np.zeros(2), 1.5]}, tmp_path / "ck.npz")
    with np.load(tmp_path / "ck.npz", allow_pickle=False) as z:
        assert sorted(z.files) == ["a0", "a1", serialization.STRUCTURE_KEY]
        header = json.loads(z[serialization.STRUCTURE_KEY].tobytes().decode())
        assert z[serialization.STRUCTURE_KEY].dtype == np.uint8
    assert header["format"] == "minitx-checkpoint" and header["version"] == 1
    assert header["root"]["items"][0] == ["w", {"type": "array", "index": 0, "dtype": "<f8", "shape": [3],
                                                "crc32": zlib.crc32(np.ones(3).tobytes())}]


def test_path_used_as_given(tmp_path):
    save([1], tmp_path / "model.ckpt")
    assert os.listdir(tmp_path) == ["model.ckpt"]
    assert load(str(tmp_path / "model.ckpt")) == [1]
    save([2], os.fsencode(tmp_path / "bytes.ckpt"))  # a bytes path, as open() takes one
    assert load(os.fsencode(tmp_path / "bytes.ckpt")) == [2] and sorted(os.listdir(tmp_path))[0] == "bytes.ckpt"


# ---------------------------------------------------------------------- save errors + atomicity
def test_unsupported_type_names_key_path(tmp_path):
    obj = {"model": {"encoder.0.weight": object()}}
    with pytest.raises(TypeError, match=r"'model/encoder\.0\.weight' of type builtins\.object"):
        save(obj, tmp_path / "ck.npz")
    with pytest.raises(TypeError, match=r"'opt/state/1'.*set"):
        save({"opt": {"state": [0, {1, 2}]}}, tmp_path / "ck.npz")


def test_non_string_key_names_path(tmp_path):
    with pytest.raises(TypeError, match=r"key 3 \(int\) at 'opt/state' is not a string"):
        save({"opt": {"state": {3: np.zeros(2)}}}, tmp_path / "ck.npz")


def test_object_arrays_and_cycles_are_refused(tmp_path):
    with pytest.raises(TypeError, match="object-dtype array at 'x'"):
        save({"x": np.array([1, "a"], dtype=object)}, tmp_path / "ck.npz")
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="circular reference at '0'"):
        save(loop, tmp_path / "ck.npz")


def test_a_dtype_a_member_cannot_name_is_refused_and_void_records_round_trip(tmp_path):
    """ml_dtypes' float8 saved, then loaded back as raw bytes that load refused as damaged:
    refused at save, naming it. Structured records and raw voids, which .npy names, round-trip."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for name in ("float8_e4m3fn", "float8_e5m2"):  # (kinds 'V' and 'f': '<f1' is no dtype NumPy reads)
        with pytest.raises(TypeError, match=f"save: cannot save the {name} array at 'w/x': a .npy member cannot "
                                            "name its dtype"):
            save({"w": {"x": np.zeros(3, dtype=getattr(ml_dtypes, name))}}, tmp_path / "ck.npz")
    assert not (tmp_path / "ck.npz").exists()
    records = np.array([(1, 0.5), (2, -1.5)], dtype=[("a", "<i4"), ("b", "<f8")])
    raw = np.frombuffer(b"abcdefgh", dtype="V4")
    save({"records": records, "raw": raw}, tmp_path / "ok.npz")
    loaded = load(tmp_path / "ok.npz")
    assert loaded["records"].dtype == records.dtype and loaded["records"].tolist() == records.tolist()
    assert loaded["raw"].dtype == raw.dtype and loaded["raw"].tobytes() == raw.tobytes()


def test_failed_save_leaves_existing_file_and_no_temp_file(tmp_path):
    path = tmp_path / "ck.npz"
    save({"version": 1, "w": np.arange(4)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        save({"version": 2, "w": np.arange(4), "bad": object(), "after": np.ones(3)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck.npz"]


def test_failure_while_writing_removes_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "ck.npz"
    save({"version": 1}, path)
    before = path.read_bytes()

    def broken_savez(f, **arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(serialization.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        save({"version": 2}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck.npz"]


def test_save_fsyncs_and_replaces(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(serialization.os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(serialization.os, "replace",
                        lambda a, b: (calls.append("replace"), real_replace(a, b)))
    save({"a": 1}, tmp_path / "ck.npz")
    assert calls[:2] == ["fsync", "replace"]


# ---------------------------------------------------------------------- load errors
def test_load_never_unpickles(tmp_path, monkeypatch):
    save({"a": np.ones(2)}, tmp_path / "ck.npz")
    objects = tmp_path / "objects.npz"
    header = {"format": "minitx-checkpoint", "version": 1, "root": {"type": "array", "index": 0}}
    np.savez(objects, a0=np.array([{"x": 1}], dtype=object),
             minitx_structure=np.frombuffer(json.dumps(header).encode(), np.uint8))

    def no_pickle(*args, **kwargs):
        raise AssertionError("load unpickled something")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, no_pickle)
    monkeypatch.setattr(serialization.np, "load", no_pickle)  # numpy.load is not used either
    assert_same(load(tmp_path / "ck.npz"), {"a": np.ones(2)})
    with pytest.raises(CheckpointError, match="pickled objects"):
        load(objects)


def test_pickle_files_are_refused(tmp_path):
    pkl = tmp_path / "evil.pkl"
    pkl.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(CheckpointError, match="evil.pkl"):
        load(pkl)
    npy = tmp_path / "objects.npy"
    np.save(npy, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(CheckpointError, match="objects.npy"):
        load(npy)


def test_pickled_member_inside_checkpoint_is_refused(tmp_path):
    header = {"format": "minitx-checkpoint", "version": 1, "root": {"type": "array", "index": 0}}
    path = tmp_path / "sneaky.npz"
    with open(path, "wb") as f:
        np.savez(f, a0=np.array([{"x": 1}], dtype=object),
                 minitx_structure=np.frombuffer(json.dumps(header).encode(), np.uint8))
    with pytest.raises(CheckpointError, match=r"sneaky\.npz.*pickled"):
        load(path)


def test_a_pytorch_file_is_named_as_one_and_not_unpickled(tmp_path):
    """torch.save writes a zip whose <name>/data.pkl is a pickle: said so, with what to do instead."""
    from torch_reference import import_torch

    torch = import_torch()
    path = tmp_path / "model.pt"
    torch.save({"weight": torch.zeros(2, 3)}, path)
    with pytest.raises(CheckpointError, match=r"model\.pt: member '.*data\.pkl' is a pickle: this is PyTorch's file "
                                              r"\(torch\.save\).*torch\.load.*load_state_dict"):
        load(path)


def test_truncated_file_names_the_file(tmp_path):
    path = tmp_path / "ck.npz"
    save({"w": np.random.default_rng(0).standard_normal(1000)}, path)
    data = path.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 30):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=r"ck\.npz.*(truncated|corrupt)"):
            load(path)


def test_corrupted_bytes_are_detected(tmp_path):
    path = tmp_path / "ck.npz"
    save({"w": np.zeros(1000)}, path)
    data = bytearray(path.read_bytes())
    data[600] ^= 0xFF           # inside a0's data: the zip CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"ck\.npz"):
        load(path)


def test_foreign_npz_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, weights=np.ones(3))
    with pytest.raises(CheckpointError, match=r"other\.npz is an \.npz archive but not a minitx"):
        load(path)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match=r"notes\.txt is not a minitx checkpoint"):
        load(text)


def test_newer_format_version_is_refused(tmp_path):
    header = {"format": "minitx-checkpoint", "version": 99, "root": None}
    path = tmp_path / "future.npz"
    np.savez(path, minitx_structure=np.frombuffer(json.dumps(header).encode(), np.uint8))
    with pytest.raises(CheckpointError, match="version 99"):
        load(path)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        load("/nonexistent/dir/ck.npz")


def test_checkpoint_error_is_a_value_error():
    assert issubclass(CheckpointError, ValueError)


# ---------------------------------------------------------------------- bfloat16
def bits(a):
    """The uint16 bits of a bfloat16 array, Tensor or scalar: equal bits, equal values (NaNs too)."""
    data = a.data if isinstance(a, minitx.Tensor) else np.asarray(a)
    assert data.dtype == minitx.backend.bfloat16()
    return data.view(np.uint16)


def bfloat16_values(shape=(2, 3)):
    """bfloat16 values with a NaN, infinities and a negative zero among them."""
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-40, 3.140625], np.float32)
    values = np.resize(special, math.prod(shape)).reshape(shape)
    return values.astype(minitx.backend.bfloat16())


def test_bfloat16_round_trips_bit_for_bit(tmp_path):
    """NumPy's .npy format cannot name bfloat16 (it reads back 2-byte voids): the member holds
    its bits as uint16 and the node records "bfloat16"."""
    bf16 = minitx.backend.bfloat16()
    wide = bfloat16_values((4, 6))
    ck = {"array": wide, "zero_d": np.array(1.5, bf16), "scalar": bf16.type(-2.5), "empty": np.zeros((0, 3), bf16),
          "strided": wide[::2, 1::3], "fortran": np.asfortranarray(wide),
          "nested": [{"deep": (wide[1],)}], "tensor": minitx.Tensor(wide[:2], requires_grad=True),
          "f16": np.arange(4, dtype=np.float16), "i16": np.arange(4, dtype=np.int16)}
    save(ck, tmp_path / "ck.npz")
    back = load(tmp_path / "ck.npz")
    for key in ("array", "zero_d", "empty", "strided", "fortran"):
        assert type(back[key]) is np.ndarray and back[key].shape == ck[key].shape, key
        np.testing.assert_array_equal(bits(back[key]), bits(ck[key]), err_msg=key)
    assert type(back["scalar"]) is bf16.type and bits(back["scalar"]) == bits(ck["scalar"])
    np.testing.assert_array_equal(bits(back["nested"][0]["deep"][0]), bits(wide[1]))
    assert isinstance(back["tensor"], minitx.Tensor) and back["tensor"].requires_grad
    np.testing.assert_array_equal(bits(back["tensor"]), bits(ck["tensor"]))
    for key in ("f16", "i16"):  # the other 2-byte dtypes are stored as they are
        assert_same(ck[key], back[key], key)
    header = json.loads(np.load(tmp_path / "ck.npz")[serialization.STRUCTURE_KEY].tobytes())
    node = header["root"]["items"][0][1]
    assert node["dtype"] == "bfloat16" and node["crc32"] == zlib.crc32(wide.view(np.uint16).tobytes())
    with np.load(tmp_path / "ck.npz", allow_pickle=False) as z:  # plain numpy reads the bits
        np.testing.assert_array_equal(z["a0"], wide.view(np.uint16))


def test_a_bfloat16_models_state_dict_round_trips(tmp_path):
    minitx.manual_seed(0)
    model = minitx.nn.Sequential(minitx.nn.Linear(3, 4), minitx.nn.LayerNorm(4)).to(dtype="bfloat16")
    save(model.state_dict(), tmp_path / "model.npz")
    state = load(tmp_path / "model.npz")
    assert list(state) == list(model.state_dict())
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(bits(state[name]), bits(value), err_msg=name)
    other = minitx.nn.Sequential(minitx.nn.Linear(3, 4), minitx.nn.LayerNorm(4)).to(dtype="bfloat16")
    other.load_state_dict(state)
    x = minitx.tensor(np.ones((2, 3)), dtype="bfloat16")
    np.testing.assert_array_equal(bits(other(x)), bits(model(x)))


def test_bfloat16_files_written_before_load_as_bfloat16(tmp_path):
    """Before bfloat16 was stored as its bits, save wrote the array as it is (numpy.savez's header
    says '<V2', read back as 2-byte voids '|V2') and recorded '<V2', the dtype.str of bfloat16 alone.
    Those files (a bfloat16 model's state_dict, a Trainer's last.npz) load as bfloat16."""
    values = bfloat16_values()
    root = {"type": "dict", "items": [
        ["w", {"type": "tensor", "index": 0, "dtype": "<V2", "shape": [2, 3],
               "crc32": zlib.crc32(values.tobytes()), "requires_grad": True}],
        ["s", {"type": "scalar", "index": 1, "dtype": "<V2", "shape": [],
               "crc32": zlib.crc32(values[1, 0].tobytes())}]]}
    header = {"format": "minitx-checkpoint", "version": 1, "root": root}
    path = tmp_path / "earlier.npz"
    np.savez(path, a0=values, a1=values[1, 0], minitx_structure=np.frombuffer(json.dumps(header).encode(), np.uint8))
    back = load(path)
    assert isinstance(back["w"], minitx.Tensor) and back["w"].requires_grad
    np.testing.assert_array_equal(bits(back["w"]), bits(values))
    assert type(back["s"]) is values.dtype.type and bits(back["s"]) == bits(values[1, 0])
    root["items"][0][1]["dtype"] = "|V2"  # a plain 2-byte void was never a bfloat16: no Tensor holds one
    np.savez(path, a0=values, a1=values[1, 0], minitx_structure=np.frombuffer(json.dumps(header).encode(), np.uint8))
    with pytest.raises(CheckpointError, match=r"member 'a0\.npy' \(at 'w'\) cannot be a Tensor"):
        load(path)


@pytest.mark.parametrize("edit", ["<f2", "<i2", "<V2", "|V2", "float16", "bfloat", 5, ["bfloat16"], None,
                                  "float16 member as bfloat16"])
def test_a_bfloat16_entry_damaged_in_its_dtype_record_is_refused(tmp_path, edit):
    """A bfloat16 node whose recorded dtype is damaged, or a "bfloat16" record over a member that
    is not uint16 bits, is refused naming the member, as for any other dtype."""
    path = tmp_path / "ck.npz"
    save({"w": bfloat16_values(), "h": np.arange(6, dtype=np.float16).reshape(2, 3)}, path)
    with np.load(path) as z:
        members = {name: z[name] for name in z.files}
    header = json.loads(members[serialization.STRUCTURE_KEY].tobytes())
    w, h = header["root"]["items"][0][1], header["root"]["items"][1][1]
    assert (w["dtype"], h["dtype"]) == ("bfloat16", "<f2")
    if edit == "float16 member as bfloat16":
        h["dtype"], member = "bfloat16", "a1.npy"
    else:
        w["dtype"], member = edit, "a0.npy"
    members[serialization.STRUCTURE_KEY] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    np.savez(path, **members)
    with pytest.raises(CheckpointError, match=rf"ck\.npz: member '{member}' .*a member swapped, renamed or damaged"):
        load(path)


# ---------------------------------------------------------------------- GPU
@pytest.mark.gpu
def test_gpu_arrays_round_trip(tmp_path):
    import cupy

    obj = {"x": cupy.arange(5, dtype=cupy.float32), "t": minitx.ones(2, 3, device="cuda")}
    save(obj, tmp_path / "ck.npz")
    cpu = load(tmp_path / "ck.npz")
    assert isinstance(cpu["x"], np.ndarray) and cpu["t"].device == "cpu"
    np.testing.assert_array_equal(cpu["x"], np.arange(5, dtype=np.float32))
    gpu = load(tmp_path / "ck.npz", device="cuda")
    assert isinstance(gpu["x"], cupy.ndarray) and gpu["t"].device == "cuda"


def test_saving_into_a_missing_directory_names_the_path_not_the_temporary_file(tmp_path):
    path = tmp_path / "no" / "such" / "ck.npz"
    with pytest.raises(FileNotFoundError, match=rf"^cannot write {path}: the directory {path.parent} does not exist$"):
        save({"a": 1}, path)
    assert not (tmp_path / "no").exists()
