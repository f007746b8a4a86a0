// attention.cu -- fused scaled-dot-product attention, forward and backward
// (FlashAttention-2 style: no [Lq, Lk] matrix is ever stored in global memory).
//
// Shapes: q, o, do, dq [BH, Lq, d];  k, v, dk, dv [BH, Lk, d]  of S (float, double or bfloat16),
//   each laid out as its `layout` entries say (AttnRows below: the head dim contiguous, rows
//   and heads at any stride, so [B, L, H, d] arrays go in and come out without a copy);
//   lse, delta [BH, Lq] of T = compute_t<S> (float for bfloat16), the type every tile in
//   shared memory (so bfloat16 uses float's tiles), every score and every sum is held in;
//   outputs are rounded to S once.
//   key_pad_mask: NULL or uint8 [B, Lk] with BH = B * heads; batch of row bh is
//                 bh / heads; nonzero = the key may be attended to.
//   causal: query i may see key j only if j <= i (top-left aligned, as
//           torch.nn.functional.scaled_dot_product_attention(is_causal=True)).
//   d <= D, the head-dim class the kernel is instantiated for (32, 64 or 128: attention.py's
//   HEAD_DIMS; the launcher takes the smallest D >= d); any Lq, Lk (tiled).
//
// Math (one query row i of head bh, allowed key set A_i):
//   s_ij  = scale * q_i . k_j                  for j in A_i, -inf otherwise
//   lse_i = log sum_{j in A_i} exp(s_ij)
//   o_i   = sum_j exp(s_ij - lse_i) v_j
//   Fully masked row (A_i empty): o_i = 0 and lse_i = -inf.  The backward treats
//   lse_i == -inf as "P row is zero", so such rows give zero gradients, not NaN.
//   A NaN score makes its row's o_i and lse_i NaN (the running max propagates
//   NaN, and only l_i == 0 means "fully masked").
//   Dropout on the weights (threshold != 0): o_i = sum_j exp(s_ij - lse_i) z_ij v_j, where
//   z_ij = keep_scale if element (bh, i, j) of P [BH, Lq, Lk] is kept by the Philox draw of
//   its flat index (bh * Lq + i) * Lk + j (philox.cuh), else 0 -- the element dropout.cu
//   would drop in a stored P, so the fused and the unfused paths drop the same weights.
//   lse_i stays the log-normaliser of the undropped row.
//   Backward (P recomputed from q, k, lse; z regenerated):
//   delta_i = sum_c do_ic * o_ic              (= sum_j P_ij z_ij (do_i . v_j), with dropout too)
//   P_ij = exp(s_ij - lse_i),  dP_ij = z_ij (do_i . v_j),  dS_ij = P_ij * (dP_ij - delta_i)
//   dv_j = sum_i P_ij z_ij do_i,  dk_j = scale * sum_i dS_ij q_i,  dq_i = scale * sum_j dS_ij k_j
//
// Head-dim class D: every shared tile is [rows][D + V] of T, its columns d..D-1 zero, and
// every loop over the head dim runs D steps known when compiling: the zeros add nothing to a
// dot product, and a head of 64 gets tiles half the size of 128's, so twice the blocks fit on
// a multiprocessor. V = 16 / sizeof(T) (4 floats, 2 doubles) is what one 16-byte load reads:
// rows and columns are read V at a time (one shared-memory instruction where one a column took
// two per multiply-add), and the V columns of padding keep each row 16-byte aligned and put the
// rows that 8 threads read at once on 8 different groups of 4 banks.
//
// Thread mapping: blocks of ATT_THREADS threads. In the phases that accumulate output rows the
// block is G = ATT_THREADS / (D / V) groups of D / V threads: thread t owns the V columns
// c .. c + V - 1, c = (t % (D / V)) * V, of the rows (or keys) g, g + G, g + 2G, ... of its
// tile, g = t / (D / V) (threads with c >= d idle there). Each output element is summed by one
// thread in one order, whatever D and G are. In the phases that compute a tile's scores (and the
// backward's dP), thread t takes the pairs (i, j) = ((t + r * ATT_THREADS) / NK, t % NK), r = 0,
// 1, ...: one key, several query rows, so each key row read from shared memory serves all of
// them (AttnPairs). Tiles come in from global memory with every load of a thread issued before
// its first store (attention.cuh's AttnTileFetch).
//   attention_forward        block = (bh, tile of BQ query rows); loops over key
//                            tiles of BK keys staged in shared memory; online
//                            softmax per row (one warp per row, BK <= 32 so a
//                            lane holds one score).  Writes o and lse with `=`.
//   attention_backward_delta one warp per (bh, i) row; writes delta with `=`.
//   attention_backward_dkdv  block = (bh, tile of BKB keys); loops over query
//                            tiles, recomputes P, z and dS; accumulates dk, dv in
//                            registers and writes them once with `=`.
//   attention_backward_dq    block = (bh, tile of BQB queries); loops over key
//                            tiles; writes dq with `=`.  (Separate kernel instead
//                            of atomics: deterministic, at the price of
//                            recomputing S.)
//   attention_backward_onepass  for Lk <= BK1 (and D <= 64): block = bh, all its keys
//                            in one tile, so each query tile's dS K is its whole dq:
//                            dk, dv and dq from one recompute, in one launch, the
//                            same bits as the two kernels above for finite inputs.
// Tile sizes keep static shared memory under 48 KB for both float and double.
#include "attention.cuh"

// The sizes come from minitx/kernels/attention.py (DEFINES), which every build passes as -D
// options (CuPy's NVRTC, the CPU g++ build, the nvcc test): the launcher computes its grids
// from the same numbers.
#if !defined(ATT_THREADS) || !defined(ATT_MIN_BLOCKS) || !defined(ATT_FLOAT_BQ) || !defined(ATT_DOUBLE_BQ)
#error "compile attention.cu with the -D defines of minitx/kernels/attention.py (DEFINES)"
#endif
// ATT_MIN_BLOCKS = 0: the compiler chooses each kernel's registers (a minimum of 1 block would
// let it take up to 255 a thread).
#if ATT_MIN_BLOCKS > 0
#define ATT_LAUNCH_BOUNDS __launch_bounds__(ATT_THREADS, ATT_MIN_BLOCKS)
#else
#define ATT_LAUNCH_BOUNDS __launch_bounds__(ATT_THREADS)
#endif

template <typename T>
struct AttnTiles;
template <>
struct AttnTiles<float> {
  static constexpr int BQ = ATT_FLOAT_BQ, BK = ATT_FLOAT_BK;      // forward
  static constexpr int BQB = ATT_FLOAT_BQB, BKB = ATT_FLOAT_BKB;  // backward
  static constexpr int BK1 = ATT_FLOAT_BK1;                         // the one-pass backward's keys
};
template <>
struct AttnTiles<double> {
  static constexpr int BQ = ATT_DOUBLE_BQ, BK = ATT_DOUBLE_BK;
  static constexpr int BQB = ATT_DOUBLE_BQB, BKB = ATT_DOUBLE_BKB;
  static constexpr int BK1 = ATT_DOUBLE_BK1;
};
static_assert(AttnTiles<float>::BK <= 32 && AttnTiles<double>::BK <= 32,
              "the forward's online softmax holds one score per warp lane");

// V elements of T read from shared memory at once (one 16-byte load), and the row length of a
// tile of head-dim class D: D columns and V of padding (see the header).
template <typename T>
struct AttnVec {
  static constexpr int V = 16 / sizeof(T);
  struct alignas(16) type {
    T x[V];
  };
};
template <typename T, int D>
constexpr int attn_row = D + AttnVec<T>::V;

// The V columns from column c of a tile row (c a multiple of V).
template <typename T>
__device__ __forceinline__ typename AttnVec<T>::type attn_vec(const T* row, int c) {
  return *reinterpret_cast<const typename AttnVec<T>::type*>(row + c);
}

// The first of the V columns and the first row of thread t in the phases that accumulate
// output rows; its rows are g, g + G, ...: G groups of D / V threads (see the header).
template <typename T, int D>
struct AttnColumns {
  static constexpr int V = AttnVec<T>::V, G = ATT_THREADS / (D / V);
  static_assert(D % V == 0 && ATT_THREADS % (D / V) == 0, "the threads split into whole groups of D / V");
  static_assert(AttnTiles<T>::BQ % G == 0 && AttnTiles<T>::BQB % G == 0 && AttnTiles<T>::BKB % G == 0,
                "every group owns the same number of a tile's rows");
  int c, g;
  __device__ __forceinline__ AttnColumns() : c((threadIdx.x % (D / V)) * V), g(threadIdx.x / (D / V)) {}
};

// Copy NR rows (starting at row0 of an [L, d] matrix of S whose rows are `sr` apart) into a
// padded shared tile [NR][D + V] of the compute type; rows past L and columns past d are
// zero-filled, so that 0 * tile stays finite and the columns past d add nothing. Each chunk's
// loads go out together before any of its stores (attn_copy_rows, attention.cuh).
template <typename S, int NR, int D>
__device__ __forceinline__ void attn_load_tile(mtx::compute_t<S> (*dst)[attn_row<mtx::compute_t<S>, D>],
                                               const S* __restrict__ src, int row0, int L, int d,
                                               long long sr) {
  attn_copy_rows<S, NR, D, ATT_THREADS>(src, row0, L, d, sr,
                                        [&](int r, int c, mtx::compute_t<S> x) { dst[r][c] = x; });
}

// Two such tiles of the same rows (k and v, or q and do), both tiles' loads of a chunk in flight
// before either is stored.
template <typename S, int NR, int D>
__device__ __forceinline__ void attn_load_tiles(mtx::compute_t<S> (*dst_a)[attn_row<mtx::compute_t<S>, D>],
                                                const S* __restrict__ src_a, long long sr_a,
                                                mtx::compute_t<S> (*dst_b)[attn_row<mtx::compute_t<S>, D>],
                                                const S* __restrict__ src_b, long long sr_b, int row0,
                                                int L, int d) {
  constexpr int ROWS = attn_fetch_rows<S, NR, D, ATT_THREADS>();
  static_assert(NR % ROWS == 0, "whole chunks of rows");
#pragma unroll
  for (int r0 = 0; r0 < NR; r0 += ROWS) {
    const AttnTileFetch<S, ROWS, D, ATT_THREADS> a(src_a, row0 + r0, L, d, sr_a), b(src_b, row0 + r0, L, d, sr_b);
    a.put([&](int r, int c, mtx::compute_t<S> x) { dst_a[r0 + r][c] = x; });
    b.put([&](int r, int c, mtx::compute_t<S> x) { dst_b[r0 + r][c] = x; });
  }
}

// acc[r][e] += W[i][j] * B[j][my.c + e] for thread my's rows i = my.g + r G, over the NK keys j
// in order: rows of a score tile times V columns of a key tile (P V in the forward, dS K for
// dq).
template <typename T, int D, int NR, int NK>
__device__ __forceinline__ void attn_rows_times_tile(T (&acc)[NR / AttnColumns<T, D>::G][AttnVec<T>::V],
                                                     const T (*W)[NK + 1], const T (*B)[attn_row<T, D>],
                                                     const AttnColumns<T, D>& my) {
  constexpr int G = AttnColumns<T, D>::G, V = AttnVec<T>::V;
#pragma unroll
  for (int j = 0; j < NK; ++j) {
    const auto bj = attn_vec(B[j], my.c);
#pragma unroll
    for (int r = 0; r < NR / G; ++r) {
      const T w = W[my.g + r * G][j];
#pragma unroll
      for (int e = 0; e < V; ++e) acc[r][e] += w * bj.x[e];
    }
  }
}

// out[i][my.c + e] = scale * acc[r][e] for thread my's rows i = row0 + my.g + r G of a head's
// [L, d] output (rows `sr` apart), leaving rows past L and columns past d alone: how each
// backward kernel writes the gradients it accumulated in registers, once, with `=`.
template <typename S, int D, int NR>
__device__ __forceinline__ void attn_store_rows(
    S* __restrict__ out, long long sr, int row0, int L, int d,
    const mtx::compute_t<S> (&acc)[NR / AttnColumns<mtx::compute_t<S>, D>::G][AttnVec<mtx::compute_t<S>>::V],
    mtx::compute_t<S> scale, const AttnColumns<mtx::compute_t<S>, D>& my) {
  constexpr int G = AttnColumns<mtx::compute_t<S>, D>::G, V = AttnVec<mtx::compute_t<S>>::V;
#pragma unroll
  for (int r = 0; r < NR / G; ++r) {
    const int i = row0 + my.g + r * G;
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (i < L && my.c + e < d) out[(long long)i * sr + my.c + e] = scale * acc[r][e];
  }
}

// The (i, j) pairs of an NQ x NK score tile that thread t computes: e = t + r * ATT_THREADS for
// r = 0, 1, ..., i = e / NK, j = e % NK. As NK divides ATT_THREADS, the thread's key j is the same
// for every r and its rows are i0 + r * STEP: one key row, read once, serves R dot products. (A
// dot product reads 16 bytes of each row per V multiply-adds; a warp's 32 keys are 32 rows, four
// times the shared-memory transactions of its one broadcast query row.)
template <int NQ, int NK>
struct AttnPairs {
  static_assert(ATT_THREADS % NK == 0, "a thread's pairs share one key");
  static constexpr int STEP = ATT_THREADS / NK;   // rows between a thread's pairs
  static constexpr int R = (NQ + STEP - 1) / STEP;  // pairs per thread; row(r) >= NQ: none
  int i0, j;
  __device__ __forceinline__ AttnPairs() : i0(threadIdx.x / NK), j(threadIdx.x % NK) {}
  __device__ __forceinline__ int row(int r) const { return i0 + r * STEP; }
  __device__ __forceinline__ bool has(int r) const { return row(r) < NQ; }
};

// s[r] = A[pairs.row(r)] . b over the D columns, for the R rows of one tile against one row b of
// another: each sum added in column order (the columns past d are zero in both), b's columns
// read V at a time, once for all R rows. A row past the tile (a thread with fewer pairs) reads
// row 0 instead; its s[r] is not used.
template <typename T, int D, int NQ, int NK>
__device__ __forceinline__ void attn_dots(T (&s)[AttnPairs<NQ, NK>::R], const T (*A)[attn_row<T, D>],
                                          const T* b, const AttnPairs<NQ, NK>& pairs) {
  constexpr int V = AttnVec<T>::V, R = AttnPairs<NQ, NK>::R;
#pragma unroll
  for (int r = 0; r < R; ++r) s[r] = T(0);
#pragma unroll
  for (int c = 0; c < D; c += V) {
    const auto bv = attn_vec(b, c);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const auto av = attn_vec(A[pairs.has(r) ? pairs.row(r) : 0], c);
#pragma unroll
      for (int e = 0; e < V; ++e) s[r] += av.x[e] * bv.x[e];
    }
  }
}

template <typename S, int D>
__global__ void ATT_LAUNCH_BOUNDS
    attention_forward(const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
                      const unsigned char* __restrict__ key_pad_mask, S* __restrict__ o,
                      mtx::compute_t<S>* __restrict__ lse, int BH, int heads, int Lq, int Lk, int d,
                      int causal, mtx::compute_t<S> scale, const long long* __restrict__ layout,
                      const unsigned long long* __restrict__ philox, unsigned long long offset,
                      unsigned int threshold,
                      mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  constexpr int BQ = AttnTiles<T>::BQ;
  constexpr int BK = AttnTiles<T>::BK;
  alignas(16) __shared__ T Qs[BQ][attn_row<T, D>];
  alignas(16) __shared__ T Ks[BK][attn_row<T, D>];
  alignas(16) __shared__ T Vs[BK][attn_row<T, D>];
  __shared__ T Ps[BQ][BK + 1];
  __shared__ T row_m[BQ];
  __shared__ T row_l[BQ];
  __shared__ T row_alpha[BQ];

  const int ntiles = (Lq + BQ - 1) / BQ;
  const int bh = blockIdx.x / ntiles;
  const int q0 = (blockIdx.x - bh * ntiles) * BQ;
  if (bh >= BH) return;  // uniform per block
  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5;
  const T neg_inf = -mtx::num<T>::inf();
  const int H = (int)layout[0];
  const AttnRows qr = attn_rows(layout, 0), kr = attn_rows(layout, 1), vr = attn_rows(layout, 2),
                 orows = attn_rows(layout, 3);
  const S* qb = q + qr.head(bh, H);
  const S* kb = k + kr.head(bh, H);
  const S* vb = v + vr.head(bh, H);
  const unsigned char* kpm = attn_kpm_row(key_pad_mask, bh, heads, Lk);
  const AttnDropout<T> drop{philox_pair(philox, offset), threshold, keep_scale};

  attn_load_tile<S, BQ, D>(Qs, qb, q0, Lq, d, qr.sr);
  if (tid < BQ) {
    row_m[tid] = neg_inf;
    row_l[tid] = T(0);
  }
  const AttnColumns<T, D> my;  // columns my.c .. my.c + V - 1 of rows my.g, my.g + G, ...
  constexpr int G = AttnColumns<T, D>::G, V = AttnColumns<T, D>::V;
  T acc[BQ / G][V];
#pragma unroll
  for (int r = 0; r < BQ / G; ++r)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[r][e] = T(0);

  // With a causal mask no row of this tile sees keys past its last row.
  const int kend = causal ? mtx::imin(Lk, q0 + BQ) : Lk;
  for (int k0 = 0; k0 < kend; k0 += BK) {
    __syncthreads();  // previous tile fully consumed (and Qs/row stats ready)
    attn_load_tiles<S, BK, D>(Ks, kb, kr.sr, Vs, vb, vr.sr, k0, Lk, d);
    __syncthreads();

    {
      const AttnPairs<BQ, BK> pairs;  // this thread's scores: key j = pairs.j, rows pairs.row(r)
      const int j = pairs.j;
      const bool key_visible = attn_key_visible(k0 + j, Lk, kpm);
      T s[AttnPairs<BQ, BK>::R];
      attn_dots<T, D>(s, Qs, Ks[j], pairs);
#pragma unroll
      for (int r = 0; r < AttnPairs<BQ, BK>::R; ++r) {
        const int i = pairs.row(r);
        if (pairs.has(r)) Ps[i][j] = attn_query_sees(q0 + i, k0 + j, Lq, causal, key_visible) ? scale * s[r] : neg_inf;
      }
    }
    __syncthreads();

    // online softmax: warp w updates rows w, w + nwarps, ...
    for (int i = warp; i < BQ; i += nwarps) {
      const T s = (lane < BK) ? Ps[i][lane] : neg_inf;
      const T m_old = row_m[i];
      const T m_new = mtx::num<T>::max(m_old, mtx::warp_max(s));
      T p = T(0), alpha = T(1);
      if (m_new != neg_inf) {
        p = mtx::num<T>::exp(s - m_new);        // s == -inf -> 0
        alpha = mtx::num<T>::exp(m_old - m_new);  // m_old == -inf -> 0
      }
      const T psum = mtx::warp_sum(p);  // the normaliser counts dropped weights too
      __syncwarp();
      if (lane < BK) Ps[i][lane] = p * drop.z((long long)bh * Lq + q0 + i, Lk, k0 + lane);
      if (lane == 0) {
        row_m[i] = m_new;
        row_l[i] = row_l[i] * alpha + psum;
        row_alpha[i] = alpha;
      }
    }
    __syncthreads();

    if (my.c < d) {
#pragma unroll
      for (int r = 0; r < BQ / G; ++r)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[r][e] *= row_alpha[my.g + r * G];
      attn_rows_times_tile<T, D, BQ, BK>(acc, Ps, Vs, my);
    }
  }
  __syncthreads();  // row stats final (also covers kend == 0)

  S* ob = o + orows.head(bh, H);
  if (my.c < d) {
#pragma unroll
    for (int r = 0; r < BQ / G; ++r) {
      const int i = my.g + r * G, qi = q0 + i;
      const T l = row_l[i];
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (qi < Lq && my.c + e < d)
          ob[(long long)qi * orows.sr + my.c + e] = (l == T(0)) ? T(0) : acc[r][e] / l;
    }
  }
  if (tid < BQ && q0 + tid < Lq) {
    const T l = row_l[tid];
    lse[(long long)bh * Lq + q0 + tid] = (l == T(0)) ? neg_inf : row_m[tid] + mtx::num<T>::log(l);
  }
}

// delta[bh, i] = sum_c do[bh, i, c] * o[bh, i, c]; one warp per row (bh, i) of the BH * Lq.
// layout: H and the strides of o, then do.
template <typename S>
__global__ void attention_backward_delta(const S* __restrict__ o, const S* __restrict__ dout,
                                         mtx::compute_t<S>* __restrict__ delta, int BH, int Lq, int d,
                                         const long long* __restrict__ layout) {
  using T = mtx::compute_t<S>;
  const int warps_per_block = blockDim.x >> 5;
  const long long row = (long long)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= (long long)BH * Lq) return;  // uniform per warp; no block barriers here
  const int H = (int)layout[0], bh = (int)(row / Lq), i = (int)(row - (long long)bh * Lq);
  const AttnRows orows = attn_rows(layout, 0), drows = attn_rows(layout, 1);
  const S* orow = o + orows.head(bh, H) + (long long)i * orows.sr;
  const S* drow = dout + drows.head(bh, H) + (long long)i * drows.sr;
  T s = T(0);
  mtx::for_each_strided<4>(lane, d, 32, [&](long long, T oc, T dc) { s += oc * dc; }, orow, drow);
  s = mtx::warp_sum(s);
  if (lane == 0) delta[row] = s;
}

// For the (query tile, key tile) pair staged in shared memory, compute
// P (optional) and dS for every allowed (i, j); zero elsewhere.
template <typename T, int NQ, int NK, int D>
__device__ __forceinline__ void attn_recompute(const T (*Qs)[attn_row<T, D>], const T (*dOs)[attn_row<T, D>],
                                               const T (*Ks)[attn_row<T, D>], const T (*Vs)[attn_row<T, D>],
                                               const T* lse_s, const T* delta_s, T (*Ps)[NK + 1],
                                               T (*dSs)[NK + 1], int q0, int k0, int Lq, int Lk,
                                               const unsigned char* kpm, int causal,
                                               T scale, const AttnDropout<T>& drop, int bh) {
  const T neg_inf = -mtx::num<T>::inf();
  const AttnPairs<NQ, NK> pairs;  // this thread's pairs: key j = pairs.j, rows pairs.row(r)
  constexpr int R = AttnPairs<NQ, NK>::R;
  const int j = pairs.j;
  const bool key_visible = attn_key_visible(k0 + j, Lk, kpm);
  T qk[R], dov[R];
  attn_dots<T, D>(qk, Qs, Ks[j], pairs);
  attn_dots<T, D>(dov, dOs, Vs[j], pairs);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = pairs.row(r);
    if (!pairs.has(r)) continue;
    T pz = T(0), ds = T(0);
    if (lse_s[i] != neg_inf && attn_query_sees(q0 + i, k0 + j, Lq, causal, key_visible)) {
      const T p = mtx::num<T>::exp(scale * qk[r] - lse_s[i]);
      const T z = drop.z((long long)bh * Lq + q0 + i, Lk, k0 + j);
      pz = p * z;
      ds = p * (z * dov[r] - delta_s[i]);
    }
    if (Ps) Ps[i][j] = pz;
    dSs[i][j] = ds;
  }
}

// dk and dv of one block's BK keys, k0 .. k0 + BK - 1: loops over the query tiles, recomputes P,
// z and dS for each, accumulates dk and dv in registers and writes them once with `=`. WITH_DQ
// (attention_backward_onepass): the block holds every key (k0 = 0, Lk <= BK), so a query tile's
// dS times the key tile is the tile's whole dq, which the block writes with `=` as well: the
// keys' and the queries' gradients from one recompute of P, in the order the two separate
// kernels add them: the same bits, for finite inputs (the dq kernel skips the key tiles a causal
// query tile cannot see, where this block adds dS = 0 times their keys: 0 * inf would be NaN).
template <typename S, int D, int BK, bool WITH_DQ>
__device__ __forceinline__ void attn_backward_keys(
    const S* __restrict__ q, const S* __restrict__ k, const S* __restrict__ v,
    const unsigned char* __restrict__ key_pad_mask, const S* __restrict__ dout,
    const mtx::compute_t<S>* __restrict__ lse, const mtx::compute_t<S>* __restrict__ delta,
    S* __restrict__ dk, S* __restrict__ dv, S* __restrict__ dq, int BH, int heads, int Lq, int Lk, int d,
    int causal, mtx::compute_t<S> scale, const long long* __restrict__ layout,
    const unsigned long long* __restrict__ philox, unsigned long long offset, unsigned int threshold,
    mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  constexpr int BQ = AttnTiles<T>::BQB;
  alignas(16) __shared__ T Ks[BK][attn_row<T, D>];
  alignas(16) __shared__ T Vs[BK][attn_row<T, D>];
  alignas(16) __shared__ T Qs[BQ][attn_row<T, D>];
  alignas(16) __shared__ T dOs[BQ][attn_row<T, D>];
  __shared__ T Ps[BQ][BK + 1];
  __shared__ T dSs[BQ][BK + 1];
  __shared__ T lse_s[BQ];
  __shared__ T delta_s[BQ];

  const int ntiles = (Lk + BK - 1) / BK;
  const int bh = blockIdx.x / ntiles;
  const int k0 = (blockIdx.x - bh * ntiles) * BK;
  if (bh >= BH) return;
  const int H = (int)layout[0];  // layout: q, k, v, do, dk, dv (and dq)
  const AttnRows qr = attn_rows(layout, 0), kr = attn_rows(layout, 1), vr = attn_rows(layout, 2),
                 dor = attn_rows(layout, 3), dkr = attn_rows(layout, 4), dvr = attn_rows(layout, 5);
  const unsigned char* kpm = attn_kpm_row(key_pad_mask, bh, heads, Lk);
  const AttnDropout<T> drop{philox_pair(philox, offset), threshold, keep_scale};

  attn_load_tiles<S, BK, D>(Ks, k + kr.head(bh, H), kr.sr, Vs, v + vr.head(bh, H), vr.sr, k0, Lk, d);
  const AttnColumns<T, D> my;  // columns my.c .. my.c + V - 1 of keys my.g, my.g + G, ...
  constexpr int G = AttnColumns<T, D>::G, V = AttnColumns<T, D>::V;
  static_assert(BK % G == 0, "every group owns the same number of the key tile's rows");
  T acc_dk[BK / G][V], acc_dv[BK / G][V];
#pragma unroll
  for (int r = 0; r < BK / G; ++r)
#pragma unroll
    for (int e = 0; e < V; ++e) acc_dk[r][e] = acc_dv[r][e] = T(0);

  // Causal: queries before k0 see none of these keys.
  const int qstart = causal ? (k0 / BQ) * BQ : 0;
  for (int q0 = qstart; q0 < Lq; q0 += BQ) {
    __syncthreads();
    attn_load_tiles<S, BQ, D>(Qs, q + qr.head(bh, H), qr.sr, dOs, dout + dor.head(bh, H), dor.sr, q0, Lq, d);
    attn_load_row_stats<T, BQ>(lse_s, delta_s, lse, delta, bh, q0, Lq);
    __syncthreads();
    attn_recompute<T, BQ, BK, D>(Qs, dOs, Ks, Vs, lse_s, delta_s, Ps, dSs, q0, k0, Lq, Lk, kpm,
                                 causal, scale, drop, bh);
    __syncthreads();
    if (my.c < d) {
#pragma unroll
      for (int i = 0; i < BQ; ++i) {
        const auto dorow = attn_vec(dOs[i], my.c), qrow = attn_vec(Qs[i], my.c);
#pragma unroll
        for (int r = 0; r < BK / G; ++r) {
          const T p = Ps[i][my.g + r * G], ds = dSs[i][my.g + r * G];
#pragma unroll
          for (int e = 0; e < V; ++e) {
            acc_dv[r][e] += p * dorow.x[e];
            acc_dk[r][e] += ds * qrow.x[e];
          }
        }
      }
      if constexpr (WITH_DQ) {  // dq of the tile's queries my.g, my.g + G, ...: dS K over all keys
        T acc_dq[BQ / G][V];
#pragma unroll
        for (int r = 0; r < BQ / G; ++r)
#pragma unroll
          for (int e = 0; e < V; ++e) acc_dq[r][e] = T(0);
        attn_rows_times_tile<T, D, BQ, BK>(acc_dq, dSs, Ks, my);
        const AttnRows dqr = attn_rows(layout, 6);
        attn_store_rows<S, D, BQ>(dq + dqr.head(bh, H), dqr.sr, q0, Lq, d, acc_dq, scale, my);
      }
    }
  }

  if (my.c < d) {
    attn_store_rows<S, D, BK>(dk + dkr.head(bh, H), dkr.sr, k0, Lk, d, acc_dk, scale, my);
    attn_store_rows<S, D, BK>(dv + dvr.head(bh, H), dvr.sr, k0, Lk, d, acc_dv, T(1), my);  // x * 1 is x
  }
}

template <typename S, int D>
__global__ void ATT_LAUNCH_BOUNDS
    attention_backward_dkdv(const S* __restrict__ q, const S* __restrict__ k,
                            const S* __restrict__ v, const unsigned char* __restrict__ key_pad_mask,
                            const S* __restrict__ dout, const mtx::compute_t<S>* __restrict__ lse,
                            const mtx::compute_t<S>* __restrict__ delta, S* __restrict__ dk,
                            S* __restrict__ dv, int BH, int heads, int Lq, int Lk, int d, int causal,
                            mtx::compute_t<S> scale, const long long* __restrict__ layout,
                            const unsigned long long* __restrict__ philox,
                            unsigned long long offset, unsigned int threshold,
                            mtx::compute_t<S> keep_scale) {
  attn_backward_keys<S, D, AttnTiles<mtx::compute_t<S>>::BKB, false>(
      q, k, v, key_pad_mask, dout, lse, delta, dk, dv, nullptr, BH, heads, Lq, Lk, d, causal, scale, layout,
      philox, offset, threshold, keep_scale);
}

// dk, dv and dq in one kernel, for Lk <= BK1 keys: block = bh (see attn_backward_keys).
template <typename S, int D>
__global__ void ATT_LAUNCH_BOUNDS
    attention_backward_onepass(const S* __restrict__ q, const S* __restrict__ k,
                               const S* __restrict__ v, const unsigned char* __restrict__ key_pad_mask,
                               const S* __restrict__ dout, const mtx::compute_t<S>* __restrict__ lse,
                               const mtx::compute_t<S>* __restrict__ delta, S* __restrict__ dk,
                               S* __restrict__ dv, S* __restrict__ dq, int BH, int heads, int Lq, int Lk,
                               int d, int causal, mtx::compute_t<S> scale,
                               const long long* __restrict__ layout,
                               const unsigned long long* __restrict__ philox,
                               unsigned long long offset, unsigned int threshold,
                               mtx::compute_t<S> keep_scale) {
  attn_backward_keys<S, D, AttnTiles<mtx::compute_t<S>>::BK1, true>(
      q, k, v, key_pad_mask, dout, lse, delta, dk, dv, dq, BH, heads, Lq, Lk, d, causal, scale, layout,
      philox, offset, threshold, keep_scale);
}

template <typename S, int D>
__global__ void ATT_LAUNCH_BOUNDS
    attention_backward_dq(const S* __restrict__ q, const S* __restrict__ k,
                          const S* __restrict__ v, const unsigned char* __restrict__ key_pad_mask,
                          const S* __restrict__ dout, const mtx::compute_t<S>* __restrict__ lse,
                          const mtx::compute_t<S>* __restrict__ delta, S* __restrict__ dq, int BH,
                          int heads, int Lq, int Lk, int d, int causal, mtx::compute_t<S> scale,
                          const long long* __restrict__ layout,
                          const unsigned long long* __restrict__ philox, unsigned long long offset,
                          unsigned int threshold, mtx::compute_t<S> keep_scale) {
  using T = mtx::compute_t<S>;
  constexpr int BQ = AttnTiles<T>::BQB;
  constexpr int BK = AttnTiles<T>::BKB;
  alignas(16) __shared__ T Qs[BQ][attn_row<T, D>];
  alignas(16) __shared__ T dOs[BQ][attn_row<T, D>];
  alignas(16) __shared__ T Ks[BK][attn_row<T, D>];
  alignas(16) __shared__ T Vs[BK][attn_row<T, D>];
  __shared__ T dSs[BQ][BK + 1];
  __shared__ T lse_s[BQ];
  __shared__ T delta_s[BQ];

  const int ntiles = (Lq + BQ - 1) / BQ;
  const int bh = blockIdx.x / ntiles;
  const int q0 = (blockIdx.x - bh * ntiles) * BQ;
  if (bh >= BH) return;
  const int H = (int)layout[0];  // layout: q, k, v, do, dq
  const AttnRows qr = attn_rows(layout, 0), kr = attn_rows(layout, 1), vr = attn_rows(layout, 2),
                 dor = attn_rows(layout, 3), dqr = attn_rows(layout, 4);
  const unsigned char* kpm = attn_kpm_row(key_pad_mask, bh, heads, Lk);
  const AttnDropout<T> drop{philox_pair(philox, offset), threshold, keep_scale};

  attn_load_tiles<S, BQ, D>(Qs, q + qr.head(bh, H), qr.sr, dOs, dout + dor.head(bh, H), dor.sr, q0, Lq, d);
  attn_load_row_stats<T, BQ>(lse_s, delta_s, lse, delta, bh, q0, Lq);
  const AttnColumns<T, D> my;  // columns my.c .. my.c + V - 1 of rows my.g, my.g + G, ...
  constexpr int G = AttnColumns<T, D>::G, V = AttnColumns<T, D>::V;
  T acc[BQ / G][V];
#pragma unroll
  for (int r = 0; r < BQ / G; ++r)
#pragma unroll
    for (int e = 0; e < V; ++e) acc[r][e] = T(0);

  const int kend = causal ? mtx::imin(Lk, q0 + BQ) : Lk;
  for (int k0 = 0; k0 < kend; k0 += BK) {
    __syncthreads();
    attn_load_tiles<S, BK, D>(Ks, k + kr.head(bh, H), kr.sr, Vs, v + vr.head(bh, H), vr.sr, k0, Lk, d);
    __syncthreads();
    attn_recompute<T, BQ, BK, D>(Qs, dOs, Ks, Vs, lse_s, delta_s, (T(*)[BK + 1])nullptr, dSs, q0,
                                 k0, Lq, Lk, kpm, causal, scale, drop, bh);
    __syncthreads();
    if (my.c < d) attn_rows_times_tile<T, D, BQ, BK>(acc, dSs, Ks, my);
  }

  if (my.c < d) attn_store_rows<S, D, BQ>(dq + dqr.head(bh, H), dqr.sr, q0, Lq, d, acc, scale, my);
}
