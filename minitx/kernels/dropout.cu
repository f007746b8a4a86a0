// dropout.cu -- fused dropout with a counter-based RNG (no mask is stored).
//
// RNG: Philox-4x32-10 (philox.cuh): element i of a launch is KEPT iff the 24 high bits
// of its word of the Philox output for (seed, offset) are >= threshold = ceil(p * 2^24),
// computed on the host, so the keep probability is 1 - threshold / 2^24 ~= 1 - p, independent
// of T.  Kept values are multiplied by keep_scale = 1 / (1 - p)
// (0 when p == 1); a dropped value v becomes v - v: 0 for a finite v, NaN for a NaN or an inf,
// as the reference's multiply by its mask gives them (a NaN is never hidden by dropout or relu).
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
// Thread mapping: grid-stride loop over groups of 4 consecutive elements, one Philox call
// per group (dropout_map).  Where every streamed array (all but bias) starts aligned to
// alignof(Group4<S>) (8 bytes for bfloat16, 16 for float and double), a full group of each is
// read and written as one wide access (two 16-byte ones for double); the last, partial group
// and unaligned arrays go an element at a time, bounds-checked against n.  The choice is made
// from the pointers, the same for every thread, and both paths run the same per-element
// arithmetic, so they give the same bits.  bias is read an element at a time, its column
// i % cols computed once per group and then stepped.
#include "common.cuh"
#include "philox.cuh"

// act and its derivative, in the compute type T
template <typename T>
__device__ __forceinline__ T act_forward(T u, int act) {
  if (act == 1) return u <= T(0) ? T(0) : u;  // (a NaN stays NaN, as max(u, 0) keeps it)
  if (act == 2) {
    const T k = T(0.7978845608028654);  // sqrt(2 / pi)
    const T inner = k * (u + T(0.044715) * u * u * u);
    return T(0.5) * u * (T(1) + mtx::num<T>::tanh(inner));
  }
  return u;
}

template <typename T>
__device__ __forceinline__ T act_grad(T u, int act) {
  if (act == 1) return u <= T(0) ? T(0) : T(1);  // (1 at a NaN: dy passes, as the reference's)
  if (act == 2) {
    const T k = T(0.7978845608028654);
    const T inner = k * (u + T(0.044715) * u * u * u);
    const T t = mtx::num<T>::tanh(inner);
    return T(0.5) * (T(1) + t) + T(0.5) * u * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * u * u);
  }
  return T(1);
}

// A dropped value: +0 where v is finite, NaN where it is a NaN or an inf (v * 0 would give -0
// for a negative v, where the bits of a plain 0 are kept).
template <typename T>
__device__ __forceinline__ T dropped(T v) { return v - v; }

// Group4<S>: the 4 consecutive elements one Philox call covers, as one access (16 bytes of
// float, 8 of bfloat16; 32 of double, aligned to 16: two 16-byte accesses).  A warp of scalar
// loads reads addresses 4 elements apart per lane, 4 instructions for each group.
template <typename S>
struct alignas(4 * sizeof(S) < 16 ? 4 * sizeof(S) : 16) Group4 {
  S v[4];
};

template <typename S>
__device__ __forceinline__ bool group_aligned(const S* p) {
  return (unsigned long long)p % alignof(Group4<S>) == 0;
}

// Group grp of array a: one wide load where `wide`, else its in-range elements one at a time
// (the others 0, computed on and never stored).
template <typename S>
__device__ __forceinline__ Group4<S> load_group(const S* __restrict__ a, long long grp,
                                                long long n, bool wide) {
  if (wide) return reinterpret_cast<const Group4<S>*>(a)[grp];
  Group4<S> g;
#pragma unroll
  for (int t = 0; t < 4; ++t) g.v[t] = grp * 4 + t < n ? a[grp * 4 + t] : S(0.0f);
  return g;
}

template <typename S>
__device__ __forceinline__ void store_group(S* __restrict__ a, long long grp, long long n,
                                            bool wide, const Group4<S>& g) {
  if (wide) {
    reinterpret_cast<Group4<S>*>(a)[grp] = g;
    return;
  }
#pragma unroll
  for (int t = 0; t < 4; ++t)
    if (grp * 4 + t < n) a[grp * 4 + t] = g.v[t];
}

// The loop every dropout kernel runs: y[i] = f(keep, c, x[i]...) for every i < n, each x[i]
// widened to T, with keep = (Philox word >> 8) >= threshold and c = i % cols the bias column
// (kernels without a bias pass cols = 1 and ignore c).  Each group's inputs are loaded
// (load_group), f computes its 4 outputs, and store_group writes them: f is the only
// arithmetic, whichever way the group is read.
template <typename S, typename F, typename... X>
__device__ __forceinline__ void dropout_map(long long n, int cols, PhiloxPair key,
                                            unsigned int threshold, F f, S* __restrict__ y,
                                            const X* __restrict__... x) {
  const bool aligned = group_aligned(y) && (group_aligned(x) && ...);
  const long long ngroups = (n + 3) / 4;
  for (long long grp = (long long)blockIdx.x * blockDim.x + threadIdx.x; grp < ngroups;
       grp += (long long)gridDim.x * blockDim.x) {
    const bool wide = aligned && grp * 4 + 4 <= n;
    const PhiloxOut r = dropout_bits(grp, key.seed, key.offset);
    int c = (int)(grp * 4 % cols);  // one 64-bit modulo per group
    // in...: the group of each x, as a pack, so f sees element t of each
    [&](const Group4<X>&... in) {
      Group4<S> out;
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        out.v[t] = f((r.v[t] >> 8) >= threshold, c, mtx::compute_t<S>(in.v[t])...);
        c = c + 1 == cols ? 0 : c + 1;
      }
      store_group(y, grp, n, wide, out);
    }(load_group(x, grp, n, wide)...);
  }
}

template <typename S>
__global__ void dropout_add_forward(const S* __restrict__ x, const S* __restrict__ residual,
                                    S* __restrict__ y, long long n, const unsigned long long* __restrict__ philox,
                                    unsigned long long offset, unsigned int threshold,
                                    mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_map(n, 1, philox_pair(philox, offset), threshold, [&](bool keep, int, T xi, T ri) {
    return ri + (keep ? xi * keep_scale : dropped(xi));
  }, y, x, residual);
}

template <typename S>
__global__ void dropout_mask_apply(const S* __restrict__ dy, S* __restrict__ dx, long long n,
                                   const unsigned long long* __restrict__ philox,
                                   unsigned long long offset, unsigned int threshold,
                                   mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_map(n, 1, philox_pair(philox, offset), threshold, [&](bool keep, int, T dyi) {
    return keep ? dyi * keep_scale : dropped(dyi);
  }, dx, dy);
}

template <typename S>
__global__ void bias_act_dropout_forward(const S* __restrict__ x, const S* __restrict__ bias,
                                         S* __restrict__ y, long long n, int cols, int act,
                                         const unsigned long long* __restrict__ philox,
                                         unsigned long long offset, unsigned int threshold,
                                         mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_map(n, cols, philox_pair(philox, offset), threshold, [&](bool keep, int c, T xi) {
    const T a = act_forward(bias ? xi + T(bias[c]) : xi, act);
    return keep ? a * keep_scale : dropped(a);
  }, y, x);
}

template <typename S>
__global__ void bias_act_dropout_backward(const S* __restrict__ dy, const S* __restrict__ x,
                                          const S* __restrict__ bias, S* __restrict__ dx,
                                          long long n, int cols, int act,
                                          const unsigned long long* __restrict__ philox,
                                          unsigned long long offset, unsigned int threshold,
                                          mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  dropout_map(n, cols, philox_pair(philox, offset), threshold, [&](bool keep, int c, T dyi, T xi) {
    const T g = act_grad(bias ? xi + T(bias[c]) : xi, act);
    return keep ? dyi * keep_scale * g : dropped(dyi * g);
  }, dx, dy, x);
}
