// layer_norm_v2.cu -- rung 2 of the layer-norm ladder: a block per row, shared-memory reductions.
//
// Changed from v1: a block of threads shares one row; thread t reads columns
// t, t + blockDim.x, ..., so a warp's loads are 32 neighbouring elements (one
// coalesced transaction), and rows * blockDim.x threads have work.  The
// per-thread partial sums (for the mean, then for the variance) are combined by
// a tree reduction in shared memory.
//
// Why it is faster: coalesced loads and enough threads in flight to hide memory
// latency.  What is left: each reduction is log2(blockDim.x) shared-memory
// round trips, each ending with __syncthreads, and x is read three times.
//
// Layout as in v1.  One block per row; blockDim.x a power of two (32..1024).
#include "../common.cuh"

// Block-wide sum by a tree in shared memory; every thread gets the result.
template <typename T>
__device__ __forceinline__ T tree_sum(T v) {
  __shared__ T buf[1024];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();
  }
  const T r = buf[0];
  __syncthreads();  // all have read buf[0] before a next reduction overwrites it
  return r;
}

template <typename T>
__global__ void layer_norm_v2(const T* __restrict__ x, const T* __restrict__ w,
                              const T* __restrict__ b, T* __restrict__ y, T* __restrict__ mean,
                              T* __restrict__ rstd, int rows, int cols, T eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;  // uniform for the whole block
  const T* xr = x + (long long)row * cols;
  T* yr = y + (long long)row * cols;

  T s = T(0);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  const T mu = tree_sum(s) / T(cols);
  T ss = T(0);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) ss += (xr[c] - mu) * (xr[c] - mu);
  const T rs = mtx::num<T>::rsqrt(tree_sum(ss) / T(cols) + eps);
  mtx::layer_norm_row_out(xr, w, b, yr, mu, rs, threadIdx.x, blockDim.x, cols);
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}
