// attention_mma.cu -- attention.cu's attention_forward, attention_backward_dkdv and
// attention_backward_dq on the tensor cores: the same contracts (arguments, layout, masks,
// dropout, outputs written with `=`, fully masked and NaN rows; the math is in attention.cu's
// header), with each product of a tile a warp's mma.sync (mma.cuh) instead of every thread's
// multiply-adds. The backward's delta stays attention.cu's attention_backward_delta.
//   S = mtx::bfloat16: operands bfloat16 (exact products); P (forward), P z and dS (backward)
//                      rounded to bfloat16 where they enter a product, as FlashAttention
//                      rounds them; every sum, max and statistic in float.
//   S = float:         operands TF32 (q, k, v, do, P, P z and dS rounded to 10 mantissa bits),
//                      sums in float: attention under --precision tf32, as its matrix products.
//   (No double: attention.cu computes it.)
//
// The products of a tile, Q, K, V, dO being its rows of q, k, v, do (queries i, keys j):
//   forward  S = Q K^T;  P = exp(scale S - m) by the online softmax;  O += P V
//   dk, dv   S^T = K Q^T,  dP^T = V dO^T;  per element P^T z and dS^T = P^T (z dP^T - delta);
//            dV += (P^T z) dO,  dK += dS^T Q
//   dq       S = Q K^T,  dP = dO V^T;  per element dS = P (z dP - delta);  dQ += dS K
// with P = exp(scale S - lse) from the forward's lse, z the dropout factors, and dk = scale dK,
// dq = scale dQ written once. A result enters the next product as its A operand: P, P^T z,
// dS^T and dS are rounded to operands there (mma_d_to_a). dk, dv and dq are separate kernels,
// as attention.cu's: no atomics, at the price of computing S and dP twice.
//
// Thread mapping: a block of ATT_MMA_WARPS warps owns BQ = 16 * ATT_MMA_WARPS rows of one
// head-row bh (queries for the forward and dq, keys for dk and dv); warp w owns rows
// 16 w .. 16 w + 15 of them and lane 4 g + t holds, as mma.cuh's fragments lay out, its rows
// g and g + 8: their elements at columns 2 t, 2 t + 1 of each 8-column group of every product
// (scores, dP, dS: one column per key, or per query in dk dv's transposed products; results:
// one column per head-dim column), and in the forward their running max and sum, combined over
// the 4 lanes t of the row's quad. The other side streams past in tiles (keys for the forward
// and dq, queries for dk and dv), one tile per iteration of the block's loop.
// Tiles are staged in shared memory as operands, each row padded by 16 bytes (the 8 rows g of
// a fragment then lie on different banks): Q, K, V and dO row-major, the forward's V
// transposed instead (Vt[c][j]: a B fragment of P V is one load per register). The backward's
// products that sum over the streamed rows (dV += (P^T z) dO, dK += dS^T Q, dQ += dS K) read
// their B operand from the row-major tile (mma_load_b_kn: one load per register for TF32, two
// for bfloat16), so one copy of each operand serves both of its products, and TF32 at D = 128
// fits the shared memory.
#include "attention.cuh"
#include "mma.cuh"

#if !defined(ATT_MMA_WARPS)
#error "compile attention_mma.cu with the -D defines of minitx/kernels/attention_mma.py (DEFINES)"
#endif
// Every kernel is __launch_bounds__(32 * ATT_MMA_WARPS, 1): one block a multiprocessor at least,
// so the compiler may give a thread up to 255 registers (its own choice, without the 1, spilled
// a few bytes at sm_80 once a tile's loads all went out together).

// The tile sizes for storage S and head-dim class D: a block owns BQ rows (16 per warp); the
// forward streams tiles of BK keys, the backward tiles of BT rows (queries for dk and dv, keys
// for dq); PAD operands of padding per row. TF32 at D = 128 takes smaller streamed tiles, to
// keep the static shared memory under 48 KB (the backward holds four [rows][D + PAD] tiles).
template <typename S, int D>
struct AttnMmaTiles {
  using operand = typename mtx::Mma<S>::operand;
  static constexpr int BQ = 16 * ATT_MMA_WARPS;
  static constexpr int BK = D * sizeof(operand) > 256 ? 16 : 32;
  static constexpr int BT = D * sizeof(operand) > 256 ? 8 : 32;
  static constexpr int PAD = 16 / sizeof(operand);
  static_assert(BK % mtx::Mma<S>::K == 0 && BT % mtx::Mma<S>::K == 0 && D % mtx::Mma<S>::K == 0,
                "whole mma steps over keys, queries and columns");
};

// Copy NR rows from row0 of an [L, d] operand (rows sr apart) into a shared tile of operands:
// dst[r][c] (transposed: dst[c][r]) with zeros past L and d (from_float(0) is the operand 0).
// Each chunk's loads go out together before its stores (attn_copy_rows, attention.cuh).
template <typename S, int NR, int D, bool transposed, int LD>
__device__ __forceinline__ void attn_mma_load(typename mtx::Mma<S>::operand* dst, const S* __restrict__ src,
                                              int row0, int L, int d, long long sr) {
  using M = mtx::Mma<S>;
  attn_copy_rows<S, NR, D, 32 * ATT_MMA_WARPS>(src, row0, L, d, sr, [&](int r, int c, float x) {
    dst[transposed ? c * LD + r : r * LD + c] = M::from_float(x);
  });
}

// dots[n] = A B^T for the warp's 16 rows row0 .. row0 + 15 of tile A and the N rows of tile B
// (both [rows][LD] of operands, D columns): element r of dots[n] is a_{row0 + g + 8 (r / 2)} .
// b_{8 n + 2 t + r % 2}, summed in float.
template <typename S, int D, int LD, int N>
__device__ __forceinline__ void attn_mma_dots(float (&dots)[N / 8][4], const typename mtx::Mma<S>::operand* A,
                                              int row0, const typename mtx::Mma<S>::operand* B) {
#pragma unroll
  for (int n = 0; n < N / 8; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) dots[n][r] = 0.f;
#pragma unroll
  for (int c = 0; c < D; c += mtx::Mma<S>::K) {
    unsigned int a[4];
    mtx::mma_load_a<S>(a, A, LD, row0, c);
#pragma unroll
    for (int n = 0; n < N / 8; ++n) {
      unsigned int b[2];
      mtx::mma_load_b<S>(b, B, LD, 8 * n, c);
      mtx::mma_sync<S>(dots[n], a, b);
    }
  }
}

// acc[n] += W X for the warp's 16 rows: W [16 x N] held as D fragments (w[n]: columns
// 8 n .. 8 n + 7), rounded to operands K columns at a time; X the N rows of a tile of operands
// with D columns, held as it is (X[j][c], rows LD apart) or transposed (Xt[c][j]). Element r of
// acc[n] is row g + 8 (r / 2), column 8 n + 2 t + r % 2.
template <typename S, int D, int N, bool transposed, int LD>
__device__ __forceinline__ void attn_mma_weights_times(float (&acc)[D / 8][4], const float (&w)[N / 8][4],
                                                       const typename mtx::Mma<S>::operand* X) {
#pragma unroll
  for (int j = 0; j < N; j += mtx::Mma<S>::K) {
    unsigned int a[4];
    mtx::mma_d_to_a<S>(a, w, j);
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      unsigned int b[2];
      if constexpr (transposed) mtx::mma_load_b<S>(b, X, LD, 8 * n, j);
      else mtx::mma_load_b_kn<S>(b, X, LD, j, 8 * n);
      mtx::mma_sync<S>(acc[n], a, b);
    }
  }
}

// A warp's [16 x D] float accumulator (D fragments), zeroed.
template <int D>
__device__ __forceinline__ void attn_mma_zero(float (&acc)[D / 8][4]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[n][r] = 0.f;
}

// Store this lane's part of a warp's [16 x D] result held as D fragments: its rows rows[h]
// (skipped from L on) of base, `sr` elements apart, columns c < d, element value(x, h) of each
// fragment element x (rounded once to S).
template <typename S, int D, typename Value>
__device__ __forceinline__ void attn_mma_store(S* base, long long sr, const int (&rows)[2], int L, int d,
                                               const float (&acc)[D / 8][4], Value value) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (rows[h] >= L) continue;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = 8 * n + 2 * t + e;
        if (c < d) base[(long long)rows[h] * sr + c] = value(acc[n][2 * h + e], h);
      }
  }
}

template <typename S, int D>
__global__ void __launch_bounds__(32 * ATT_MMA_WARPS, 1)
    attention_mma_forward(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                          const unsigned char* __restrict__ key_pad_mask, S* __restrict__ o,
                          float* __restrict__ lse, int BH, int heads, int Lq, int Lk, int d, int causal,
                          float scale, const long long* __restrict__ layout,
                          const unsigned long long* __restrict__ philox, unsigned long long offset,
                          unsigned int threshold, float keep_scale) {
  using Tiles = AttnMmaTiles<S, D>;
  using operand = typename mtx::Mma<S>::operand;
  constexpr int BQ = Tiles::BQ, BK = Tiles::BK, PAD = Tiles::PAD;
  constexpr int LDQ = D + PAD, LDV = BK + PAD;
  alignas(16) __shared__ operand Qs[BQ * LDQ];
  alignas(16) __shared__ operand Ks[BK * LDQ];
  alignas(16) __shared__ operand Vt[D * LDV];
  static_assert(sizeof(Qs) + sizeof(Ks) + sizeof(Vt) <= 48 * 1024, "static shared memory over 48 KB");

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
  attn_mma_zero<D>(acc);

  const int kend = causal ? mtx::imin(Lk, q0 + BQ) : Lk;
  for (int k0 = 0; k0 < kend; k0 += BK) {
    __syncthreads();  // the previous tile fully read (and Qs written)
    attn_mma_load<S, BK, D, false, LDQ>(Ks, kb, k0, Lk, d, kr.sr);
    attn_mma_load<S, BK, D, true, LDV>(Vt, vb, k0, Lk, d, vr.sr);
    __syncthreads();

    // s = Q K^T for this warp's 16 rows and the tile's BK keys: element r of s[n] is row
    // qi[r / 2], key k0 + 8 n + 2 t + r % 2
    float s[BK / 8][4];
    attn_mma_dots<S, D, LDQ, BK>(s, Qs, row0, Ks);

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

    // O += P V: the weights' fragments become A fragments of P, K keys at a time
    attn_mma_weights_times<S, D, BK, true, LDV>(acc, s, Vt);
  }

  attn_mma_store<S, D>(o + orows.head(bh, H), orows.sr, qi, Lq, d, acc,
                       [&](float x, int h) { return (l[h] == 0.f) ? 0.f : x / l[h]; });
#pragma unroll
  for (int h = 0; h < 2; ++h)
    if (t == 0 && qi[h] < Lq)
      lse[(long long)bh * Lq + qi[h]] = (l[h] == 0.f) ? neg_inf : m[h] + mtx::num<float>::log(l[h]);
}

// What one element (query qi, key kj) of the backward needs besides its two dot products: the
// masks, the scale and the dropout of the launch.
struct AttnMmaElement {
  int bh, Lq, Lk, causal;
  const unsigned char* kpm;
  float scale;
  AttnDropout<float> drop;

  // s = q_i . k_j becomes P_ij z_ij and dp = do_i . v_j becomes dS_ij = P_ij (z_ij dp - delta_i),
  // P_ij = exp(scale s - lse_i); both 0 where qi may not see kj or its row is fully masked
  // (lse_i == -inf), as in attention.cu's attn_recompute. (Written twice on purpose: there the dot
  // products are computed inside the branch, only for live elements, and ptxas allocates both
  // kernels' registers differently, spilling, when they share one helper.)
  __device__ __forceinline__ void to_gradients(float& s, float& dp, float lse_i, float delta_i, int qi,
                                               int kj) const {
    float pz = 0.f, ds = 0.f;
    if (lse_i != -mtx::num<float>::inf() && attn_allowed(qi, kj, Lq, Lk, kpm, causal)) {
      const float p = mtx::num<float>::exp(scale * s - lse_i);
      const float z = drop.z((long long)bh * Lq + qi, Lk, kj);
      pz = p * z;
      ds = p * (z * dp - delta_i);
    }
    s = pz;
    dp = ds;
  }
};

// dk_j = scale sum_i dS_ij q_i and dv_j = sum_i P_ij z_ij do_i for the BQ keys of a block; the
// warp computes the transposed products (its keys are the rows of S^T and dP^T, the A side).
template <typename S, int D>
__global__ void __launch_bounds__(32 * ATT_MMA_WARPS, 1)
    attention_mma_backward_dkdv(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                                const unsigned char* __restrict__ key_pad_mask, const S* __restrict__ dout,
                                const float* __restrict__ lse, const float* __restrict__ delta,
                                S* __restrict__ dk, S* __restrict__ dv, int BH, int heads, int Lq, int Lk, int d,
                                int causal, float scale, const long long* __restrict__ layout,
                                const unsigned long long* __restrict__ philox, unsigned long long offset,
                                unsigned int threshold, float keep_scale) {
  using Tiles = AttnMmaTiles<S, D>;
  using operand = typename mtx::Mma<S>::operand;
  constexpr int BK = Tiles::BQ, BQ = Tiles::BT;  // keys of the block, queries per tile
  constexpr int LD = D + Tiles::PAD;
  alignas(16) __shared__ operand Ks[BK * LD];
  alignas(16) __shared__ operand Vs[BK * LD];
  alignas(16) __shared__ operand Qs[BQ * LD];
  alignas(16) __shared__ operand dOs[BQ * LD];
  __shared__ float lse_s[BQ];
  __shared__ float delta_s[BQ];
  static_assert(sizeof(Ks) + sizeof(Vs) + sizeof(Qs) + sizeof(dOs) + sizeof(lse_s) + sizeof(delta_s) <= 48 * 1024,
                "static shared memory over 48 KB");

  const int ntiles = (Lk + BK - 1) / BK;
  const int bh = blockIdx.x / ntiles;
  const int k0 = (blockIdx.x - bh * ntiles) * BK;
  if (bh >= BH) return;  // uniform per block
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int H = (int)layout[0];  // layout: q, k, v, do, dk, dv
  const AttnRows qr = attn_rows(layout, 0), kr = attn_rows(layout, 1), vr = attn_rows(layout, 2),
                 dor = attn_rows(layout, 3), dkr = attn_rows(layout, 4), dvr = attn_rows(layout, 5);
  const S* qb = q + qr.head(bh, H);
  const S* dob = dout + dor.head(bh, H);
  const AttnMmaElement element{bh, Lq, Lk, causal, attn_kpm_row(key_pad_mask, bh, heads, Lk), scale,
                               {philox_pair(philox, offset), threshold, keep_scale}};

  // The block's keys, staged once; each query tile reads their A fragments from here again (not
  // kept in registers: TF32's at D = 128 would not fit beside dK and dV), as the forward reads Q's.
  attn_mma_load<S, BK, D, false, LD>(Ks, k + kr.head(bh, H), k0, Lk, d, kr.sr);
  attn_mma_load<S, BK, D, false, LD>(Vs, v + vr.head(bh, H), k0, Lk, d, vr.sr);
  const int row0 = 16 * warp;                            // this warp's first key in the tile
  const int kj[2] = {k0 + row0 + g, k0 + row0 + g + 8};  // this lane's two keys
  float acc_dk[D / 8][4], acc_dv[D / 8][4];  // dK, dV: key kj[r / 2], column 8 n + 2 t + r % 2
  attn_mma_zero<D>(acc_dk);
  attn_mma_zero<D>(acc_dv);

  // Causal: queries before k0 see none of these keys.
  for (int q0 = causal ? k0 : 0; q0 < Lq; q0 += BQ) {
    __syncthreads();  // the previous tile fully read (and Ks, Vs written)
    attn_mma_load<S, BQ, D, false, LD>(Qs, qb, q0, Lq, d, qr.sr);
    attn_mma_load<S, BQ, D, false, LD>(dOs, dob, q0, Lq, d, dor.sr);
    attn_load_row_stats<float, BQ>(lse_s, delta_s, lse, delta, bh, q0, Lq);
    __syncthreads();

    // sT = K Q^T, dpT = V dO^T for this warp's 16 keys and the tile's BQ queries: element r of
    // sT[n] is key kj[r / 2], query q0 + 8 n + 2 t + r % 2; then sT becomes P^T z, dpT dS^T
    float sT[BQ / 8][4], dpT[BQ / 8][4];
    attn_mma_dots<S, D, LD, BQ>(sT, Ks, row0, Qs);
    attn_mma_dots<S, D, LD, BQ>(dpT, Vs, row0, dOs);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int n = 0; n < BQ / 8; ++n) {
        const int i = 8 * n + 2 * t + (r & 1);
        element.to_gradients(sT[n][r], dpT[n][r], lse_s[i], delta_s[i], q0 + i, kj[r >> 1]);
      }

    // dV += (P^T z) dO, dK += dS^T Q: the fragments become A fragments, K queries at a time
    attn_mma_weights_times<S, D, BQ, false, LD>(acc_dv, sT, dOs);
    attn_mma_weights_times<S, D, BQ, false, LD>(acc_dk, dpT, Qs);
  }

  attn_mma_store<S, D>(dk + dkr.head(bh, H), dkr.sr, kj, Lk, d, acc_dk, [&](float x, int) { return scale * x; });
  attn_mma_store<S, D>(dv + dvr.head(bh, H), dvr.sr, kj, Lk, d, acc_dv, [](float x, int) { return x; });
}

// dq_i = scale sum_j dS_ij k_j for the BQ queries of a block.
template <typename S, int D>
__global__ void __launch_bounds__(32 * ATT_MMA_WARPS, 1)
    attention_mma_backward_dq(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                              const unsigned char* __restrict__ key_pad_mask, const S* __restrict__ dout,
                              const float* __restrict__ lse, const float* __restrict__ delta, S* __restrict__ dq,
                              int BH, int heads, int Lq, int Lk, int d, int causal, float scale,
                              const long long* __restrict__ layout, const unsigned long long* __restrict__ philox,
                              unsigned long long offset, unsigned int threshold, float keep_scale) {
  using Tiles = AttnMmaTiles<S, D>;
  using operand = typename mtx::Mma<S>::operand;
  constexpr int BQ = Tiles::BQ, BK = Tiles::BT;  // queries of the block, keys per tile
  constexpr int LD = D + Tiles::PAD;
  alignas(16) __shared__ operand Qs[BQ * LD];
  alignas(16) __shared__ operand dOs[BQ * LD];
  alignas(16) __shared__ operand Ks[BK * LD];
  alignas(16) __shared__ operand Vs[BK * LD];
  static_assert(sizeof(Qs) + sizeof(dOs) + sizeof(Ks) + sizeof(Vs) <= 48 * 1024, "static shared memory over 48 KB");

  const int ntiles = (Lq + BQ - 1) / BQ;
  const int bh = blockIdx.x / ntiles;
  const int q0 = (blockIdx.x - bh * ntiles) * BQ;
  if (bh >= BH) return;  // uniform per block
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int H = (int)layout[0];  // layout: q, k, v, do, dq
  const AttnRows qr = attn_rows(layout, 0), kr = attn_rows(layout, 1), vr = attn_rows(layout, 2),
                 dor = attn_rows(layout, 3), dqr = attn_rows(layout, 4);
  const S* kb = k + kr.head(bh, H);
  const S* vb = v + vr.head(bh, H);
  const AttnMmaElement element{bh, Lq, Lk, causal, attn_kpm_row(key_pad_mask, bh, heads, Lk), scale,
                               {philox_pair(philox, offset), threshold, keep_scale}};

  attn_mma_load<S, BQ, D, false, LD>(Qs, q + qr.head(bh, H), q0, Lq, d, qr.sr);
  attn_mma_load<S, BQ, D, false, LD>(dOs, dout + dor.head(bh, H), q0, Lq, d, dor.sr);
  const int row0 = 16 * warp;                            // this warp's first row in the tile
  const int qi[2] = {q0 + row0 + g, q0 + row0 + g + 8};  // this lane's two query rows
  float lse_r[2], delta_r[2];  // rows past Lq count as fully masked
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lse_r[h] = qi[h] < Lq ? lse[(long long)bh * Lq + qi[h]] : -mtx::num<float>::inf();
    delta_r[h] = qi[h] < Lq ? delta[(long long)bh * Lq + qi[h]] : 0.f;
  }
  float acc[D / 8][4];  // dQ: row qi[r / 2], column 8 n + 2 t + r % 2
  attn_mma_zero<D>(acc);

  const int kend = causal ? mtx::imin(Lk, q0 + BQ) : Lk;
  for (int k0 = 0; k0 < kend; k0 += BK) {
    __syncthreads();  // the previous tile fully read (and Qs, dOs written)
    attn_mma_load<S, BK, D, false, LD>(Ks, kb, k0, Lk, d, kr.sr);
    attn_mma_load<S, BK, D, false, LD>(Vs, vb, k0, Lk, d, vr.sr);
    __syncthreads();

    // s = Q K^T, dp = dO V^T for this warp's 16 rows and the tile's BK keys: element r of s[n]
    // is row qi[r / 2], key k0 + 8 n + 2 t + r % 2; then dp becomes dS (and s P z, unused)
    float s[BK / 8][4], dp[BK / 8][4];
    attn_mma_dots<S, D, LD, BK>(s, Qs, row0, Ks);
    attn_mma_dots<S, D, LD, BK>(dp, dOs, row0, Vs);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int n = 0; n < BK / 8; ++n) {
        const int h = r >> 1;
        element.to_gradients(s[n][r], dp[n][r], lse_r[h], delta_r[h], qi[h], k0 + 8 * n + 2 * t + (r & 1));
      }

    // dQ += dS K: the fragments of dS become A fragments, K keys at a time
    attn_mma_weights_times<S, D, BK, false, LD>(acc, dp, Ks);
  }

  attn_mma_store<S, D>(dq + dqr.head(bh, H), dqr.sr, qi, Lq, d, acc, [&](float x, int) { return scale * x; });
}
