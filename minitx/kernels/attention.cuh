// attention.cuh -- what both attention kernels files read alike (attention.cu on CUDA cores,
// attention_mma.cu on tensor cores): where an operand's rows lie, which keys a query may see,
// the dropout on the weights, and the backward's lse and delta of a tile's rows. The math and
// the masks' meaning are in attention.cu's header.
#pragma once

#include "common.cuh"
#include "philox.cuh"

// Where an operand's rows lie: row r of head-row bh (batch bh / H, head bh % H) starts at
// element (bh / H) * sb + (bh % H) * sh + r * sr, and its d elements are contiguous.
// [BH, L, d] contiguous is H = 1, (L * d, 0, d); a [B, L, H, d] array read as [B, H, L, d] is
// (L * H * d, d, H * d). Each kernel gets H and the strides of its operands, in the order of
// its array arguments, as one int64 array `layout` = [H, sb, sh, sr, sb, sh, sr, ...].
struct AttnRows {
  long long sb, sh, sr;
  __device__ __forceinline__ long long head(int bh, int H) const {
    return (long long)(bh / H) * sb + (long long)(bh % H) * sh;
  }
};

__device__ __forceinline__ AttnRows attn_rows(const long long* __restrict__ layout, int operand) {
  return AttnRows{layout[1 + 3 * operand], layout[2 + 3 * operand], layout[3 + 3 * operand]};
}

// Whether key kj exists and is not padding: the part of attn_allowed that does not depend on
// the query (a thread whose scores all share one key reads its mask byte once).
__device__ __forceinline__ bool attn_key_visible(int kj, int Lk, const unsigned char* kpm_row) {
  return kj < Lk && (!kpm_row || kpm_row[kj]);
}

// Whether query qi may see key kj, given attn_key_visible(kj) (qi in range, causal: kj <= qi).
__device__ __forceinline__ bool attn_query_sees(int qi, int kj, int Lq, int causal, bool key_visible) {
  return key_visible && qi < Lq && !(causal && kj > qi);
}

// Whether query qi may see key kj (both in range, causal: kj <= qi, and the key-padding row).
__device__ __forceinline__ bool attn_allowed(int qi, int kj, int Lq, int Lk,
                                             const unsigned char* kpm_row, int causal) {
  return attn_query_sees(qi, kj, Lq, causal, attn_key_visible(kj, Lk, kpm_row));
}

// NR rows of D columns from row0 of an [L, d] operand of S (rows sr apart), held in registers
// on their way to a shared tile: the constructor loads, put(f) hands f(r, c, x) every element
// (x in compute_t<S>, zero past L and d). Loading everything a thread owns before storing any of
// it keeps all its loads in flight at once: a loop that stored each element before loading the
// next waited out one memory latency per element, and so did every thread. A block of THREADS
// threads (the kernel's launch size, known when compiling, so the loops unroll) shares the
// elements 16 bytes at a time (a Pack: 4 floats, 8 bfloat16, 2 doubles); each Pack is one load
// where d and sr are whole Packs and the rows 16-byte aligned, else one load per element.
template <typename S, int NR, int D, int THREADS>
struct AttnTileFetch {
  static constexpr int P = mtx::Pack<S>::size, PACKS = D / P, N = NR * PACKS;
  static constexpr int K = (N + THREADS - 1) / THREADS;  // Packs per thread
  static_assert(D % P == 0, "a row is whole Packs");
  mtx::Pack<S> x[K];

  __device__ __forceinline__ AttnTileFetch(const S* __restrict__ src, int row0, int L, int d, long long sr) {
    const bool packed = d % P == 0 && sr % P == 0 && mtx::aligned16(src);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int e = threadIdx.x + k * THREADS, r = e / PACKS, c = (e - r * PACKS) * P;
      const bool in = e < N && row0 + r < L;
      const S* row = src + (long long)(row0 + r) * sr;
      if (packed && in && c < d) {
        x[k] = *reinterpret_cast<const mtx::Pack<S>*>(row + c);
      } else {
#pragma unroll
        for (int p = 0; p < P; ++p) x[k].v[p] = (in && c + p < d) ? row[c + p] : S(0.f);
      }
    }
  }

  template <typename Put>
  __device__ __forceinline__ void put(Put f) const {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int e = threadIdx.x + k * THREADS, r = e / PACKS, c = (e - r * PACKS) * P;
      if (e < N)
#pragma unroll
        for (int p = 0; p < P; ++p) f(r, c + p, mtx::compute_t<S>(x[k].v[p]));
    }
  }
};

// Rows of an NR-row tile to fetch at once: as many as keep a thread's Packs of one tile in
// flight at 2 or fewer (8 registers of a float tile): the tiles of wide rows over few threads
// would otherwise hold more registers than the compiler keeps without spilling (the
// tensor-core kernels' 64 threads at D = 128). NR halved until it fits: its users assert that
// the result divides NR (it does for the tiles' sizes, powers of two).
template <typename S, int NR, int D, int THREADS>
__host__ __device__ constexpr int attn_fetch_rows() {
  int rows = NR;
  while (rows > 1 && rows * (D / mtx::Pack<S>::size) > 2 * THREADS) rows /= 2;
  return rows;
}

// put(r, c, x) for every element of NR rows of D columns from row0 of an [L, d] operand (rows sr
// apart), x zero past L and d: AttnTileFetch a chunk of attn_fetch_rows at a time.
template <typename S, int NR, int D, int THREADS, typename Put>
__device__ __forceinline__ void attn_copy_rows(const S* __restrict__ src, int row0, int L, int d, long long sr,
                                               Put put) {
  constexpr int ROWS = attn_fetch_rows<S, NR, D, THREADS>();
  static_assert(NR % ROWS == 0, "whole chunks of rows");
#pragma unroll
  for (int r0 = 0; r0 < NR; r0 += ROWS) {
    const AttnTileFetch<S, ROWS, D, THREADS> rows(src, row0 + r0, L, d, sr);
    rows.put([&](int r, int c, mtx::compute_t<S> x) { put(r0 + r, c, x); });
  }
}

// Row of the key-padding mask for head-row bh (batch bh / heads), or NULL.
__device__ __forceinline__ const unsigned char* attn_kpm_row(const unsigned char* key_pad_mask,
                                                              int bh, int heads, int Lk) {
  return key_pad_mask ? key_pad_mask + (long long)(bh / heads) * Lk : nullptr;
}

// The dropout on the weights of one launch: z for element (row, j) of P [BH * Lq, Lk] is
// keep_scale or 0 by the Philox draw of flat index row * Lk + j; without dropout
// (threshold == 0) z = 1 and no number is drawn.
template <typename T>
struct AttnDropout {
  PhiloxPair key;
  unsigned int threshold;
  T keep_scale;
  __device__ __forceinline__ T z(long long row, int Lk, int j) const {
    if (threshold == 0) return T(1);
    return dropout_keep(row * Lk + j, key.seed, key.offset, threshold) ? keep_scale : T(0);
  }
};

// Stage lse and delta of the NQ query rows q0.. of head-row bh in shared
// memory (threads 0..NQ-1); rows past Lq get lse = -inf, so they count as
// fully masked.  The caller places the __syncthreads() before their use.
template <typename T, int NQ>
__device__ __forceinline__ void attn_load_row_stats(T* lse_s, T* delta_s, const T* __restrict__ lse,
                                                    const T* __restrict__ delta, int bh, int q0,
                                                    int Lq) {
  const int tid = threadIdx.x;
  if (tid < NQ) {
    const int qi = q0 + tid;
    lse_s[tid] = (qi < Lq) ? lse[(long long)bh * Lq + qi] : -mtx::num<T>::inf();
    delta_s[tid] = (qi < Lq) ? delta[(long long)bh * Lq + qi] : T(0);
  }
}
