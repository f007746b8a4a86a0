// softmax_v2.cu -- rung 2 of the softmax ladder: a block per row, shared-memory reductions.
//
// Changed from v1: a block of threads shares one row.  Thread t reads columns
// t, t + blockDim.x, ..., so the 32 threads of a warp read 32 neighbouring
// elements: one coalesced memory transaction instead of 32.  rows * blockDim.x
// threads have work instead of rows.  Each thread's partial max (then partial
// sum) is combined by a tree reduction in shared memory.
//
// Why it is faster: coalesced loads and many more threads in flight to hide
// memory latency.  What is left: each reduction takes log2(blockDim.x) steps,
// each a shared-memory round trip and a __syncthreads, in which half of the
// remaining threads idle; and x is still read three times.
//
// Layout: x, y contiguous [rows, cols].  One block per row; blockDim.x is a
// power of two (32..1024).  All -inf row -> zeros.
#include "../common.cuh"

// Tree reduction over the block; every thread gets the result.
template <typename T, typename Op>
__device__ __forceinline__ T tree_reduce(T v, Op op) {
  __shared__ T buf[1024];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + stride]);
    __syncthreads();
  }
  const T r = buf[0];
  __syncthreads();  // all have read buf[0] before a next reduction overwrites it
  return r;
}

template <typename T>
__global__ void softmax_v2(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  const int row = blockIdx.x;
  if (row >= rows) return;  // uniform for the whole block
  const T* xr = x + (long long)row * cols;
  T* yr = y + (long long)row * cols;
  const T neg_inf = -mtx::num<T>::inf();

  T m = neg_inf;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = mtx::num<T>::max(m, xr[c]);
  m = tree_reduce(m, mtx::MaxOp<T>());
  if (m == neg_inf) {  // block-uniform
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = T(0);
    return;
  }
  T z = T(0);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) z += mtx::num<T>::exp(xr[c] - m);
  z = tree_reduce(z, mtx::SumOp<T>());
  for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = mtx::num<T>::exp(xr[c] - m) / z;
}
