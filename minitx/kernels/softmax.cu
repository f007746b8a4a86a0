// softmax.cu -- row-wise softmax over the last axis, forward and backward.
//
// Math (s = scale, one row r of length cols, K_r = kept columns of the row):
//   forward   y[r,c] = exp(s*x[r,c] - m_r) / Z_r      for c in K_r
//             y[r,c] = 0                             for masked c
//             m_r = max_{c in K_r} s*x[r,c],  Z_r = sum_{c in K_r} exp(s*x[r,c] - m_r)
//             A row with no kept column (fully masked), or whose kept logits are
//             all -inf, is written as all zeros (never NaN).
//   backward  dx[r,c] = s * y[r,c] * (dy[r,c] - sum_c' dy[r,c'] * y[r,c'])
//             (masked entries have y == 0, hence dx == 0; no mask needed.)
//
// Layout: x, y, dy, dx are contiguous [rows, cols] arrays of T; mask is an
// optional contiguous [rows, cols] uint8 array (nonzero = keep) or NULL.
//
// Thread mapping: one block per row (blockIdx.x = row), blockDim.x threads
// (a multiple of 32, <= 1024) stride over the columns, so any row length works.
// Row max and row sums are block reductions built from warp shuffles.
//
// Reads x (and mask) three times in the forward (max, sum, write); writes y with
// `=`.  The backward reads y, dy twice and writes dx with `=`.
#include "common.cuh"

template <typename T>
__global__ void softmax_forward(const T* __restrict__ x, const unsigned char* __restrict__ mask,
                                T* __restrict__ y, int rows, int cols, T scale) {
  const int row = blockIdx.x;
  if (row >= rows) return;  // uniform for the whole block
  const long long base = (long long)row * cols;
  const T* xr = x + base;
  T* yr = y + base;
  const unsigned char* mr = mask ? mask + base : nullptr;
  const T neg_inf = -mtx::num<T>::inf();

  T m = neg_inf;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    if (mr == nullptr || mr[c]) m = mtx::num<T>::max(m, scale * xr[c]);
  }
  m = mtx::block_max(m);

  if (m == neg_inf) {  // nothing kept: defined as an all-zero row
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = T(0);
    return;  // m is block-uniform, so every thread returns here
  }

  T z = T(0);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    if (mr == nullptr || mr[c]) z += mtx::num<T>::exp(scale * xr[c] - m);
  }
  z = mtx::block_sum(z);
  const T inv_z = T(1) / z;

  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const bool keep = (mr == nullptr) || mr[c];
    yr[c] = keep ? mtx::num<T>::exp(scale * xr[c] - m) * inv_z : T(0);
  }
}

template <typename T>
__global__ void softmax_backward(const T* __restrict__ y, const T* __restrict__ dy,
                                 T* __restrict__ dx, int rows, int cols, T scale) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = (long long)row * cols;
  const T* yr = y + base;
  const T* dyr = dy + base;
  T* dxr = dx + base;

  T dot = T(0);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) dot += dyr[c] * yr[c];
  dot = mtx::block_sum(dot);

  for (int c = threadIdx.x; c < cols; c += blockDim.x) dxr[c] = scale * yr[c] * (dyr[c] - dot);
}
