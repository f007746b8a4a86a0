// common.cuh -- device helpers shared by the minitx kernels.
//
// Plain CUDA, no host headers (NVRTC compiles it; the Python loader pastes it
// in place of `#include "common.cuh"`).  Kernels are templated on the storage
// type S of their arrays (float, double or mtx::bfloat16) and compute and
// accumulate in T = compute_t<S> (S itself, float for bfloat16), so their
// arithmetic reads the same for every S.  The helpers below take T.
//
// Block-wide reductions assume blockDim.x is a multiple of 32 (every launcher
// in minitx/kernels picks such a block size), blockDim.y == blockDim.z == 1,
// and that EVERY thread of the block calls them (they contain
// __syncthreads()).  Their result is returned to all threads.
#pragma once

namespace mtx {

// bfloat16 storage: the upper 16 bits of a float32 (sign, the same 8 exponent bits, 7 of the
// 23 mantissa bits).  Like CUDA's __nv_bfloat16 it converts implicitly both ways: reading
// one as a float is exact; storing a float into one (y[i] = v) rounds to nearest, ties to
// even, as ml_dtypes and CUDA's __float2bfloat16 round; a NaN stays NaN (0x7fc0 with its
// sign, ml_dtypes' NaN), and a value past bfloat16's largest rounds to inf.  (Where a
// conditional mixes a bfloat16 and a float, write T(x[i]) to say which way to convert.)
//   Our own 16-bit type, not cuda_bf16.h's __nv_bfloat16: NVRTC under CuPy has no CUDA header
// path of its own, and the CPU build (cpu_compat.h) compiles this same code, so the tests
// prove the rounding the GPU runs.
__device__ __forceinline__ unsigned short bfloat16_bits_rne(float f) {
  const unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)(((u >> 16) & 0x8000u) | 0x7fc0u);
  // adding 0x7fff carries into the kept 16 bits when the dropped 16 bits are more than half
  // (0x8000); adding one more when the kept lowest bit is odd carries an exact half too,
  // so a tie goes to the even neighbour
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  __device__ __forceinline__ bfloat16(float f) : bits(bfloat16_bits_rne(f)) {}
  __device__ __forceinline__ operator float() const { return __uint_as_float((unsigned int)bits << 16); }
};

// The type a kernel computes and accumulates in for storage type S.
template <typename S>
struct compute_type {
  using type = S;
};
template <>
struct compute_type<bfloat16> {
  using type = float;
};
template <typename S>
using compute_t = typename compute_type<S>::type;

// max(a, b) that returns NaN when either is NaN.  fmax returns the other operand,
// so a row max would skip a NaN logit and softmax / log-sum-exp would hide it;
// a NaN input must give a NaN row, as in PyTorch.  (a != a is the NaN test.)
template <typename T>
__device__ __forceinline__ T nan_max(T a, T b) {
  return (a != a || a > b) ? a : b;
}

template <typename T>
struct num;

template <>
struct num<float> {
  static __device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }
  static __device__ __forceinline__ float nan() { return __int_as_float(0x7fc00000); }
  static __device__ __forceinline__ float exp(float x) { return ::expf(x); }
  static __device__ __forceinline__ float log(float x) { return ::logf(x); }
  static __device__ __forceinline__ float sqrt(float x) { return ::sqrtf(x); }
  static __device__ __forceinline__ float rsqrt(float x) { return ::rsqrtf(x); }
  static __device__ __forceinline__ float tanh(float x) { return ::tanhf(x); }
  static __device__ __forceinline__ float max(float a, float b) { return nan_max(a, b); }
  // a + b rounded once, never fused into an FMA with the multiply that made a or b
  static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
  // a * b rounded once, never fused into an FMA with an add that uses the product
  static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
};

template <>
struct num<double> {
  static __device__ __forceinline__ double inf() {
    return __longlong_as_double(0x7ff0000000000000LL);
  }
  static __device__ __forceinline__ double nan() {
    return __longlong_as_double(0x7ff8000000000000LL);
  }
  static __device__ __forceinline__ double exp(double x) { return ::exp(x); }
  static __device__ __forceinline__ double log(double x) { return ::log(x); }
  static __device__ __forceinline__ double sqrt(double x) { return ::sqrt(x); }
  static __device__ __forceinline__ double rsqrt(double x) { return ::rsqrt(x); }
  static __device__ __forceinline__ double tanh(double x) { return ::tanh(x); }
  static __device__ __forceinline__ double max(double a, double b) { return nan_max(a, b); }
  static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
};

__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ long long lmin(long long a, long long b) { return a < b ? a : b; }

// One 16-byte load or store: 4 floats, 2 doubles or 8 bfloat16.  A warp reading consecutive
// packs asks the memory for 512 bytes an instruction where a warp of single bfloat16 loads
// asks for 64: fewer instructions for the same bytes.
template <typename S>
struct alignas(16) Pack {
  static constexpr int size = 16 / sizeof(S);
  S v[size];
};

__device__ __forceinline__ bool aligned16(const void* p) {
  return ((unsigned long long)p & 15ull) == 0;
}

// f(i, x[i]...) for i = begin, begin + step, ... < end, in that order: what a loop
// `for (i = begin; i < end; i += step)` over the arrays x... does, with U elements of each
// array loaded before the first of them is used. Such a loop's trip count is not known when
// compiling, so it is not unrolled, and each iteration's load waits for the last iteration's
// use (a GPU issues a warp's instructions in order): one memory latency per element. Here U
// loads of each array are in flight at once; f sees the same elements in the same order, so
// its sums give the same bits. f may store to element i in place (no later load reads it; the
// views are not __restrict__, so the compiler is promised nothing it could break).
template <typename S, int U>
struct Strip {
  S v[U];
};

// a[i0], a[i0 + step], ... (U of them; 0 past end), every load issued before any is used.
template <int U, typename S>
__device__ __forceinline__ Strip<S, U> load_strip(const S* a, long long i0, long long end,
                                                  long long step) {
  Strip<S, U> strip;
#pragma unroll
  for (int k = 0; k < U; ++k) strip.v[k] = i0 + k * step < end ? a[i0 + k * step] : S{};
  return strip;
}

template <int U, typename F, typename... X>
__device__ __forceinline__ void for_each_strided(long long begin, long long end, long long step, F f,
                                                 const X*... x) {
  for (long long i0 = begin; i0 < end; i0 += U * step) {
    [&](const Strip<X, U>&... v) {
#pragma unroll
      for (int k = 0; k < U; ++k)
        if (i0 + k * step < end) f(i0 + k * step, v.v[k]...);
    }(load_strip<U>(x, i0, end, step)...);
  }
}

// for_each_strided over the columns c = threadIdx.x, threadIdx.x + blockDim.x, ... of a row
// (the mapping of a block per row), 4 of each array in flight.
template <typename F, typename... X>
__device__ __forceinline__ void for_each_column(int cols, F f, const X*... x) {
  for_each_strided<4>(threadIdx.x, cols, blockDim.x, f, x...);
}

// y[c] = f(x[c], c) for the columns c of one row, the block's threads striding over them: a
// pack at a time where both rows start 16-byte aligned and cols is a whole number of packs,
// else one element at a time, the loads in flight as for_each_strided's. Each element's
// arithmetic is f's either way, so both give the same bits.
template <typename S, typename F>
__device__ __forceinline__ void map_row(const S* __restrict__ x, S* __restrict__ y, int cols, F f) {
  constexpr int V = Pack<S>::size;
  if (cols % V == 0 && aligned16(x) && aligned16(y)) {
    Pack<S>* yp = reinterpret_cast<Pack<S>*>(y);
    for_each_strided<2>(threadIdx.x, cols / V, blockDim.x, [&](long long i, const Pack<S>& in) {
      Pack<S> out;
#pragma unroll
      for (int k = 0; k < V; ++k) out.v[k] = f(in.v[k], int(i) * V + k);
      yp[i] = out;
    }, reinterpret_cast<const Pack<S>*>(x));
  } else {
    for_each_strided<4>(threadIdx.x, cols, blockDim.x, [&](long long c, S xc) { y[c] = f(xc, int(c)); }, x);
  }
}

// Reduction operators: `op(a, b)` combines two values and `identity()` is the
// value that leaves any other unchanged (it fills the unused warp slots below).
template <typename T>
struct SumOp {
  static __device__ __forceinline__ T identity() { return T(0); }
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

template <typename T>
struct MaxOp {
  static __device__ __forceinline__ T identity() { return -num<T>::inf(); }
  __device__ __forceinline__ T operator()(T a, T b) const { return num<T>::max(a, b); }
};

// Butterfly reduction: every lane of the (full) warp ends with the result.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// Block-wide reduction: warp butterfly, one partial per warp in shared memory,
// then every warp reduces the partials itself (so no third barrier is needed).
// The leading __syncthreads() protects `partial` from a previous call whose
// readers may still be running.  (Each <T, Op> pair has its own `partial`.)
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, Op op) {
  __shared__ T partial[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nwarps = blockDim.x >> 5;
  v = warp_reduce(v, op);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = (lane < nwarps) ? partial[lane] : Op::identity();
  return warp_reduce(v, op);
}

// Layer norm's output for the columns first, first + step, ... of one row, given the
// row's mean and 1/std (layer_norm.cu and every rung of ladder/layer_norm_v*.cu):
//   y[c] = (x[c] - mu) * rstd * w[c] + b[c]        (w == NULL -> 1, b == NULL -> 0)
template <typename S>
__device__ __forceinline__ void layer_norm_row_out(const S* xr, const S* w, const S* b, S* yr,
                                                   compute_t<S> mu, compute_t<S> rstd, int first,
                                                   int step, int cols) {
  using T = compute_t<S>;
  for (int c = first; c < cols; c += step) {
    T v = (xr[c] - mu) * rstd;
    if (w) v *= w[c];
    if (b) v += b[c];
    yr[c] = v;
  }
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) { return warp_reduce(v, SumOp<T>()); }

template <typename T>
__device__ __forceinline__ T warp_max(T v) { return warp_reduce(v, MaxOp<T>()); }

template <typename T>
__device__ __forceinline__ T block_sum(T v) { return block_reduce(v, SumOp<T>()); }

template <typename T>
__device__ __forceinline__ T block_max(T v) { return block_reduce(v, MaxOp<T>()); }

}  // namespace mtx
