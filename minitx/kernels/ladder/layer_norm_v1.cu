// layer_norm_v1.cu -- rung 1 of the layer-norm ladder: one thread per row.
//
// From the NumPy reference (mean = x.mean(), var = ((x - mean)**2).mean(),
// y = (x - mean) / sqrt(var + eps) * w + b, row by row) to CUDA in the most
// direct way: thread r computes row r with the reference's three loops --
// sum, sum of squared deviations, write.
//
// Changed from the reference: the rows run in parallel, one per GPU thread.
// Why it is still slow: only `rows` threads have work, each walks its row
// three times alone, and a warp's 32 loads are `cols` elements apart (no
// coalescing).
//
// Layout: x, y [rows, cols]; w, b [cols] or NULL; mean, rstd [rows].
// Grid: ceil(rows / blockDim.x) blocks.
#include "../common.cuh"

template <typename T>
__global__ void layer_norm_v1(const T* __restrict__ x, const T* __restrict__ w,
                              const T* __restrict__ b, T* __restrict__ y, T* __restrict__ mean,
                              T* __restrict__ rstd, int rows, int cols, T eps) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* xr = x + (long long)row * cols;
  T* yr = y + (long long)row * cols;

  T s = T(0);
  for (int c = 0; c < cols; ++c) s += xr[c];
  const T mu = s / T(cols);
  T ss = T(0);
  for (int c = 0; c < cols; ++c) ss += (xr[c] - mu) * (xr[c] - mu);
  const T rs = mtx::num<T>::rsqrt(ss / T(cols) + eps);
  mtx::layer_norm_row_out(xr, w, b, yr, mu, rs, 0, 1, cols);  // y = (x - mu) * rs * w + b
  mean[row] = mu;
  rstd[row] = rs;
}
