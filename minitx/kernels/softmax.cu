// softmax.cu -- row-wise softmax over the last axis, forward and backward.
//
// Math (one row r of length cols):
//   forward   y[r,c] = exp(x[r,c] - m_r) / Z_r
//             m_r = max_c x[r,c],  Z_r = sum_c exp(x[r,c] - m_r)
//             A row whose logits are all -inf (fully masked) is written as all
//             zeros; a row holding a NaN is all NaN (the row max propagates NaN).
//   backward  dx[r,c] = y[r,c] * (dy[r,c] - sum_c' dy[r,c'] * y[r,c'])
//
// Layout: x, y, dy, dx are contiguous [rows, cols] arrays of S (float, double or
// bfloat16); the arithmetic is in T = compute_t<S> (float for bfloat16), rounded once on store.
//
// Thread mapping: one block per row (blockIdx.x = row), blockDim.x threads
// (a multiple of 32, <= 1024) stride over the columns, so any row length works.
// Row max and row sums are block reductions built from warp shuffles.
//
// Reads x three times in the forward (max, sum, write); writes y with `=`.
// The backward reads y, dy twice and writes dx with `=`.
// (ladder/softmax_v1..v3.cu and docs/kernel-ladder.md build up to this kernel.)
#include "common.cuh"

template <typename S>
__global__ void softmax_forward(const S* __restrict__ x, S* __restrict__ y, int rows, int cols) {
  using T = mtx::compute_t<S>;
  const int row = blockIdx.x;
  if (row >= rows) return;  // uniform for the whole block
  const long long base = (long long)row * cols;
  const S* xr = x + base;
  S* yr = y + base;
  const T neg_inf = -mtx::num<T>::inf();

  T m = neg_inf;
  mtx::for_each_column(cols, [&](long long, T xc) { m = mtx::num<T>::max(m, xc); }, xr);
  m = mtx::block_max(m);

  if (m == neg_inf) {  // every logit -inf: defined as an all-zero row
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = T(0);
    return;  // m is block-uniform, so every thread returns here
  }

  T z = T(0);
  mtx::for_each_column(cols, [&](long long, T xc) { z += mtx::num<T>::exp(xc - m); }, xr);
  z = mtx::block_sum(z);
  const T inv_z = T(1) / z;

  mtx::for_each_column(cols, [&](long long c, T xc) { yr[c] = mtx::num<T>::exp(xc - m) * inv_z; }, xr);
}

template <typename S>
__global__ void softmax_backward(const S* __restrict__ y, const S* __restrict__ dy,
                                 S* __restrict__ dx, int rows, int cols) {
  using T = mtx::compute_t<S>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = (long long)row * cols;
  const S* yr = y + base;
  const S* dyr = dy + base;
  S* dxr = dx + base;

  T dot = T(0);
  mtx::for_each_column(cols, [&](long long, T dyc, T yc) { dot += dyc * yc; }, dyr, yr);
  dot = mtx::block_sum(dot);

  mtx::for_each_column(cols, [&](long long c, T yc, T dyc) { dxr[c] = yc * (dyc - dot); }, yr, dyr);
}
