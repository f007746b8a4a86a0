"""The derivation pages of docs/backprop/ cannot rot.

* Every ```python block of a page runs, in order, the blocks of one page sharing one namespace.
  The blocks compare each hand-derived backward with minitx's backward, with finite differences
  (minitx.testing.gradcheck) and with the CUDA kernel run on the CPU, and assert: a wrong page
  fails here.
* Each page ends on a "## Where it lives" section, a list of entries:

      - `minitx.ops.activation.Softmax.backward`          a Python object, by import path
      - kernel `softmax_backward` in `minitx/kernels/softmax.cu`   (or: kernels `a`, `b` in ...)
      - device function `attn_recompute` in `minitx/kernels/attention.cu`

  each followed by a fenced ```py or ```cuda block quoting key lines. The object must import,
  the kernel must be a ``__global__`` (the device function a ``__device__``) function of that
  file, and every quoted line must still be in the object's source (for a kernel: in the file),
  whitespace aside; ``...`` in a quoted line elides a few characters (``sum(axis=..., keepdims=True)``).
  A rename or a rewritten line breaks this test, not the reader.

"""
import importlib
import inspect
import re
from pathlib import Path

import pytest

from minitx.kernels import cpu_harness

ROOT = Path(__file__).resolve().parents[1]
PAGES_DIR = ROOT / "docs" / "backprop"
PAGES = sorted(p for p in PAGES_DIR.glob("*.md") if p.name != "README.md")


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def where_it_lives(text):
    """The entries of the page's "Where it lives" section: (kind, names, path, quoted lines)."""
    section = text.split("\n## Where it lives\n", 1)
    if len(section) != 2:
        return []
    entries, quoting = [], False
    for line in section[1].split("\n## ", 1)[0].splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            quoting = stripped in ("```py", "```cuda")
            continue
        if quoting:
            if stripped:
                entries[-1][3].append(stripped)
        elif line.startswith("- "):
            kernel = re.match(r"- (kernels?|device function) (.+?) in `(minitx/kernels/\w+\.cu)`", line)
            if kernel:
                kind = "__device__" if kernel[1] == "device function" else "__global__"
                entries.append((kind, re.findall(r"`(\w+)`", kernel[2]), kernel[3], []))
            else:
                entries.append(("python", re.findall(r"`(minitx\.[\w.]+)`", line)[:1], None, []))
    return entries


def resolve(name):
    """The object at a dotted import path such as minitx.ops.activation.Softmax.backward."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and module_name.startswith(error.name):
                continue  # this prefix is not a module: try a shorter one
            raise
        for attr in parts[split:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def squeeze(text):
    return " ".join(text.split())


def test_every_page_is_in_the_index():
    index = (PAGES_DIR / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    assert PAGES, f"no pages in {PAGES_DIR}"
    assert linked == {p.name for p in PAGES}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_page_blocks_run(page, capsys):
    if not cpu_harness.available():
        pytest.skip("g++ not found: the pages also run the .cu kernels on the CPU")
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert blocks, f"{page.name} has no ```python block"
    namespace = {"__name__": f"__docs_{page.stem.replace('-', '_')}__"}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"{page.name} python block {number}", "exec"), namespace)
    capsys.readouterr()


def quoted_pattern(line):
    """A quoted line as a regex over squeezed source: '...' in a quote stands for a short elision."""
    return r".{0,60}?".join(re.escape(squeeze(part)) for part in line.split("..."))


def problems_of(page):
    """Everything in the page's "Where it lives" that the code no longer bears out."""
    entries = where_it_lives(page.read_text(encoding="utf-8"))
    if not entries:
        return ["no entries under '## Where it lives'"]
    problems = []
    for kind, names, path, quoted in entries:
        if not names or not quoted:
            problems.append(f"an entry names nothing or quotes no line: {kind} {names} {path}")
            continue
        if kind == "python":
            try:
                obj = resolve(names[0])
            except (ImportError, AttributeError) as error:
                problems.append(f"{names[0]} does not resolve ({error})")
                continue
            source, where = squeeze(inspect.getsource(obj)), names[0]
        else:
            source = (ROOT / path).read_text(encoding="utf-8")
            for name in names:
                pattern = {"__global__": rf"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+|[A-Z_]+\s+)?{name}\s*\(",
                           "__device__": rf"__device__\b[^;{{}}(]*\b{name}\s*\("}[kind]
                if not re.search(pattern, source):
                    problems.append(f"no {kind} function {name} in {path}")
            source, where = squeeze(source), path
        problems += [f"the quoted line {line!r} is no longer in {where}"
                     for line in quoted if not re.search(quoted_pattern(line), source)]
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_where_it_lives_is_true(page):
    problems = problems_of(page)
    assert not problems, f"{page.name}, Where it lives:\n  " + "\n  ".join(problems)


def test_where_it_lives_parser_reads_every_kind_of_entry():
    page = """intro
## Where it lives

- `minitx.ops.activation.Softmax.backward`, the reference:
  ```py
  (y,) = self.saved
  ```
- kernels `a_kernel` and `b_kernel` in `minitx/kernels/softmax.cu`:
  ```cuda
  dot = mtx::block_sum(dot);
  ```
- device function `helper` in `minitx/kernels/attention.cu`:
  ```cuda
  x
  ```
"""
    assert where_it_lives(page) == [
        ("python", ["minitx.ops.activation.Softmax.backward"], None, ["(y,) = self.saved"]),
        ("__global__", ["a_kernel", "b_kernel"], "minitx/kernels/softmax.cu", ["dot = mtx::block_sum(dot);"]),
        ("__device__", ["helper"], "minitx/kernels/attention.cu", ["x"]),
    ]
    assert re.search(quoted_pattern("a.sum(axis=..., keepdims=True)"), "b = a.sum(axis=self.axes, keepdims=True)")
    assert not re.search(quoted_pattern("a.sum(axis=..., keepdims=True)"), "b = a.sum(axis=self.axes)")
    with pytest.raises(AttributeError):
        resolve("minitx.ops.activation.NoSuchOp")


def test_docstring_links_name_existing_pages():
    """Each op's 'Derivation: docs/backprop/<page>.md' line names a page that exists, and every
    page is linked from at least one docstring."""
    linked = {}
    for source in (ROOT / "minitx").rglob("*.py"):
        for page in re.findall(r"Derivation: docs/backprop/([\w-]+\.md)", source.read_text(encoding="utf-8")):
            linked.setdefault(page, []).append(source.relative_to(ROOT).as_posix())
    missing = {page: files for page, files in linked.items() if not (PAGES_DIR / page).exists()}
    assert not missing, f"docstrings link pages that do not exist: {missing}"
    assert {p.name for p in PAGES} <= set(linked), f"pages no docstring links: {sorted({p.name for p in PAGES} - set(linked))}"
