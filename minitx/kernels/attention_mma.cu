// attention_mma.cu -- attention_forward of attention.cu on the tensor cores: the same
// contract (arguments, layout, masks, dropout, o and lse, fully masked and NaN rows; the math
// is in attention.cu's header), with the two products of a tile, S = Q K^T and O += P V, each
// a warp's mma.sync (mma.cuh) instead of every thread's multiply-adds.
//   S = mtx::bfloat16: operands bfloat16 (exact products), P rounded to bfloat16 for P V, as
//                      FlashAttention rounds it; every sum, max and statistic in float.
//   S = float:         operands TF32 (q, k, v and P rounded to 10 mantissa bits), sums in
//                      float: attention under --precision tf32, as its matrix products.
//   (No double: attention.cu computes it.)
//
// Thread mapping: a block of ATT_MMA_WARPS warps computes BQ = 16 * ATT_MMA_WARPS query rows
// of one head-row bh; warp w owns rows q0 + 16 w .. + 15 and lane 4 g + t holds, as mma.cuh's
// fragments lay out, the rows g and g + 8 of them: their scores at key columns 2 t, 2 t + 1
// of each 8-key group, their running max and sum, and their output columns 2 t, 2 t + 1 of
// each 8-column group. A row's max and sum are combined over the 4 lanes t of its quad.
// Keys come in tiles of BK, staged in shared memory as operands: Qs and Ks row-major, V
// transposed (Vt[c][j]: a B fragment of P V is then one load per register); each row padded
// by 16 bytes, which puts the 8 rows g of a fragment on different banks.
#include "attention.cuh"
#include "mma.cuh"

#if !defined(ATT_MMA_WARPS)
#error "compile attention_mma.cu with the -D defines of minitx/kernels/attention_mma.py (DEFINES)"
#endif

// The tile sizes for storage S and head-dim class D: BQ query rows, BK keys (16 for TF32 at
// D = 128, to keep the static shared memory under 48 KB), PAD operands of padding per row.
template <typename S, int D>
struct AttnMmaTiles {
  using operand = typename mtx::Mma<S>::operand;
  static constexpr int BQ = 16 * ATT_MMA_WARPS;
  static constexpr int BK = D * sizeof(operand) > 256 ? 16 : 32;
  static constexpr int PAD = 16 / sizeof(operand);
  static_assert(BK % mtx::Mma<S>::K == 0 && D % mtx::Mma<S>::K == 0, "whole mma steps over keys and columns");
};

// Copy NR rows from row0 of an [L, d] operand (rows sr apart) into a shared tile of operands:
// dst[r][c] (transposed: dst[c][r]) with zeros past L and d.
template <typename S, int NR, int D, bool transposed, int LD>
__device__ __forceinline__ void attn_mma_load(typename mtx::Mma<S>::operand* dst, const S* __restrict__ src,
                                              int row0, int L, int d, long long sr) {
  using M = mtx::Mma<S>;
  for (int e = threadIdx.x; e < NR * D; e += blockDim.x) {
    const int r = e / D, c = e - r * D, gr = row0 + r;
    const typename M::operand x = (gr < L && c < d) ? M::from_float(float(src[(long long)gr * sr + c])) : 0;
    dst[transposed ? c * LD + r : r * LD + c] = x;
  }
}

template <typename S, int D>
__global__ void __launch_bounds__(32 * ATT_MMA_WARPS)
    attention_mma_forward(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                          const unsigned char* __restrict__ key_pad_mask, S* __restrict__ o,
                          float* __restrict__ lse, int BH, int heads, int Lq, int Lk, int d, int causal,
                          float scale, const long long* __restrict__ layout,
                          const unsigned long long* __restrict__ philox, unsigned long long offset,
                          unsigned int threshold, float keep_scale) {
  using M = mtx::Mma<S>;
  using Tiles = AttnMmaTiles<S, D>;
  using operand = typename M::operand;
  constexpr int BQ = Tiles::BQ, BK = Tiles::BK, PAD = Tiles::PAD, K = M::K;
  constexpr int LDQ = D + PAD, LDV = BK + PAD;
  alignas(16) __shared__ operand Qs[BQ * LDQ];
  alignas(16) __shared__ operand Ks[BK * LDQ];
  alignas(16) __shared__ operand Vt[D * LDV];

  const int ntiles = (Lq + BQ - 1) / BQ;
  const int bh = blockIdx.x / ntiles;
  const int q0 = (blockIdx.x - bh * ntiles) * BQ;
  if (bh >= BH) return;  // uniform per block
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const float neg_inf = -mtx::num<float>::inf();
  const int H = (int)layout[0];
  const AttnRows qr = attn_rows(layout, 0), kr = attn_rows(layout, 1), vr = attn_rows(layout, 2),
                 orows = attn_rows(layout, 3);
  const S* kb = k + kr.head(bh, H);
  const S* vb = v + vr.head(bh, H);
  const unsigned char* kpm = attn_kpm_row(key_pad_mask, bh, heads, Lk);
  const AttnDropout<float> drop{philox_pair(philox, offset), threshold, keep_scale};

  attn_mma_load<S, BQ, D, false, LDQ>(Qs, q + qr.head(bh, H), q0, Lq, d, qr.sr);
  const int row0 = 16 * warp;            // this warp's first row in the tile
  const int qi[2] = {q0 + row0 + g, q0 + row0 + g + 8};  // this lane's two query rows
  float m[2] = {neg_inf, neg_inf}, l[2] = {0.f, 0.f};
  float acc[D / 8][4];  // O: row qi[r / 2], column 8 n + 2 t + r % 2
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[n][r] = 0.f;

  const int kend = causal ? mtx::imin(Lk, q0 + BQ) : Lk;
  for (int k0 = 0; k0 < kend; k0 += BK) {
    __syncthreads();  // the previous tile fully read (and Qs written)
    attn_mma_load<S, BK, D, false, LDQ>(Ks, kb, k0, Lk, d, kr.sr);
    attn_mma_load<S, BK, D, true, LDV>(Vt, vb, k0, Lk, d, vr.sr);
    __syncthreads();

    // s = Q K^T for this warp's 16 rows and the tile's BK keys: element r of s[n] is row
    // qi[r / 2], key k0 + 8 n + 2 t + r % 2
    float s[BK / 8][4];
#pragma unroll
    for (int n = 0; n < BK / 8; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) s[n][r] = 0.f;
#pragma unroll
    for (int c = 0; c < D; c += K) {
      unsigned int a[4];
      mtx::mma_load_a<S>(a, Qs, LDQ, row0, c);
#pragma unroll
      for (int n = 0; n < BK / 8; ++n) {
        unsigned int b[2];
        mtx::mma_load_b<S>(b, Ks, LDQ, 8 * n, c);
        mtx::mma_sync<S>(s[n], a, b);
      }
    }

    // online softmax of the lane's two rows (h = 0, 1), each row's max and sum over its quad
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = neg_inf;
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int kj = k0 + 8 * n + 2 * t + e;
          float& x = s[n][2 * h + e];
          x = attn_allowed(qi[h], kj, Lq, Lk, kpm, causal) ? scale * x : neg_inf;
          mx = mtx::num<float>::max(mx, x);
        }
      mx = mtx::num<float>::max(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = mtx::num<float>::max(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = mtx::num<float>::max(m[h], mx);
      float alpha = 1.f, psum = 0.f;
      if (m_new != neg_inf) alpha = mtx::num<float>::exp(m[h] - m_new);  // m[h] == -inf -> 0
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = s[n][2 * h + e];
          const float p = m_new != neg_inf ? mtx::num<float>::exp(x - m_new) : 0.f;  // x == -inf -> 0
          psum += p;  // the normaliser counts dropped weights too
          x = p * drop.z((long long)bh * Lq + qi[h], Lk, k0 + 8 * n + 2 * t + e);
        }
      psum += __shfl_xor_sync(0xffffffffu, psum, 1);
      psum += __shfl_xor_sync(0xffffffffu, psum, 2);
      m[h] = m_new;
      l[h] = l[h] * alpha + psum;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        acc[n][2 * h] *= alpha;
        acc[n][2 * h + 1] *= alpha;
      }
    }

    // O += P V: the scores' fragments become A fragments of P, K keys at a time
#pragma unroll
    for (int j = 0; j < BK; j += K) {
      unsigned int a[4];
      if constexpr (M::E == 2) {
        // bfloat16: keys j .. j + 15 are s[j / 8] (a0 row g, a1 row g + 8) and s[j / 8 + 1]
        // (a2, a3), already where the A fragment wants them, two to a register
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float* pr = &s[j / 8 + (r >> 1)][2 * (r & 1)];
          a[r] = (unsigned int)M::from_float(pr[0]) | ((unsigned int)M::from_float(pr[1]) << 16);
        }
      } else {
        // TF32: A wants row g's keys j + t and j + t + 4, which lanes 4 g + t / 2 and
        // 4 g + 2 + t / 2 hold (element t % 2 of their pair): fetched from them
        const int from = 4 * g + (t >> 1);
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float* pr = &s[j / 8][2 * (r & 1)];
          const float lo = __shfl_sync(0xffffffffu, pr[0], from + 2 * (r >> 1));
          const float hi = __shfl_sync(0xffffffffu, pr[1], from + 2 * (r >> 1));
          a[r] = M::from_float((t & 1) ? hi : lo);
        }
      }
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        unsigned int b[2];
        mtx::mma_load_b<S>(b, Vt, LDV, 8 * n, j);
        mtx::mma_sync<S>(acc[n], a, b);
      }
    }
  }

  S* ob = o + orows.head(bh, H);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (qi[h] >= Lq) continue;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = 8 * n + 2 * t + e;
        if (c < d) ob[(long long)qi[h] * orows.sr + c] = (l[h] == 0.f) ? 0.f : acc[n][2 * h + e] / l[h];
      }
    if (t == 0) lse[(long long)bh * Lq + qi[h]] = (l[h] == 0.f) ? neg_inf : m[h] + mtx::num<float>::log(l[h]);
  }
}
