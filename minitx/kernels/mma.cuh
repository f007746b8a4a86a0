// mma.cuh -- one warp's matrix multiply-accumulate on the tensor cores (PTX mma.sync), for
// kernels whose storage type S has a tensor-core operand type: bfloat16 (m16n8k16) and float
// read as TF32 (m16n8k8). double has none (Mma<double> is not defined).
//
// A warp computes D[16 x 8] += A[16 x K] B[K x 8] in float, every lane holding a fragment of
// each matrix in registers: lane = 4 g + t (g = lane / 4, t = lane % 4), E operand elements per
// 32-bit register (2 bfloat16, 1 TF32), the lower column (or row of B) in the low bits:
//   A, register r < 4:  row g + 8 (r % 2),  columns (r / 2) K/2 + E t + e,  e < E
//   B, register r < 2:  rows (k) r K/2 + E t + e,  column g
//   D, element r < 4:   row g + 8 (r / 2),  column 2 t + r % 2
// (the PTX ISA's "matrix fragments" for mma.m16n8k16 and mma.m16n8k8). The kernels read A and
// B from shared tiles of operand bits, so a register is one 32-bit shared load (B from a tile
// that holds it untransposed, mma_load_b_kn: E loads), or turn a result's D fragments into the
// next product's A fragment (mma_d_to_a).
//
// Rounding: a bfloat16 product is exact in float; TF32 operands are float's sign, exponent and
// 10 of its 23 mantissa bits, rounded to nearest with ties away from zero (cvt.rna). How the
// hardware adds the K products and the accumulator is its own (it aligns them to the largest
// and rounds toward zero); the CPU build (cpu_compat.h) adds them in double and rounds once,
// so the tests there compare against the NumPy reference within a bound, not bit for bit.
#pragma once

#include "common.cuh"

namespace mtx {

template <typename S>
struct Mma;

template <>
struct Mma<bfloat16> {
  static constexpr int K = 16, E = 2;
  using operand = unsigned short;  // bfloat16 bits
  static __device__ __forceinline__ operand from_float(float x) { return bfloat16_bits_rne(x); }
  static __device__ __forceinline__ float to_float(operand x) { return __uint_as_float((unsigned int)x << 16); }
};

// float x as a TF32 operand: its bits rounded to the 19 TF32 keeps (ties away from zero); inf
// and NaN keep their exponent, their low 13 bits cleared (as cvt.rna does: a NaN whose payload
// lay only there becomes an infinity).
__device__ __forceinline__ unsigned int tf32_bits_rna(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned int r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
#else
  const unsigned int u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return u & 0xffffe000u;
  return (u + 0x1000u) & 0xffffe000u;  // half of the last kept bit added to the magnitude
#endif
}

template <>
struct Mma<float> {
  static constexpr int K = 8, E = 1;
  using operand = unsigned int;  // TF32 bits (a float's, the low 13 zero)
  static __device__ __forceinline__ operand from_float(float x) { return tf32_bits_rna(x); }
  static __device__ __forceinline__ float to_float(operand x) { return __uint_as_float(x); }
};

// d += a b for one warp (every lane calls it with its fragments).
template <typename S>
__device__ __forceinline__ void mma_sync(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (Mma<S>::K == 16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // the launchers choose tensor-core kernels on compute capability 8.0 and above only
#elif defined(MINITX_CPU)
  minitx_cpu::mma_sync<Mma<S>::K, Mma<S>::E>(d, a, b, [](unsigned int bits) {
    return Mma<S>::to_float((typename Mma<S>::operand)bits);
  });
#endif
}

// Register r of an A fragment (16 rows from row0, K columns from col0) or a B fragment (K rows
// of B, from k0, of column n0 + g: read from a tile that holds B transposed, Bt[n][k]) of a
// shared tile of operands whose rows are `ld` operands apart: E adjacent operands, one load.
template <typename S>
__device__ __forceinline__ unsigned int mma_load_pair(const typename Mma<S>::operand* p) {
  if constexpr (Mma<S>::E == 2) return *reinterpret_cast<const unsigned int*>(p);
  else return (unsigned int)*p;
}

template <typename S>
__device__ __forceinline__ void mma_load_a(unsigned int (&a)[4], const typename Mma<S>::operand* tile, int ld,
                                           int row0, int col0) {
  constexpr int K = Mma<S>::K, E = Mma<S>::E;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int r = 0; r < 4; ++r)
    a[r] = mma_load_pair<S>(tile + (long long)(row0 + g + 8 * (r & 1)) * ld + col0 + (r >> 1) * (K / 2) + E * t);
}

template <typename S>
__device__ __forceinline__ void mma_load_b(unsigned int (&b)[2], const typename Mma<S>::operand* tile_t, int ld,
                                           int n0, int k0) {
  constexpr int K = Mma<S>::K, E = Mma<S>::E;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int r = 0; r < 2; ++r) b[r] = mma_load_pair<S>(tile_t + (long long)(n0 + g) * ld + k0 + r * (K / 2) + E * t);
}

// A B fragment (K rows of B from k0, column n0 + g) read from a tile that holds B as it is,
// B[k][n] (rows `ld` operands apart): the E operands of a register lie in E rows, so E loads
// (one for TF32, two packed for bfloat16).
template <typename S>
__device__ __forceinline__ void mma_load_b_kn(unsigned int (&b)[2], const typename Mma<S>::operand* tile, int ld,
                                              int k0, int n0) {
  constexpr int K = Mma<S>::K, E = Mma<S>::E;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const typename Mma<S>::operand* p = tile + (long long)(k0 + r * (K / 2) + E * t) * ld + n0 + g;
    unsigned int bits = 0;
#pragma unroll
    for (int e = 0; e < E; ++e) bits |= (unsigned int)p[(long long)e * ld] << (16 * e);
    b[r] = bits;
  }
}

// The A fragment of columns j .. j + K - 1 (j a multiple of K) of a warp's 16-row result held
// as D fragments d[n] (columns 8 n .. 8 n + 7), each element rounded to an operand: how one
// product's result enters the next (attention's P in O += P V, dS in dQ += dS K). j must be
// known when compiling, so that d stays in registers.
template <typename S, int N>
__device__ __forceinline__ void mma_d_to_a(unsigned int (&a)[4], const float (&d)[N][4], int j) {
  using M = Mma<S>;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  if constexpr (M::E == 2) {
    // bfloat16: columns j .. j + 15 are d[j / 8] (a0 row g, a1 row g + 8) and d[j / 8 + 1]
    // (a2, a3), already where the A fragment wants them, two to a register
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float* pr = &d[j / 8 + (r >> 1)][2 * (r & 1)];
      a[r] = (unsigned int)M::from_float(pr[0]) | ((unsigned int)M::from_float(pr[1]) << 16);
    }
  } else {
    // TF32: A wants column j + t (a0 row g, a1 row g + 8) and j + t + 4 (a2, a3), which lanes
    // 4 g + t / 2 and 4 g + 2 + t / 2 hold (element t % 2 of their pair): fetched from them
    const int from = 4 * g + (t >> 1);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float* pr = &d[j / 8][2 * (r & 1)];
      const float lo = __shfl_sync(0xffffffffu, pr[0], from + 2 * (r >> 1));
      const float hi = __shfl_sync(0xffffffffu, pr[1], from + 2 * (r >> 1));
      a[r] = M::from_float((t & 1) ? hi : lo);
    }
  }
}

}  // namespace mtx
