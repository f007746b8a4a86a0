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

// Whether query qi may see key kj (both in range, causal: kj <= qi, and the key-padding row).
__device__ __forceinline__ bool attn_allowed(int qi, int kj, int Lq, int Lk,
                                             const unsigned char* kpm_row, int causal) {
  if (qi >= Lq || kj >= Lk) return false;
  if (causal && kj > qi) return false;
  if (kpm_row && !kpm_row[kj]) return false;
  return true;
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
