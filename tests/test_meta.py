"""The meta-test: every Function in minitx has a gradient test.

It imports every module of the minitx package, collects the subclasses of
``minitx.autograd.Function`` defined there, and requires each class name to appear in some test
file under tests/ that also calls ``gradcheck``. A new op without a gradient test fails here,
by name.
"""
import gc
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import minitx
from minitx.autograd import Function

TESTS = Path(__file__).resolve().parent

# Packages not walked: the translation CLI (an application on top of the ops, no Functions of
# its own) and the CUDA kernel launchers (called from the ops' forward/backward, which are the
# Functions; they import cupy). The package minitx.kernels itself is still imported when present.
SKIPPED_SUBPACKAGES = ("minitx.translate.", "minitx.kernels.", "minitx.translate")

# Modules may be skipped only when the import fails on one of these optional dependencies.
OPTIONAL_DEPENDENCIES = {"cupy", "cupyx"}

# Functions that are allowed to have no gradcheck, each with the reason. Keep it empty unless a
# Function truly cannot be checked by finite differences; every entry is listed in the report.
ALLOWED_WITHOUT_GRADCHECK: dict = {}


def minitx_module_names(package=minitx):
    """Names of all modules under ``package``, recursively, skipping SKIPPED_SUBPACKAGES."""
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name.startswith(SKIPPED_SUBPACKAGES):
            continue
        yield info.name
        if info.ispkg:
            subpackage = import_optional(info.name)
            if subpackage is not None:
                yield from minitx_module_names(subpackage)


def import_optional(name):
    """Import a module; None only when an optional dependency (cupy) is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing = (error.name or "").split(".")[0]
        if missing in OPTIONAL_DEPENDENCIES:
            return None
        raise


def all_subclasses(cls):
    found, stack = set(), [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def is_op(cls) -> bool:
    """A Function one can call: it has its own forward and backward (not Function's, which
    raise NotImplementedError). Shared bases such as reduction's _Reduction are not ops."""
    return cls.forward is not Function.forward and cls.backward is not Function.backward


def minitx_functions():
    """{class name: class} for every Function op defined in the minitx package."""
    for name in minitx_module_names():
        import_optional(name)
    classes = [c for c in all_subclasses(Function) if c.__module__.startswith("minitx.") and is_op(c)]
    by_name = {}
    for cls in classes:
        other = by_name.setdefault(cls.__name__, cls)
        assert other is cls, f"two Functions named {cls.__name__}: {other.__module__} and {cls.__module__}"
    return by_name


def gradcheck_test_texts(root=TESTS):
    """{path: text} of every test file but this one (untested() keeps those that check gradients)."""
    texts = {}
    for path in sorted(root.rglob("test_*.py")):
        if path.resolve() == Path(__file__).resolve():
            continue
        texts[str(path.relative_to(root))] = path.read_text(encoding="utf-8")
    return texts




def untested(class_names, test_texts) -> list:
    """Class names that appear (as a whole word) in no test text that also calls gradcheck(...)
    or check_gradients(...) (gradcheck plus the hygiene check)."""
    checked = [text for text in test_texts.values() if re.search(r"\b(gradcheck|check_gradients)\(", text)]
    return sorted(name for name in class_names
                  if not any(re.search(rf"\b{re.escape(name)}\b", text) for text in checked))


# ---------------------------------------------------------------- the meta-test


def test_every_function_has_a_gradient_test():
    functions = minitx_functions()
    missing = [name for name in untested(functions, gradcheck_test_texts())
               if name not in ALLOWED_WITHOUT_GRADCHECK]
    assert not missing, (
        f"{len(missing)} Function(s) have no gradient test: "
        + ", ".join(f"{name} ({functions[name].__module__})" for name in missing)
        + ". Add a test under tests/ that names the class and checks it with minitx.testing.gradcheck.")


def test_allow_list_names_real_functions():
    stale = set(ALLOWED_WITHOUT_GRADCHECK) - set(minitx_functions())
    assert not stale, f"allow-list entries that are not Functions any more: {sorted(stale)}"


def test_discovery_finds_the_ops_of_every_module():
    functions = minitx_functions()
    for expected in ("Add", "Matmul", "Sum", "Min", "Reshape", "Softmax", "ScaledDotProductAttention", "ToDevice"):
        assert expected in functions
    assert "Function" not in functions and "_Reduction" not in functions


# ---------------------------------------------------------------- the meta-test's own tests


def test_untested_flags_names_without_a_gradcheck_next_to_them():
    texts = {
        "a.py": "def test_foo(x):\n    gradcheck(lambda x: Foo()(x), x)\n",
        "b.py": "def test_bar():\n    Bar()  # used, but never gradchecked\n",
        "c.py": "from minitx.testing import gradcheck  # imported, never called\nBaz\n",
        "d.py": "gradcheck(lambda x: Quxx()(x), x)  # the name only inside a longer one\n",
    }
    assert untested(["Foo", "Bar", "Baz", "Qux"], texts) == ["Bar", "Baz", "Qux"]
    assert untested(["Foo"], {}) == ["Foo"]
    assert untested([], texts) == []


def test_a_new_function_without_a_test_is_flagged():
    namespace = {"Function": Function, "__name__": "minitx.ops.brand_new"}
    exec("class BrandNewOp(Function):\n"  # noqa: S102  (a class that looks defined inside minitx)
         "    def forward(self, x): return x\n"
         "    def backward(self, dy): return (dy,)\n", namespace)
    try:
        assert minitx_functions()["BrandNewOp"] is namespace["BrandNewOp"]
        assert "BrandNewOp" in untested(minitx_functions(), gradcheck_test_texts())
    finally:
        namespace.clear()
        gc.collect()
    assert "BrandNewOp" not in minitx_functions()


def test_optional_import_failures_are_skipped_and_others_raise(monkeypatch):
    def fake_import(name):
        raise ImportError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    assert import_optional("cupy") is None
    assert import_optional("cupyx.scatter_add") is None
    with pytest.raises(ImportError):
        import_optional("some_required_dependency")


def test_the_docs_count_the_functions_there_are():
    """README.md and docs/ops.md say how many Function classes the ops have: the count of this file's
    discovery, so that a new op updates the sentence."""
    count = len(minitx_functions())
    root = TESTS.parent
    for page in ("README.md", "docs/ops.md"):
        stated = re.findall(r"over (\d+) `Function` classes", (root / page).read_text(encoding="utf-8"))
        assert stated == [str(count)], (page, stated, count)
