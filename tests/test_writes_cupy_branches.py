"""minitx.autograd.writes' CuPy branches, run on the CPU with stand-ins for CuPy arrays: what
in_place reads of a CuPy array is its layout only (base, data.ptr, data.mem's class, shape,
strides, itemsize), never its values, and it must answer "may overlap" wherever NumPy could
have told apart two spans that meet. The memory classes are CuPy 14.2's (cupy/cuda/memory.pyx:
Memory, PooledMemory, ManagedMemory, MemoryAsync are CuPy's own allocations; UnownedMemory,
SystemMemory and dlpack.pyx's DLPackMemory are memory from outside)."""
import pytest

from minitx.autograd import writes


def _memory_class(name):
    return type(name, (), {})


class _Pointer:
    def __init__(self, ptr, mem):
        self.ptr, self.mem = ptr, mem


class FakeCupyArray:
    """What writes reads of a cupy.ndarray: base, data (a MemoryPointer: ptr, mem), shape, strides,
    itemsize. No values: reading one would be a device synchronisation."""

    def __init__(self, ptr, shape, strides, itemsize=4, base=None, mem="PooledMemory"):
        self.data, self.shape, self.strides = _Pointer(ptr, _memory_class(mem)()), shape, strides
        self.itemsize, self.base = itemsize, base

    def __array__(self, *args, **kwargs):
        raise AssertionError("writes read a CuPy array's values")


@pytest.mark.parametrize("mem, owns", [("Memory", True), ("PooledMemory", True), ("ManagedMemory", True),
                                       ("MemoryAsync", True), ("UnownedMemory", False), ("DLPackMemory", False),
                                       ("SystemMemory", False)])
def test_owns_memory_by_cupys_memory_classes(mem, owns):
    assert writes._owns_memory(FakeCupyArray(1000, (4,), (4,), mem=mem)) is owns


def test_a_cupy_view_does_not_own_its_memory():
    root = FakeCupyArray(1000, (4, 4), (16, 4))
    assert not writes._owns_memory(FakeCupyArray(1016, (4,), (4,), base=root))


def test_bounds_of_cupy_layouts_from_the_pointer():
    assert writes._bounds(FakeCupyArray(1000, (3, 4), (16, 4))) == (1000, 1048)
    assert writes._bounds(FakeCupyArray(1012, (4,), (-4,))) == (1000, 1016)  # a reversed view: ptr at its first element
    assert writes._bounds(FakeCupyArray(1000, (2, 0), (0, 4))) is None
    assert writes._bounds(FakeCupyArray(1000, (5,), (0,))) == (1000, 1004)  # a broadcast: one element


def test_on_the_gpu_spans_that_meet_may_share():
    """Two columns of one matrix: NumPy tells them apart, CuPy's layout alone cannot (and
    cupy.shares_memory would launch a kernel and read back): they may share."""
    a, b = FakeCupyArray(1000, (4,), (16,)), FakeCupyArray(1004, (4,), (16,))
    assert writes._shares_memory_with(a, b)
    assert writes._overlap(a, writes._bounds(a), b)
    assert not writes._overlap(a, writes._bounds(a), FakeCupyArray(2000, (4,), (4,)))
