// probe_mma.cu -- one warp's tensor-core products through mma.cuh, on small integers that every
// operand type holds exactly and every sum adds exactly, so the CPU build and a GPU must both
// give the exact products: a fragment laid out wrongly shows as a wrong element
// (tests/kernels/test_mma_fragments.py). T is a placeholder: the harness instantiates every
// probe for float and double.
#include "../../minitx/kernels/mma.cuh"

// a [16][K], b [K][16], c [K][8] row-major, K = Mma<S>::K. Writes
//   d [16][16] = a b  (B fragments read from b transposed: mma_load_b)
//   f [16][16] = a b  (B fragments read from b as it is: mma_load_b_kn)
//   e [16][8]  = d[:, :K] c  (d's result fragments turned into an A fragment: mma_d_to_a)
template <typename S>
__device__ __forceinline__ void probe_mma_body(const float* a, const float* b, const float* c, float* d_out,
                                               float* e_out, float* f_out) {
  using M = mtx::Mma<S>;
  using operand = typename M::operand;
  constexpr int K = M::K;
  alignas(16) __shared__ operand As[16 * K], Bt[16 * K], Bkn[K * 16], Ct[8 * K];  // pairs read as 32 bits
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int i = lane; i < 16 * K; i += 32) {
    As[i] = M::from_float(a[i]);
    const int k = i / 16, n = i % 16;  // b[k][n]
    Bt[n * K + k] = M::from_float(b[i]);
    Bkn[i] = M::from_float(b[i]);
  }
  for (int i = lane; i < 8 * K; i += 32) Ct[(i % 8) * K + i / 8] = M::from_float(c[i]);
  __syncwarp();
  float d[2][4] = {}, f[2][4] = {}, e[4] = {};
  unsigned int af[4], bf[2];
  mtx::mma_load_a<S>(af, As, K, 0, 0);
  for (int n = 0; n < 2; ++n) {
    mtx::mma_load_b<S>(bf, Bt, K, 8 * n, 0);
    mtx::mma_sync<S>(d[n], af, bf);
    mtx::mma_load_b_kn<S>(bf, Bkn, 16, 0, 8 * n);
    mtx::mma_sync<S>(f[n], af, bf);
  }
  mtx::mma_d_to_a<S, 2>(af, d, 0);
  mtx::mma_load_b<S>(bf, Ct, K, 0, 0);
  mtx::mma_sync<S>(e, af, bf);
  for (int n = 0; n < 2; ++n)
    for (int r = 0; r < 4; ++r) {
      const int row = g + 8 * (r >> 1), col = 8 * n + 2 * t + (r & 1);
      d_out[row * 16 + col] = d[n][r];
      f_out[row * 16 + col] = f[n][r];
    }
  for (int r = 0; r < 4; ++r) e_out[(g + 8 * (r >> 1)) * 8 + 2 * t + (r & 1)] = e[r];
}

template <typename T>
__global__ void probe_mma_bf16(const float* a, const float* b, const float* c, float* d, float* e, float* f) {
  probe_mma_body<mtx::bfloat16>(a, b, c, d, e, f);
}

template <typename T>
__global__ void probe_mma_tf32(const float* a, const float* b, const float* c, float* d, float* e, float* f) {
  probe_mma_body<float>(a, b, c, d, e, f);
}
