"""The ops layout holds (minitx/ops/__init__.py, "Adding an op"): each public op function lives in
its family file beside its op, minitx.functional only gathers them, the package docstring lists
every family file, and an op that calls a kernel names its .cu file."""
import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import minitx
import minitx.functional as F
import minitx.ops
from minitx import kernels
from minitx.autograd.function import Function

OPS_DIR = Path(minitx.ops.__file__).parent
FAMILIES = sorted(p.stem for p in OPS_DIR.glob("*.py") if p.stem != "__init__")
KERNELS_DIR = Path(kernels.__file__).parent


def test_functional_defines_nothing_and_every_function_lives_in_a_family_file():
    tree = ast.parse(Path(F.__file__).read_text())
    assert not [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    public = [name for name in dir(F) if not name.startswith("_") and inspect.isfunction(getattr(F, name))]
    assert len(public) > 100
    homes = {name: getattr(F, name).__module__ for name in public}
    outside = {name: home for name, home in homes.items()
               if not (home.startswith("minitx.ops.") and home.split(".")[-1] in FAMILIES)}
    assert not outside


def test_the_package_docstring_lists_every_family_file():
    listed = re.findall(r"^    (\w+)  +\S", minitx.ops.__doc__, re.M)
    assert sorted(listed) == FAMILIES


def _op_classes():
    for family in FAMILIES:
        module = importlib.import_module(f"minitx.ops.{family}")
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, Function) and cls.__module__ == module.__name__:
                yield cls


def _launchers_called(cls):
    """The kernels.<launcher> calls in a class's source, less the dispatch helpers."""
    calls = set(re.findall(r"\bkernels\.(\w+)\(", inspect.getsource(cls)))
    return sorted(calls - {"enabled", "attention_plan", "attention_mask_supported"})


@pytest.mark.parametrize("cls", [c for c in _op_classes() if _launchers_called(c)], ids=lambda c: c.__name__)
def test_an_op_that_calls_a_kernel_names_its_cu_file(cls):
    named = re.findall(r"minitx/kernels/(\w+\.cu)", cls.__doc__ or "")
    assert named, f"{cls.__name__}'s docstring names no minitx/kernels/*.cu file"
    for cu in named:
        assert (KERNELS_DIR / cu).is_file(), cu
    for launcher in _launchers_called(cls):
        home = getattr(kernels, launcher).__module__.split(".")[-1]
        assert f"{home}.cu" in named, f"{cls.__name__} calls kernels.{launcher} ({home}.cu), not named in its docstring"
