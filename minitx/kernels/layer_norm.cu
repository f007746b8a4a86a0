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
//   layer_norm_forward      one block per row, threads stride over columns,
//                           block reductions (warp shuffles + shared memory).
//                           Writes y, mean, rstd with `=`.
//   layer_norm_backward_dx  one block per row, same mapping; writes dx with `=`, or
//                           dx = plus + (the above) when plus is given: the gradient x
//                           already has from another use (a residual connection), added
//                           here instead of by a separate add (an add, never fused with
//                           the multiply before it, so the bits are that separate add's).
//   dw/db accumulate across rows WITHOUT atomics (deterministic), in two steps:
//   layer_norm_backward_dwdb_partial
//                           grid (ceil(cols/blockDim.x), parts): thread owns one
//                           column and sums rows blockIdx.y, blockIdx.y + parts,
//                           ...; writes part_w/part_b[parts, cols] with `=`.
//   layer_norm_backward_dwdb_reduce
//                           one thread per column sums the `parts` partials and
//                           writes dw[c], db[c] with `=` (not `+=`).
// (ladder/layer_norm_v1..v3.cu and docs/kernel-ladder.md build up to the forward.)
#include "common.cuh"

template <typename S>
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
}

template <typename S>
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
  T aw = T(0), ab = T(0);
  for (int r = blockIdx.y; r < rows; r += gridDim.y) {
    const long long i = (long long)r * cols + col;
    const T g = dy[i];
    aw += g * (x[i] - mean[r]) * rstd[r];
    ab += g;
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
  T aw = T(0), ab = T(0);
  for (int p = 0; p < parts; ++p) {
    aw += part_w[(long long)p * cols + col];
    ab += part_b[(long long)p * cols + col];
  }
  dw[col] = aw;
  db[col] = ab;
}
