// philox.cuh -- the counter-based random numbers of minitx's dropout: Philox-4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), written out below.
//
// Element i of a dropout mask drawn from (seed, offset) takes output word i % 4 of
//   counter = (g_lo, g_hi, offset_lo, offset_hi) with g = i / 4,   key = (seed_lo, seed_hi),
// and is KEPT iff (word >> 8) >= threshold, threshold = ceil(p * 2^24) from the host: the keep
// probability is 1 - threshold / 2^24, the same for float and double. A kernel can ask for
// any single element (dropout_keep), so the attention kernels, which never store the weights
// P, drop exactly the elements dropout.cu would drop in a stored P. Included by dropout.cu and
// attention.cu; tests/kernels/_reference.py computes the same bits in NumPy.
#pragma once

struct PhiloxOut {
  unsigned int v[4];
};

__device__ __forceinline__ PhiloxOut philox4x32_10(unsigned int c0, unsigned int c1,
                                                   unsigned int c2, unsigned int c3,
                                                   unsigned int k0, unsigned int k1) {
  const unsigned int M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  const unsigned int W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += W0;
      k1 += W1;
    }
    const unsigned int hi0 = __umulhi(M0, c0), lo0 = M0 * c0;
    const unsigned int hi1 = __umulhi(M1, c2), lo1 = M1 * c2;
    const unsigned int n0 = hi1 ^ c1 ^ k0;
    const unsigned int n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  PhiloxOut out;
  out.v[0] = c0;
  out.v[1] = c1;
  out.v[2] = c2;
  out.v[3] = c3;
  return out;
}

__device__ __forceinline__ PhiloxOut dropout_bits(long long group, unsigned long long seed,
                                                  unsigned long long offset) {
  const unsigned long long g = (unsigned long long)group;
  return philox4x32_10((unsigned int)g, (unsigned int)(g >> 32), (unsigned int)offset,
                       (unsigned int)(offset >> 32), (unsigned int)seed,
                       (unsigned int)(seed >> 32));
}

// Whether flat element i of the mask drawn from (seed, offset) is kept (one Philox call:
// kernels that visit 4 consecutive elements at once call dropout_bits themselves).
__device__ __forceinline__ bool dropout_keep(long long i, unsigned long long seed,
                                             unsigned long long offset, unsigned int threshold) {
  return (dropout_bits(i >> 2, seed, offset).v[i & 3] >> 8) >= threshold;
}

// Where a launch finds its (seed, offset): seed = philox[0], offset = philox[1] + call, with
// philox two words of device memory and call the launch's own offset (a kernel argument). A
// captured CUDA graph bakes kernel arguments in but reads memory afresh at every replay: moving
// philox[1] on between replays gives every replay fresh masks, and backward, which passes the
// same philox and call, regenerates its forward's mask.
struct PhiloxPair {
  unsigned long long seed, offset;
};

__device__ __forceinline__ PhiloxPair philox_pair(const unsigned long long* __restrict__ philox,
                                                  unsigned long long call) {
  return PhiloxPair{philox[0], philox[1] + call};
}
