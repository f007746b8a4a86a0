"""Minimal ctypes binding to NVRTC (no GPU needed) for the compile checks.

This feeds NVRTC exactly what CupyBackend feeds cupy.RawModule: the source
from minitx.kernels._runtime.load_source, the same options, and the same
name expressions.
"""
import ctypes
import ctypes.util
import glob
import os
import sys


def find_nvrtc():
    cands = []
    if os.environ.get("MINITX_NVRTC_LIB"):
        cands.append(os.environ["MINITX_NVRTC_LIB"])
    lib = ctypes.util.find_library("nvrtc")
    if lib:
        cands.append(lib)
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"))
    for r in roots:
        if r:
            cands += sorted(glob.glob(os.path.join(r, "lib64", "libnvrtc.so*")))
            cands += sorted(glob.glob(os.path.join(r, "lib", "libnvrtc.so*")))
    for sp in sys.path:
        cands += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "lib", "libnvrtc.so*")))
    for c in cands:
        if "builtins" in os.path.basename(c):
            continue
        try:
            return ctypes.CDLL(c)
        except OSError:
            continue
    return None


def compile_source(lib, src, name, options, name_exprs):
    """Returns (ok, log, {name_expr: lowered_name})."""
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc:
        return False, f"nvrtcCreateProgram failed ({rc})", {}
    try:
        for e in name_exprs:
            lib.nvrtcAddNameExpression(prog, e.encode())
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        if rc:
            return False, log, {}
        lowered = {}
        for e in name_exprs:
            p = ctypes.c_char_p()
            if lib.nvrtcGetLoweredName(prog, e.encode(), ctypes.byref(p)) == 0:
                lowered[e] = p.value.decode()
        return True, log, lowered
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
