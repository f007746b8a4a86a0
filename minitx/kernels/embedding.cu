// embedding.cu -- backward of an embedding lookup, bit-identical from run to run.
//
// Math: for every row id of the table,
//   dweight[id, :] = sum of dy[r, :] over the lookups r with ids[r] == id,
// skipping lookups whose id equals padding_idx or lies outside [0, num_embeddings).
//
// Why sorted: adding the lookups of a repeated id with atomicAdd sums them in whatever order
// the threads arrive, so the last bits of dweight -- and, over a training run, the model --
// change from run to run (one seed gave two models on a GPU; see results/README.md). Here
// the launcher sorts the lookups by id (a stable sort: `order` lists lookup indices,
// `sorted_ids` their ids), so each id's lookups form one run of consecutive sorted
// positions, and one block owns each run. Its EMB_ROW_LANES warps split the run (warp w
// takes the run's lookups w, w + EMB_ROW_LANES, ... in order), one column per lane; then
// warp 0 adds the warps' partial sums in warp order. Every addition has the same operands in
// the same order on every run.
//
// Layout: sorted_ids, order [n] int64; dy [n, dim] contiguous of S; dweight [num_embeddings, dim]
// contiguous of T = compute_t<S> (float for a bfloat16 dy: the sums are never rounded to bfloat16,
// and the table they update is a float master weight), zero-filled by the launcher (rows no
// lookup touches stay zero) -- or, with accumulate, a gradient the table's other uses already
// wrote, which each touched row's sum is added to (dweight[id] + sum: the bits of adding the
// zero-filled result afterwards, without its table or its add).
// padding_idx < 0 means "none".
//
// Grid: x strides over the sorted positions (a block whose position does not start a run
// moves on at once; the launcher caps x at POSITION_BLOCKS, so a batch of many lookups is not
// that many nearly idle blocks), y over tiles of 32 columns. Block: EMB_ROW_LANES warps (the
// launcher's ROW_LANES, passed as -DEMB_ROW_LANES). A warp reads EMB_UNROLL of its lookups'
// ids, their rows' indices and then the rows at once before adding them in order: a common
// id (Multi30k's "a" or ".") has hundreds of lookups, and reading them one after another
// waited out two memory latencies each.
#include "common.cuh"

template <typename S>
__global__ void embedding_backward(const long long* __restrict__ sorted_ids, const long long* __restrict__ order,
                                   const S* __restrict__ dy, mtx::compute_t<S>* __restrict__ dweight, long long n,
                                   int dim, long long num_embeddings, long long padding_idx, int accumulate) {
  using T = mtx::compute_t<S>;
  __shared__ T partial[EMB_ROW_LANES][32];
  const int lane = threadIdx.x % 32, row_lane = threadIdx.x / 32;
  const int c = blockIdx.y * 32 + lane;
  for (long long s = blockIdx.x; s < n; s += gridDim.x) {
    const long long id = sorted_ids[s];
    // the same answer for every thread of the block, so all of them reach the barriers below
    if ((s > 0 && sorted_ids[s - 1] == id) || id < 0 || id >= num_embeddings || id == padding_idx) continue;
    // acc = the warp's lookups j = s + row_lane, j + EMB_ROW_LANES, ... of this id, added in
    // that order; EMB_UNROLL of them loaded at a time (past the run: not loaded, not added).
    T acc = T(0);
    for (long long j0 = s + row_lane;; j0 += EMB_UNROLL * EMB_ROW_LANES) {
      bool in_run[EMB_UNROLL];
      long long row[EMB_UNROLL];
      T x[EMB_UNROLL];
#pragma unroll
      for (int k = 0; k < EMB_UNROLL; ++k) {
        const long long j = j0 + k * EMB_ROW_LANES;
        in_run[k] = j < n && sorted_ids[j] == id;
        row[k] = j < n ? order[j] : 0;
      }
#pragma unroll
      for (int k = 0; k < EMB_UNROLL; ++k) x[k] = (in_run[k] && c < dim) ? T(dy[row[k] * dim + c]) : T(0);
#pragma unroll
      for (int k = 0; k < EMB_UNROLL; ++k)
        if (in_run[k]) acc += x[k];
      if (!in_run[EMB_UNROLL - 1]) break;  // the run ends within these (ids are sorted)
    }
    partial[row_lane][lane] = acc;
    __syncthreads();
    if (row_lane == 0 && c < dim) {
      T total = partial[0][lane];
      for (int w = 1; w < EMB_ROW_LANES; ++w) total += partial[w][lane];
      dweight[id * dim + c] = accumulate ? dweight[id * dim + c] + total : total;
    }
    __syncthreads();  // `partial` is written again for the block's next run
  }
}
