"""Every .cu file must compile for sm_80 and sm_90 with nvcc (and with NVRTC,
exactly as CuPy will compile it, when libnvrtc can be found)."""
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from minitx.kernels import _runtime, ladder

import _nvrtc

CU_FILES = sorted(p.name for p in _runtime.KERNEL_DIR.glob("*.cu"))
#: every .cu file, the ladder's rungs included, and its kernels
ALL_KERNELS = {**_runtime.KERNELS, **ladder.KERNELS}
GENCODE = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]


def ctypes_of(name):
    """The template arguments a file's kernels are instantiated for: float, double and
    mtx::bfloat16 for the product's files, float and double for the ladder's rungs."""
    return _runtime.instantiated_ctypes(_runtime.KERNEL_DIR / name)


def expressions(name):
    """Every compiled kernel of a file, as C++ names: each kernel for each type, and for each
    size of _runtime.compile_sizes (attention's head-dim classes)."""
    return [e for t in ctypes_of(name) for e in _runtime.name_expressions(name, t, ALL_KERNELS[name])]


def test_every_cu_file_is_registered():
    """A new .cu file must be added to _runtime.KERNELS (which drives the
    compile checks, the CPU harness and the CuPy name expressions)."""
    assert CU_FILES, "no .cu files found"
    missing = sorted(set(CU_FILES) - set(_runtime.KERNELS))
    assert not missing, f".cu files missing from minitx.kernels._runtime.KERNELS: {missing}"
    stale = sorted(set(_runtime.KERNELS) - set(CU_FILES))
    assert not stale, f"KERNELS lists files that do not exist: {stale}"
    rungs = sorted(p.relative_to(_runtime.KERNEL_DIR).as_posix()
                   for p in (_runtime.KERNEL_DIR / "ladder").glob("*.cu"))
    assert rungs == sorted(ladder.KERNELS), "minitx.kernels.ladder.RUNGS must list every rung file"


def test_every_registered_kernel_is_defined():
    for name, kernels in ALL_KERNELS.items():
        src = (_runtime.KERNEL_DIR / name).read_text()
        for k in kernels:
            assert re.search(rf"__global__\s+void\s+(__launch_bounds__\([^)]*\)\s+|[A-Z_]+\s+)?{k}\s*\(", src), \
                f"{k} not defined as a __global__ function in {name}"


def test_cu_files_do_not_use_the_cpu_header():
    for name in ALL_KERNELS:
        src = (_runtime.KERNEL_DIR / name).read_text()
        assert "cpu_compat" not in src and "minitx_cpu" not in src, name
        includes = re.findall(r'#\s*include\s*[<"]([^>"]+)[>"]', src)
        # device headers of this directory only (philox.cuh: dropout's random numbers; mma.cuh,
        # whose CPU branch alone names minitx_cpu, under MINITX_CPU)
        headers = {p.name for p in _runtime.KERNEL_DIR.glob("*.cuh")}
        assert set(includes) <= headers | {"../common.cuh"}, f"{name} includes {includes}"
    for header in _runtime.KERNEL_DIR.glob("*.cuh"):
        assert not [i for i in re.findall(r'#\s*include\s*[<"]([^>"]+)[>"]', header.read_text())
                    if "cpu_compat" in i], header.name


def _instantiation_unit(name: str) -> str:
    refs = ", ".join(f"(void*)&{expression}" for expression in expressions(name))
    return (f'#include "{_runtime.KERNEL_DIR / name}"\n'
            f"// host-side references force every template instantiation\n"
            f"void* minitx_kernel_refs[] = {{{refs}}};\n")


#: Kernel files whose every kernel must compile without spilling registers: the tensor-core
#: attention keeps whole fragments and accumulators in registers (up to ~250 of 255 a thread),
#: so a spill there means the design no longer fits, not a few bytes of stack.
NO_SPILLS = {"attention_mma.cu"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found: CUDA compile check skipped")
def test_nvcc_compiles_all_kernels_for_sm80_sm90():
    nvcc = shutil.which("nvcc")
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for name in ALL_KERNELS:
            src = Path(tmp) / f"check_{Path(name).stem}.cu"
            src.write_text(_instantiation_unit(name))
            cmd = [nvcc, "-std=c++17", *GENCODE, *_runtime.define_flags(name), "--fatbin", "-Xptxas", "-v",
                   f"-I{_runtime.KERNEL_DIR}", str(src), "-o", str(src.with_suffix(".fatbin"))]
            procs.append((name, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT, text=True)))
        failures = []
        for name, p in procs:
            out, _ = p.communicate()
            if p.returncode != 0:
                failures.append(f"--- {name}\n{out[-4000:]}")
                continue
            entries = len(re.findall(r"Compiling entry function", out))
            expected = 2 * len(expressions(name))
            if entries != expected:
                failures.append(f"--- {name}: {entries} kernels compiled, expected {expected}")
            spills = [int(s) for s in re.findall(r"(\d+) bytes spill stores", out)]
            if any(spills) and name in NO_SPILLS:
                failures.append(f"--- {name} spills registers: {spills}")
            elif any(spills):
                print(f"note: {name} spills registers: {spills}")
        assert not failures, "\n".join(failures)


NVRTC = _nvrtc.find_nvrtc()


@pytest.mark.skipif(NVRTC is None, reason="libnvrtc not found (set MINITX_NVRTC_LIB): NVRTC check skipped")
@pytest.mark.parametrize("name", sorted(ALL_KERNELS))
def test_nvrtc_compiles_what_cupy_will_compile(name):
    src = _runtime.load_source(name)
    assert not re.search(r"^\s*#\s*include", src, re.M), "local includes must be pasted in"
    for arch in ("compute_80", "compute_90"):
        for ctype in ctypes_of(name):
            exprs = _runtime.name_expressions(name, ctype, ALL_KERNELS[name])
            ok, log, lowered = _nvrtc.compile_source(
                NVRTC, src, name, [*_runtime.NVRTC_OPTIONS, *_runtime.define_flags(name), f"-arch={arch}"],
                exprs)
            assert ok, f"NVRTC failed for {name} ({arch}, {ctype}):\n{log}"
            assert set(lowered) == set(exprs), f"unresolved name expressions: {exprs} vs {lowered}"


def test_the_kernels_readme_table_and_the_package_exports_agree_with_the_code():
    """The kernel list is stated once, in _runtime.KERNELS (file -> kernels), the types they are
    instantiated for once, in _runtime.CTYPES, and the launchers once, as the functions of the
    module beside each .cu: the README's table must list exactly those, and minitx.kernels must
    export every launcher and nothing it does not have."""
    import importlib
    import inspect
    import re

    import minitx.kernels as K

    text = (_runtime.KERNEL_DIR / "README.md").read_text()
    header = re.search(r"^\| file \| kernels \((.*?)\) \|", text, re.M)
    assert header and re.findall(r"`<([\w:]+)>`", header.group(1)) == list(_runtime.CTYPES), \
        "the README table's header must name the types of _runtime.CTYPES"
    assert len(set(K.__all__)) == len(K.__all__), "minitx.kernels.__all__ lists a name twice"
    missing = [name for name in K.__all__ if not hasattr(K, name)]
    assert not missing, f"minitx.kernels.__all__ lists names it does not have: {missing}"
    rows = re.findall(r"^\| `(\w+\.cu)` \| (.*?) \| (.*?) \|$", text, re.M)
    assert sorted(cu for cu, _, _ in rows) == sorted(_runtime.KERNELS)
    for cu, kernels_column, launchers_column in rows:
        assert set(re.findall(r"`(\w+)`", kernels_column.split("(")[0])) == set(_runtime.KERNELS[cu]), cu
        listed = set()
        for name in re.findall(r"`([\w/]+)`", launchers_column):  # `a_forward/backward`: both
            first, *others = name.split("/")
            listed |= {first} | {f"{first.rsplit('_', 1)[0]}_{other}" for other in others}
        module = importlib.import_module(f"minitx.kernels.{cu[:-3]}")
        launchers = {name for name, obj in vars(module).items()
                     if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")}
        assert listed == launchers, cu
        assert launchers <= set(K.__all__), cu


def test_the_cupy_back_end_compiles_one_head_dim_class_at_a_time(monkeypatch):
    """CupyBackend builds a module per (file, dtype, size): a run with heads of 64 compiles the
    kernels of D = 64 (and the unsized ones, alone), not every class; and each name it asks
    the module for is one of that module's name expressions, as CuPy requires."""
    compiled = []

    class RawModule:
        def __init__(self, code, options, name_expressions):
            self.names = list(name_expressions)
            compiled.append(self.names)

        def get_function(self, name):
            assert name in self.names, (name, self.names)
            return name

    backend = object.__new__(_runtime.CupyBackend)  # its __init__ imports CuPy
    backend.xp = type("FakeCupy", (), {"RawModule": RawModule})
    backend._lock, backend._modules, backend._functions = threading.Lock(), {}, {}
    assert backend.function("attention.cu", "attention_forward", "float32", size=64) == "attention_forward<float, 64>"
    assert backend.function("attention.cu", "attention_backward_dq", "float32", size=64) == \
        "attention_backward_dq<float, 64>"
    assert backend.function("attention.cu", "attention_backward_delta", "float32") == "attention_backward_delta<float>"
    assert compiled == [[f"{k}<float, 64>" for k in ("attention_forward", "attention_backward_dkdv",
                                                     "attention_backward_dq", "attention_backward_onepass")],
                        ["attention_backward_delta<float>"]]
    with pytest.raises(ValueError, match="takes size= one of"):
        backend.function("attention.cu", "attention_forward", "float32")
    assert backend.function("softmax.cu", "softmax_forward", "float32") == "softmax_forward<float>"
