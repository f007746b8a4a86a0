// layer_norm_v3.cu -- rung 3 of the layer-norm ladder: a warp per row, warp shuffles, one pass.
//
// Changed from v2: one warp per row, several rows per block, no shared memory,
// and mean and variance from ONE read of x.  Each lane runs Welford's update
// over its columns, keeping (n, mean, M2 = sum of squared deviations); the 32
// lanes' triples are merged in five butterfly steps with __shfl_xor_sync, with
// Chan et al.'s formula for combining two groups:
//   n = na + nb,  delta = mean_b - mean_a,
//   mean = (na * mean_a + nb * mean_b) / n,  M2 = M2a + M2b + delta^2 * na * nb / n.
// (Written symmetric in a and b, so both lanes of a butterfly pair compute the
// same bits and the whole warp ends with one mean.)
// (The shortcut var = E[x^2] - E[x]^2 would also be one pass, but it cancels
// catastrophically when |mean| >> std; Welford keeps the two-pass accuracy.)
//
// Why it is faster: x is read twice instead of three times, and each reduction
// is five register shuffles instead of a ladder of shared-memory round trips
// and block barriers.  The price: a very long row is walked by only 32 threads
// (layer_norm.cu keeps a block per row, with shuffle-based block reductions).
//
// Layout as in v1.  blockDim.x a multiple of 32; row = blockIdx.x *
// warps_per_block + warp.
#include "../common.cuh"

// (n, mean, m2) <- the Welford/Chan merge with (n2, mean2, m2_2).
template <typename T>
__device__ __forceinline__ void welford_merge(T& n, T& mean, T& m2, T n2, T mean2, T m2_2) {
  const T total = n + n2;
  if (total == T(0)) return;  // both empty
  const T delta = mean2 - mean;
  mean = (n * mean + n2 * mean2) / total;
  m2 = m2 + m2_2 + delta * delta * (n * n2 / total);
  n = total;
}

template <typename T>
__global__ void layer_norm_v3(const T* __restrict__ x, const T* __restrict__ w,
                              const T* __restrict__ b, T* __restrict__ y, T* __restrict__ mean,
                              T* __restrict__ rstd, int rows, int cols, T eps) {
  const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;  // uniform per warp, and there is no block barrier
  const T* xr = x + (long long)row * cols;
  T* yr = y + (long long)row * cols;

  T n = T(0), mu = T(0), m2 = T(0);
  for (int c = lane; c < cols; c += 32) welford_merge(n, mu, m2, T(1), xr[c], T(0));
  for (int off = 16; off > 0; off >>= 1) {
    const T n_o = __shfl_xor_sync(0xffffffffu, n, off);
    const T mu_o = __shfl_xor_sync(0xffffffffu, mu, off);
    const T m2_o = __shfl_xor_sync(0xffffffffu, m2, off);
    welford_merge(n, mu, m2, n_o, mu_o, m2_o);
  }
  const T rs = mtx::num<T>::rsqrt(m2 / T(cols) + eps);
  mtx::layer_norm_row_out(xr, w, b, yr, mu, rs, lane, 32, cols);
  if (lane == 0) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}
