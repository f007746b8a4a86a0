"""The planted slips (tools/plant_slips.py, tools/op_slips.py) still fit the code they plant in.

Each slip replaces a line that must occur exactly once in its file; when the code is rewritten
and the line goes, the slip would silently plant nothing and "survive". Running the slips takes
minutes (they run the tests once per slip), so CI checks only that each still has its line, and
its test files.
"""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import op_slips  # noqa: E402
import plant_slips  # noqa: E402

ALL = {f"{list_name}: {slip.name}": slip for list_name, slips in (("plant_slips", plant_slips.SLIPS),
                                                                    ("op_slips", op_slips.OP_SLIPS))
       for slip in slips}


@pytest.mark.parametrize("name", sorted(ALL))
def test_each_slip_finds_its_line_once_and_its_tests(name):
    slip = ALL[name]
    text = (ROOT / slip.path).read_text(encoding="utf-8")
    assert text.count(slip.old) == 1, f"{slip.path} holds {text.count(slip.old)} copies of the line this slip changes"
    assert slip.new != slip.old
    for test in slip.tests:
        assert (ROOT / test.split("::")[0]).exists(), f"{test} is not a test file"
