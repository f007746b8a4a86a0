"""The README's Python examples run as written (its promise to a first-time reader)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), {"__name__": "__readme__"})
    capsys.readouterr()


def _lines_and_docstring_lines(path):
    import ast

    source = path.read_text(encoding="utf-8")
    docstring_lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstring_lines.update(range(first.lineno, first.end_lineno + 1))
    return len(source.splitlines()), len(docstring_lines)


def test_the_engine_line_counts_are_true():
    """'is about N lines, M of them docstrings' for the engine's files, within 10%."""
    said = re.search(r"in-place writes\) is about ([\d,]+) lines, ([\d,]+) of them docstrings",
                     README.read_text(encoding="utf-8"))
    assert said, "the README no longer states the engine's size in the expected words"
    autograd = README.parent / "minitx" / "autograd"
    counts = [_lines_and_docstring_lines(autograd / f"{name}.py")
              for name in ("tensor", "function", "engine", "grad_mode", "writes", "__init__")]
    lines, docstrings = sum(c[0] for c in counts), sum(c[1] for c in counts)
    said_lines, said_docstrings = (int(n.replace(",", "")) for n in said.groups())
    assert abs(lines - said_lines) <= 0.1 * lines, f"the engine is {lines} lines, the README says {said[1]}"
    assert abs(docstrings - said_docstrings) <= 0.1 * docstrings, \
        f"the engine has {docstrings} docstring lines, the README says {said[2]}"
