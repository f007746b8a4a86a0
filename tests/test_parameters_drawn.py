"""The second meta-test: every parameter of every op is drawn by some property test.

test_meta.py requires a gradient test for each Function; this one requires that the property
tests vary each of its settings. The record is tests/_drawn.py's, kept while the suite runs, so
the check runs last, only when the whole suite ran (a part of it draws a part), and only under a
profile that draws enough examples for it to be sure (ENOUGH_EXAMPLES)."""
import pytest
from hypothesis import settings

import _drawn
from test_meta import minitx_functions


#: examples a property test must draw for this check to count: a parameter with two values, drawn
#: once an example, shows only one of them in 1 of 2^(n-1) runs of n examples (1 in 128 at the dev
#: profile's 8, and with dozens of such parameters a run in four or five would fail; 1 in 16 million
#: at the ci profile's 25)
ENOUGH_EXAMPLES = 25


@pytest.mark.run_last
def test_every_parameter_of_every_op_is_drawn(request):
    if not request.config.stash.get(_drawn.whole_suite_key(), False):
        pytest.skip("only a run of the whole suite draws every parameter")
    if settings.default.max_examples < ENOUGH_EXAMPLES:
        pytest.skip(f"{settings.default.max_examples} examples a test draw too few for this check to be "
                    f"sure (it needs {ENOUGH_EXAMPLES}: HYPOTHESIS_PROFILE=ci, as CI runs it)")
    missing = _drawn.undrawn(minitx_functions())
    assert not missing, (
        f"{len(missing)} op parameter(s) never took two values inside a hypothesis example:\n"
        + "\n".join(f"  {op}({parameter}=...): drawn {values or 'never'}" for op, parameter, values in missing)
        + "\nDraw each in the op's property test (tests/ops), or list it in tests/_drawn.py's NOT_DRAWN "
        "with the reason.")


def test_the_check_names_what_was_not_drawn():
    class Op:
        def __init__(self, axis, keepdims=False):
            pass

    class Other(Op):  # inherits the parameters
        pass

    functions = {"Op": Op, "Other": Other}
    drawn = {"Op": {"axis": {"int:0", "int:1"}, "keepdims": {"bool:False"}}}
    assert _drawn.undrawn(functions, drawn, allowed={}) == [
        ("Op", "keepdims", ["bool:False"]), ("Other", "axis", []), ("Other", "keepdims", [])]
    assert _drawn.undrawn(functions, drawn, allowed={("Op", "keepdims"): "why", ("Other", "axis"): "why",
                                                     ("Other", "keepdims"): "why"}) == []


def test_ops_built_inside_an_example_are_recorded_and_outside_are_not():
    from hypothesis import given
    from hypothesis import strategies as st

    from minitx.ops.scan import Cumsum

    before = set(_drawn.DRAWN["Cumsum"]["axis"])
    Cumsum(12345)  # outside any example: not a draw
    assert _drawn.DRAWN["Cumsum"]["axis"] == before

    @given(st.just(54321))
    def example(axis):
        Cumsum(axis)

    example()
    assert "int:54321" in _drawn.DRAWN["Cumsum"]["axis"]

