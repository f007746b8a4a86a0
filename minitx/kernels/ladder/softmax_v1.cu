// softmax_v1.cu -- rung 1 of the softmax ladder: one thread per row.
//
// From the NumPy reference (m = max(x), e = exp(x - m), y = e / sum(e), row by
// row) to CUDA in the most direct way: thread r computes row r with the three
// loops the reference implies -- max, sum, write.
//
// Changed from the reference: the rows run in parallel, one per GPU thread.
// Why it is still slow: only `rows` threads have work (a few thousand rows
// leave most of a GPU idle), each walks its whole row three times alone, and
// the 32 threads of a warp read addresses `cols` elements apart, so one load
// instruction of a warp touches 32 different memory segments (no coalescing).
//
// Layout: x, y contiguous [rows, cols].  Grid: ceil(rows / blockDim.x) blocks.
// A row whose logits are all -inf is written as zeros (as softmax.cu does).
#include "../common.cuh"

template <typename T>
__global__ void softmax_v1(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* xr = x + (long long)row * cols;
  T* yr = y + (long long)row * cols;
  const T neg_inf = -mtx::num<T>::inf();

  T m = neg_inf;
  for (int c = 0; c < cols; ++c) m = mtx::num<T>::max(m, xr[c]);
  if (m == neg_inf) {
    for (int c = 0; c < cols; ++c) yr[c] = T(0);
    return;
  }
  T z = T(0);
  for (int c = 0; c < cols; ++c) z += mtx::num<T>::exp(xr[c] - m);
  for (int c = 0; c < cols; ++c) yr[c] = mtx::num<T>::exp(xr[c] - m) / z;
}
