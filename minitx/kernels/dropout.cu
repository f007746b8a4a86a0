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
// (seed, offset) = philox_pair(philox, offset): the seed and a base offset are read from
// device memory, the call's offset added to it (philox.cuh says why).
//
// Kernels (x, y, dy, dx, residual contiguous with n elements; bias [cols]; all of S,
// computed in T = compute_t<S>: float for bfloat16, rounded once on store):
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

// act and its derivative, in the compute type T
template <typename T>
__device__ __forceinline__ T act_forward(T u, int act) {
  if (act == 1) return u > T(0) ? u : T(0);
  if (act == 2) {
    const T k = T(0.7978845608028654);  // sqrt(2 / pi)
    const T inner = k * (u + T(0.044715) * u * u * u);
    return T(0.5) * u * (T(1) + mtx::num<T>::tanh(inner));
  }
  return u;
}

template <typename T>
__device__ __forceinline__ T act_grad(T u, int act) {
  if (act == 1) return u > T(0) ? T(1) : T(0);
  if (act == 2) {
    const T k = T(0.7978845608028654);
    const T inner = k * (u + T(0.044715) * u * u * u);
    const T t = mtx::num<T>::tanh(inner);
    return T(0.5) * (T(1) + t) + T(0.5) * u * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * u * u);
  }
  return T(1);
}

// The loop every dropout kernel runs: a grid-stride loop over groups of 4
// consecutive elements, one Philox call per group; for each in-range element i
// of the group it calls body(i, keep), keep = (word >> 8) >= threshold.
template <typename Body>
__device__ __forceinline__ void dropout_for_each(long long n, PhiloxPair key,
                                                 unsigned int threshold, Body body) {
  const long long ngroups = (n + 3) / 4;
  for (long long grp = (long long)blockIdx.x * blockDim.x + threadIdx.x; grp < ngroups;
       grp += (long long)gridDim.x * blockDim.x) {
    const PhiloxOut r = dropout_bits(grp, key.seed, key.offset);
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const long long i = grp * 4 + t;
      if (i < n) body(i, (r.v[t] >> 8) >= threshold);
    }
  }
}

template <typename S>
__global__ void dropout_add_forward(const S* __restrict__ x, const S* __restrict__ residual,
                                    S* __restrict__ y, long long n, const unsigned long long* __restrict__ philox,
                                    unsigned long long offset, unsigned int threshold,
                                    mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_for_each(n, philox_pair(philox, offset), threshold, [&](long long i, bool keep) {
    y[i] = residual[i] + (keep ? x[i] * keep_scale : T(0));
  });
}

template <typename S>
__global__ void dropout_mask_apply(const S* __restrict__ dy, S* __restrict__ dx, long long n,
                                   const unsigned long long* __restrict__ philox,
                                   unsigned long long offset, unsigned int threshold,
                                   mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_for_each(n, philox_pair(philox, offset), threshold, [&](long long i, bool keep) {
    dx[i] = keep ? dy[i] * keep_scale : T(0);
  });
}

template <typename S>
__global__ void bias_act_dropout_forward(const S* __restrict__ x, const S* __restrict__ bias,
                                         S* __restrict__ y, long long n, int cols, int act,
                                         const unsigned long long* __restrict__ philox,
                                         unsigned long long offset, unsigned int threshold,
                                         mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_for_each(n, philox_pair(philox, offset), threshold, [&](long long i, bool keep) {
    const T u = bias ? x[i] + bias[i % cols] : T(x[i]);
    y[i] = keep ? act_forward(u, act) * keep_scale : T(0);
  });
}

template <typename S>
__global__ void bias_act_dropout_backward(const S* __restrict__ dy, const S* __restrict__ x,
                                          const S* __restrict__ bias, S* __restrict__ dx,
                                          long long n, int cols, int act,
                                          const unsigned long long* __restrict__ philox,
                                          unsigned long long offset, unsigned int threshold,
                                          mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_for_each(n, philox_pair(philox, offset), threshold, [&](long long i, bool keep) {
    const T u = bias ? x[i] + bias[i % cols] : T(x[i]);
    dx[i] = keep ? dy[i] * keep_scale * act_grad(u, act) : T(0);
  });
}
