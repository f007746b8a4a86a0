// softmax_v3.cu -- rung 3 of the softmax ladder: a warp per row, warp shuffles, online softmax.
//
// Changed from v2: one warp (32 threads) per row, several rows per block, and
// no shared memory.  Each lane keeps a running max m and a running sum
// s = sum exp(x - m) over its columns: when a new value raises the max, the
// sum so far is rescaled by exp(m_old - m_new) (the "online softmax" of
// Milakov & Gimelshein, 2018).  So max and sum come from ONE read of x.  The 32
// lanes' (m, s) pairs are merged in five butterfly steps with __shfl_xor_sync:
// registers to registers, no shared memory, no __syncthreads.
//
// Why it is faster: x is read twice instead of three times, and a reduction is
// five shuffles instead of log2(blockDim.x) shared-memory round trips and
// block barriers.  The price: one warp per row, so a very long row is walked
// by only 32 threads (softmax.cu keeps a block per row, with shuffle-based
// block reductions, for that case).
//
// Layout: x, y contiguous [rows, cols].  blockDim.x a multiple of 32; row =
// blockIdx.x * warps_per_block + warp.  All -inf row -> zeros.
#include "../common.cuh"

// (m, s) <- the online-softmax merge of (m, s) and (m2, s2).
template <typename T>
__device__ __forceinline__ void online_merge(T& m, T& s, T m2, T s2) {
  const T m_new = mtx::num<T>::max(m, m2);
  if (m_new != -mtx::num<T>::inf())  // both -inf: nothing seen yet, keep s = 0
    s = s * mtx::num<T>::exp(m - m_new) + s2 * mtx::num<T>::exp(m2 - m_new);
  m = m_new;
}

template <typename T>
__global__ void softmax_v3(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // uniform per warp, and there is no block barrier
  const T* xr = x + (long long)row * cols;
  T* yr = y + (long long)row * cols;
  const T neg_inf = -mtx::num<T>::inf();

  T m = neg_inf, s = T(0);
  for (int c = lane; c < cols; c += 32) online_merge(m, s, xr[c], T(1));
  for (int off = 16; off > 0; off >>= 1) {
    const T m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const T s2 = __shfl_xor_sync(0xffffffffu, s, off);
    online_merge(m, s, m2, s2);
  }
  if (m == neg_inf) {
    for (int c = lane; c < cols; c += 32) yr[c] = T(0);
    return;
  }
  const T inv_s = T(1) / s;
  for (int c = lane; c < cols; c += 32) yr[c] = mtx::num<T>::exp(xr[c] - m) * inv_s;
}
