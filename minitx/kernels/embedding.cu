// embedding.cu -- backward of an embedding lookup (scatter-add).
//
// Math: for every lookup r with id = ids[r] (r in [0, n)):
//   dweight[id, :] += dy[r, :]        unless id == padding_idx or id is out of
//                                     range [0, num_embeddings) (skipped).
// Repeated ids accumulate with atomicAdd (float and double; double atomicAdd
// needs sm_60+), so the summation order -- and the last bits of float results
// -- may vary from run to run.
//
// Layout: ids [n] int64; dy [n, dim] contiguous; dweight [num_embeddings, dim]
// contiguous, accumulated into with `+=` (the launcher zero-fills it first).
// padding_idx < 0 means "none".
//
// Thread mapping: grid-stride over lookups (one block per lookup at a time),
// threads of the block stride over the `dim` columns.
#include "common.cuh"

template <typename T>
__global__ void embedding_backward(const long long* __restrict__ ids, const T* __restrict__ dy,
                                   T* __restrict__ dweight, long long n, int dim,
                                   long long num_embeddings, long long padding_idx) {
  for (long long r = blockIdx.x; r < n; r += gridDim.x) {
    const long long id = ids[r];
    if (id < 0 || id >= num_embeddings || id == padding_idx) continue;
    const T* src = dy + r * dim;
    T* dst = dweight + id * dim;
    for (int c = threadIdx.x; c < dim; c += blockDim.x) atomicAdd(dst + c, src[c]);
  }
}
