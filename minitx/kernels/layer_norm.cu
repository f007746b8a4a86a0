// layer_norm.cu -- layer normalisation over the last axis, forward and backward.
//
// Math (one row r of length cols = n, w/b optional per-column affine):
//   mean_r = (1/n) sum_c x[r,c]
//   var_r  = (1/n) sum_c (x[r,c] - mean_r)^2          (two-pass, biased)
//   rstd_r = 1 / sqrt(var_r + eps)
//   xhat   = (x - mean_r) * rstd_r
//   y      = xhat * w[c] + b[c]                      (w == NULL -> 1, b == NULL -> 0)
//   backward, with g = dy * w:
//   dx[r,c] = rstd_r * (g - mean_c(g) - xhat * mean_c(g * xhat))
//   dw[c]   = sum_r dy[r,c] * xhat[r,c]
//   db[c]   = sum_r dy[r,c]
//
// Layout: x, y, dy, dx contiguous [rows, cols]; w, b, dw, db [cols], all of S;
// mean, rstd [rows] and the partials part_w, part_b of T = compute_t<S> (float for a
// bfloat16 T: the statistics and sums are never rounded to bfloat16).
//
// Kernels and thread mapping:
//   layer_norm_forward      one block per row, threads stride over columns (thread t owns
//                           columns t, t + blockDim.x, ...), block reductions (warp
//                           shuffles + shared memory).  Writes y, mean, rstd with `=`.
//   layer_norm_backward_dx  one block per row, same mapping; writes dx with `=`, or
//                           dx = plus + (the above) when plus is given: the gradient x
//                           already has from another use (a residual connection), added
//                           here instead of by a separate add (an add, never fused with
//                           the multiply before it, so the bits are that separate add's).
//   Both take N, the columns a thread holds in registers (N * blockDim.x >= cols; the launcher
//   picks the smallest of layer_norm.py's ROW_CLASSES).  A loop over columns whose trip count
//   the compiler does not know waits out one memory latency per element, and reads the row two
//   or three times; with N fixed, each thread issues all its loads of x (dy, w, plus) at once
//   and reads them from global memory once.  N = 0 (a row wider than every class) is that
//   loop.  Both paths sum a thread's columns in the same order and round every operation alike
//   (the register path writes out where the loop's compiled code fuses a multiply and an add
//   into an FMA and where it does not), so they give the same bits.
//   dw/db accumulate across rows WITHOUT atomics (deterministic), in two steps:
//   layer_norm_backward_dwdb_partial
//                           grid (ceil(cols/blockDim.x), parts): thread owns one
//                           column and sums rows blockIdx.y, blockIdx.y + parts,
//                           ... (8 rows loaded at a time, added in that order);
//                           writes part_w/part_b[parts, cols] with `=`.
//   layer_norm_backward_dwdb_reduce
//                           one thread per column sums the `parts` partials and
//                           writes dw[c], db[c] with `=` (not `+=`).
// (ladder/layer_norm_v1..v3.cu and docs/kernel-ladder.md build up to the forward.)
#include "common.cuh"

// The register path's share of one row: slot i < N holds column threadIdx.x + i * blockDim.x
// (0 past the row's end, or where p is NULL).  The loads are unrolled, all issued before any
// slot is used.
template <typename S, int N>
__device__ __forceinline__ void ln_load(mtx::compute_t<S> (&v)[N], const S* __restrict__ p, int cols) {
  using T = mtx::compute_t<S>;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    v[i] = (p && c < cols) ? T(p[c]) : T(0);
  }
}

// y from the registers: mtx::layer_norm_row_out's arithmetic, one version per (w, b) given.
// Where w is given, b's add stays unfused (the loop's `if (b)` is a branch between w's multiply
// and the add); where only b is, `(x - mu) * rstd + b` is one FMA, as the loop compiles.
template <bool W, bool B, typename S, int N>
__device__ __forceinline__ void ln_out_regs(const mtx::compute_t<S> (&xv)[N], const S* __restrict__ w,
                                            const S* __restrict__ b, S* __restrict__ yr,
                                            mtx::compute_t<S> mu, mtx::compute_t<S> rs, int cols) {
  using T = mtx::compute_t<S>;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < cols) {
      T v = (xv[i] - mu) * rs;
      if (W) v *= w[c];
      if (B) v = W ? mtx::num<T>::add(v, T(b[c])) : v + b[c];
      yr[c] = v;
    }
  }
}

template <typename S, int N = 0>
__global__ void layer_norm_forward(const S* __restrict__ x, const S* __restrict__ w,
                                   const S* __restrict__ b, S* __restrict__ y,
                                   mtx::compute_t<S>* __restrict__ mean,
                                   mtx::compute_t<S>* __restrict__ rstd, int rows, int cols,
                                   mtx::compute_t<S> eps) {
  using T = mtx::compute_t<S>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = (long long)row * cols;
  const S* xr = x + base;
  S* yr = y + base;

  if constexpr (N == 0) {
    T s = T(0);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const T mu = mtx::block_sum(s) / T(cols);

    T ss = T(0);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const T d = xr[c] - mu;
      ss += d * d;
    }
    const T var = mtx::block_sum(ss) / T(cols);
    const T rs = mtx::num<T>::rsqrt(var + eps);

    mtx::layer_norm_row_out(xr, w, b, yr, mu, rs, threadIdx.x, blockDim.x, cols);
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  } else {
    T xv[N];
    ln_load<S, N>(xv, xr, cols);

    T s = T(0);
#pragma unroll
    for (int i = 0; i < N; ++i)
      if ((int)(threadIdx.x + i * blockDim.x) < cols) s += xv[i];
    const T mu = mtx::block_sum(s) / T(cols);

    T ss = T(0);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if ((int)(threadIdx.x + i * blockDim.x) < cols) {
        const T d = xv[i] - mu;
        ss += d * d;
      }
    }
    const T var = mtx::block_sum(ss) / T(cols);
    const T rs = mtx::num<T>::rsqrt(var + eps);

    if (w && b) ln_out_regs<true, true, S, N>(xv, w, b, yr, mu, rs, cols);
    else if (w) ln_out_regs<true, false, S, N>(xv, w, b, yr, mu, rs, cols);
    else if (b) ln_out_regs<false, true, S, N>(xv, w, b, yr, mu, rs, cols);
    else ln_out_regs<false, false, S, N>(xv, w, b, yr, mu, rs, cols);
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
}

// dx from the registers, one version per w given or not: g - mean_g is one FMA where g = dy * w
// (as in the loop, whose second pass multiplies afresh).
template <bool W, typename S, int N>
__device__ __forceinline__ void ln_dx_regs(const mtx::compute_t<S> (&xv)[N], const mtx::compute_t<S> (&dyv)[N],
                                           const mtx::compute_t<S> (&wv)[N], const mtx::compute_t<S> (&pv)[N],
                                           bool plus, S* __restrict__ dxr, mtx::compute_t<S> mu,
                                           mtx::compute_t<S> rs, mtx::compute_t<S> mean_g,
                                           mtx::compute_t<S> mean_gx, int cols) {
  using T = mtx::compute_t<S>;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < cols) {
      const T g = W ? dyv[i] * wv[i] : dyv[i];
      const T xhat = (xv[i] - mu) * rs;
      const T d = rs * (g - mean_g - xhat * mean_gx);
      dxr[c] = plus ? mtx::num<T>::add(pv[i], d) : d;
    }
  }
}

template <typename S, int N = 0>
__global__ void layer_norm_backward_dx(const S* __restrict__ dy, const S* __restrict__ x,
                                       const S* __restrict__ w,
                                       const mtx::compute_t<S>* __restrict__ mean,
                                       const mtx::compute_t<S>* __restrict__ rstd,
                                       S* __restrict__ dx, const S* __restrict__ plus, int rows,
                                       int cols) {
  using T = mtx::compute_t<S>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = (long long)row * cols;
  const S* xr = x + base;
  const S* dyr = dy + base;
  S* dxr = dx + base;
  const T mu = mean[row];
  const T rs = rstd[row];

  if constexpr (N == 0) {
    T sg = T(0), sgx = T(0);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const T g = w ? dyr[c] * w[c] : T(dyr[c]);
      sg += g;
      sgx += g * (xr[c] - mu) * rs;
    }
    const T mean_g = mtx::block_sum(sg) / T(cols);
    const T mean_gx = mtx::block_sum(sgx) / T(cols);

    const S* plusr = plus ? plus + base : nullptr;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const T g = w ? dyr[c] * w[c] : T(dyr[c]);
      const T xhat = (xr[c] - mu) * rs;
      const T d = rs * (g - mean_g - xhat * mean_gx);
      dxr[c] = plusr ? mtx::num<T>::add(T(plusr[c]), d) : d;
    }
  } else {
    const S* plusr = plus ? plus + base : nullptr;
    T xv[N], dyv[N], wv[N], pv[N];
    ln_load<S, N>(xv, xr, cols);
    ln_load<S, N>(dyv, dyr, cols);
    ln_load<S, N>(wv, w, cols);
    ln_load<S, N>(pv, plusr, cols);

    // g = dy * w rounded alone (num::mul), as in the loop's first pass, and kept apart from the
    // product ln_dx_regs fuses into g - mean_g (the loop's second pass multiplies afresh)
    T sg = T(0), sgx = T(0);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if ((int)(threadIdx.x + i * blockDim.x) < cols) {
        const T g = w ? mtx::num<T>::mul(dyv[i], wv[i]) : dyv[i];
        sg += g;
        sgx += g * (xv[i] - mu) * rs;
      }
    }
    const T mean_g = mtx::block_sum(sg) / T(cols);
    const T mean_gx = mtx::block_sum(sgx) / T(cols);

    if (w) ln_dx_regs<true, S, N>(xv, dyv, wv, pv, plusr != nullptr, dxr, mu, rs, mean_g, mean_gx, cols);
    else ln_dx_regs<false, S, N>(xv, dyv, wv, pv, plusr != nullptr, dxr, mu, rs, mean_g, mean_gx, cols);
  }
}

template <typename S>
__global__ void layer_norm_backward_dwdb_partial(const S* __restrict__ dy,
                                                 const S* __restrict__ x,
                                                 const mtx::compute_t<S>* __restrict__ mean,
                                                 const mtx::compute_t<S>* __restrict__ rstd,
                                                 mtx::compute_t<S>* __restrict__ part_w,
                                                 mtx::compute_t<S>* __restrict__ part_b,
                                                 int rows, int cols) {
  using T = mtx::compute_t<S>;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols) return;  // no barriers below
  // rows r = blockIdx.y, blockIdx.y + gridDim.y, ... in that order, U of them loaded before the
  // first is added (a loop of one row an iteration waited out one memory latency a row)
  constexpr int U = 8;
  T aw = T(0), ab = T(0);
  for (long long r0 = blockIdx.y; r0 < rows; r0 += U * gridDim.y) {
    T g[U], xv[U], mu[U], rs[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const long long r = r0 + k * gridDim.y;
      const long long i = r * cols + col;
      const bool in = r < rows;
      g[k] = in ? T(dy[i]) : T(0);
      xv[k] = in ? T(x[i]) : T(0);
      mu[k] = in ? mean[r] : T(0);
      rs[k] = in ? rstd[r] : T(0);
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (r0 + k * gridDim.y < rows) {
        aw += g[k] * (xv[k] - mu[k]) * rs[k];
        ab += g[k];
      }
    }
  }
  const long long o = (long long)blockIdx.y * cols + col;
  part_w[o] = aw;
  part_b[o] = ab;
}

template <typename S>
__global__ void layer_norm_backward_dwdb_reduce(const mtx::compute_t<S>* __restrict__ part_w,
                                                const mtx::compute_t<S>* __restrict__ part_b,
                                                S* __restrict__ dw, S* __restrict__ db, int parts,
                                                int cols) {
  using T = mtx::compute_t<S>;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  T aw = T(0), ab = T(0);  // the partials p = 0, 1, ..., parts - 1 of this column, in order
  mtx::for_each_strided<8>(col, (long long)parts * cols, cols, [&](long long, T w, T b) {
    aw += w;
    ab += b;
  }, part_w, part_b);
  dw[col] = aw;
  db[col] = ab;
}
