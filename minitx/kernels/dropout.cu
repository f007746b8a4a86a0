// dropout.cu -- fused dropout with a counter-based RNG (no mask is stored).
//
// RNG: Philox-4x32-10 (philox.cuh): element i of a launch is KEPT iff the 24 high bits
// of its word of the Philox output for (seed, offset) are >= threshold = ceil(p * 2^24),
// computed on the host, so the keep probability is 1 - threshold / 2^24 ~= 1 - p, independent
// of T.  Kept values are multiplied by keep_scale = 1 / (1 - p)
// (0 when p == 1); dropped values are exactly 0 (a select, not a multiply).
// The backward regenerates the identical mask from (seed, offset), so
// nothing is saved between forward and backward.  Different offsets give
// independent streams for any tensor size (the offset lives in counter words
// the element index never touches): callers bump offset by 1 per call.
//
// Kernels (x, y, dy, dx, residual contiguous with n elements; bias [cols]; all of T,
// computed in compute_t<T>: float for bfloat16, rounded once on store):
//   dropout_add_forward       y  = residual + dropout(x)                 (=)
//   dropout_mask_apply        dx = dropout(dy)  (backward of dropout_add; the
//                             residual's gradient is dy itself)          (=)
//   bias_act_dropout_forward  y  = dropout(act(x + bias))                (=)
//   bias_act_dropout_backward dx = dropout(dy) * act'(x + bias)          (=)
//                             (dbias = column sums of dx, done by the launcher)
//   act: 0 identity, 1 relu, 2 gelu (tanh approximation)
//   bias may be NULL; the bias column of flat element i is i % cols.
//
// Thread mapping: grid-stride loop over groups of 4 consecutive elements
// (one Philox call per group); every index is bounds-checked against n.
#include "common.cuh"
#include "philox.cuh"

// act and its derivative, in the compute type C
template <typename C>
__device__ __forceinline__ C act_forward(C u, int act) {
  if (act == 1) return u > C(0) ? u : C(0);
  if (act == 2) {
    const C k = C(0.7978845608028654);  // sqrt(2 / pi)
    const C inner = k * (u + C(0.044715) * u * u * u);
    return C(0.5) * u * (C(1) + mtx::num<C>::tanh(inner));
  }
  return u;
}

template <typename C>
__device__ __forceinline__ C act_grad(C u, int act) {
  if (act == 1) return u > C(0) ? C(1) : C(0);
  if (act == 2) {
    const C k = C(0.7978845608028654);
    const C inner = k * (u + C(0.044715) * u * u * u);
    const C t = mtx::num<C>::tanh(inner);
    return C(0.5) * (C(1) + t) + C(0.5) * u * (C(1) - t * t) * k * (C(1) + C(3 * 0.044715) * u * u);
  }
  return C(1);
}

// The loop every dropout kernel runs: a grid-stride loop over groups of 4
// consecutive elements, one Philox call per group; for each in-range element i
// of the group it calls body(i, keep), keep = (word >> 8) >= threshold.
template <typename Body>
__device__ __forceinline__ void dropout_for_each(long long n, unsigned long long seed,
                                                 unsigned long long offset,
                                                 unsigned int threshold, Body body) {
  const long long ngroups = (n + 3) / 4;
  for (long long grp = (long long)blockIdx.x * blockDim.x + threadIdx.x; grp < ngroups;
       grp += (long long)gridDim.x * blockDim.x) {
    const PhiloxOut r = dropout_bits(grp, seed, offset);
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const long long i = grp * 4 + t;
      if (i < n) body(i, (r.v[t] >> 8) >= threshold);
    }
  }
}

template <typename T>
__global__ void dropout_add_forward(const T* __restrict__ x, const T* __restrict__ residual,
                                    T* __restrict__ y, long long n, unsigned long long seed,
                                    unsigned long long offset, unsigned int threshold,
                                    mtx::compute_t<T> keep_scale) {
  using C = mtx::compute_t<T>;
  dropout_for_each(n, seed, offset, threshold, [&](long long i, bool keep) {
    y[i] = T(C(residual[i]) + (keep ? C(x[i]) * keep_scale : C(0)));
  });
}

template <typename T>
__global__ void dropout_mask_apply(const T* __restrict__ dy, T* __restrict__ dx, long long n,
                                   unsigned long long seed, unsigned long long offset,
                                   unsigned int threshold, mtx::compute_t<T> keep_scale) {
  using C = mtx::compute_t<T>;
  dropout_for_each(n, seed, offset, threshold, [&](long long i, bool keep) {
    dx[i] = T(keep ? C(dy[i]) * keep_scale : C(0));
  });
}

template <typename T>
__global__ void bias_act_dropout_forward(const T* __restrict__ x, const T* __restrict__ bias,
                                         T* __restrict__ y, long long n, int cols, int act,
                                         unsigned long long seed, unsigned long long offset,
                                         unsigned int threshold, mtx::compute_t<T> keep_scale) {
  using C = mtx::compute_t<T>;
  dropout_for_each(n, seed, offset, threshold, [&](long long i, bool keep) {
    const C u = bias ? C(x[i]) + C(bias[i % cols]) : C(x[i]);
    y[i] = T(keep ? act_forward(u, act) * keep_scale : C(0));
  });
}

template <typename T>
__global__ void bias_act_dropout_backward(const T* __restrict__ dy, const T* __restrict__ x,
                                          const T* __restrict__ bias, T* __restrict__ dx,
                                          long long n, int cols, int act,
                                          unsigned long long seed, unsigned long long offset,
                                          unsigned int threshold, mtx::compute_t<T> keep_scale) {
  using C = mtx::compute_t<T>;
  dropout_for_each(n, seed, offset, threshold, [&](long long i, bool keep) {
    const C u = bias ? C(x[i]) + C(bias[i % cols]) : C(x[i]);
    dx[i] = T(keep ? C(dy[i]) * keep_scale * act_grad(u, act) : C(0));
  });
}
