"""The Python blocks of the teaching pages outside docs/backprop run as written (the backprop
pages have their own test, test_docs_pages.py)."""
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ["gpu-step.md", "decoding.md", "from-pytorch.md"]


@pytest.mark.parametrize("page", PAGES)
def test_the_page_runs(page, capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", (DOCS / page).read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, page
    namespace = {"__name__": "__docs__"}
    for index, block in enumerate(blocks):
        exec(compile(block, f"docs/{page} python block {index + 1}", "exec"), namespace)
    capsys.readouterr()


def test_the_whole_programs_of_learn_md_run(capsys):
    """learn.md's other blocks are fragments of its examples; a block that imports minitx is whole."""
    blocks = re.findall(r"^```python\n(.*?)^```", (DOCS / "learn.md").read_text(encoding="utf-8"), re.S | re.M)
    whole = [block for block in blocks if block.startswith("import minitx")]
    assert whole
    for index, block in enumerate(whole):
        exec(compile(block, f"docs/learn.md whole program {index + 1}", "exec"), {"__name__": "__docs__"})
    capsys.readouterr()
