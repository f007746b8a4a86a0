// adam.cu -- multi-tensor Adam / AdamW update, a device-side gradient norm and an in-place scale.
//
// Multi-tensor layout (chosen: arrays of device pointers, no flat buffer):
//   params, grads, exp_avgs, exp_avg_sqs : device arrays of `ntensors` pointers
//                                          (uint64 on the host side), tensor t
//                                          holding sizes[t] contiguous elements
//   block_tensor[b], block_start[b]      : a host-built work table; block b
//                                          updates elements [block_start[b],
//                                          min(block_start[b] + chunk, sizes[t]))
//                                          of tensor t = block_tensor[b]
//   One launch covers every tensor (gridDim.x = number of table entries).
//
// Math per element (PyTorch semantics), g = grad:
//   Adam  (decoupled == 0): g += weight_decay * p  (L2 folded into the gradient)
//   AdamW (decoupled != 0): p -= lr * weight_decay * p
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p -= lr * (m / bias_corr1) / (sqrt(v / bias_corr2) + eps)
//   with bias_corr1 = 1 - beta1^step and bias_corr2 = 1 - beta2^step.
//   params, exp_avgs, exp_avg_sqs are updated in place (=); grads are read only.
//   What changes from step to step is read from device memory, not passed by value: lr (one
//   double), steps[t] (tensor t's step count, already incremented for this step: each parameter
//   counts the steps it really took) and skip (NULL: never), a flag that, when set, leaves every
//   array as it is (a step whose gradients hold NaN or inf).  A CUDA graph bakes kernel
//   arguments in at capture; memory it reads afresh at every replay.  The bias corrections are
//   computed in double from the double betas and rounded once to T, as the host computes them;
//   the moment updates use the betas rounded to T.
//   S is the gradients' storage type; parameters and moments are T = compute_t<S>: with
//   bfloat16 gradients they stay float (the master weights), and every step is computed in float.
//
// Gradient norm (deterministic, no atomics; tensors of S, partials and the norm of T):
//   sumsq_partial    same work table; block b writes partial[b] = sum of x^2
//                    over its chunk (block reduction)            (=)
//   sumsq_finalize   one block sums the partials and writes
//                    out[0] = sqrt(total)                        (=)
//
// Non-finite count (the optimizer's NaN/inf check: one launch and one sync for every gradient,
// where one reduction per gradient would launch hundreds of kernels):
//   nonfinite_partial  same work table; block b writes partial[b] = how many elements of its
//                      chunk are NaN or +-inf (at most 4096, exact in float too)  (=)
//
// Scale in place (clipping's factor, read from device memory: a captured step scales by each
// step's own):
//   scale_inplace      same work table; x[i] = x[i] * factor[0], factor in S, the product in T
//                      rounded once to S (what x * S(factor) elementwise computes)   (in place)
//
// Thread mapping: threads of block b stride over its chunk.
#include "common.cuh"

// Work-table entry b: the elements [start, end) of tensor t that block b works on.
struct Chunk {
  int t;
  long long start, end;
};

__device__ __forceinline__ Chunk chunk_of(int b, const long long* sizes, const int* block_tensor,
                                          const long long* block_start, int chunk) {
  const int t = block_tensor[b];
  const long long start = block_start[b];
  return Chunk{t, start, mtx::lmin(start + chunk, sizes[t])};
}

template <typename S>
__global__ void adam_step(mtx::compute_t<S>* const* __restrict__ params,
                          const S* const* __restrict__ grads,
                          mtx::compute_t<S>* const* __restrict__ exp_avgs,
                          mtx::compute_t<S>* const* __restrict__ exp_avg_sqs,
                          const long long* __restrict__ sizes,
                          const int* __restrict__ block_tensor,
                          const long long* __restrict__ block_start, int nblocks, int chunk,
                          const double* __restrict__ lr_in,
                          const long long* __restrict__ steps, const bool* __restrict__ skip,
                          double beta1_in, double beta2_in, mtx::compute_t<S> eps,
                          mtx::compute_t<S> weight_decay, int decoupled) {
  using T = mtx::compute_t<S>;
  const int b = blockIdx.x;
  if (b >= nblocks || (skip && *skip)) return;  // uniform over the block
  const Chunk c = chunk_of(b, sizes, block_tensor, block_start, chunk);
  const int t = c.t;
  const double step = double(steps[t]);
  const T lr = T(*lr_in), beta1 = T(beta1_in), beta2 = T(beta2_in);
  const T bias_corr1 = T(1.0 - ::pow(beta1_in, step)), bias_corr2 = T(1.0 - ::pow(beta2_in, step));
  T* p = params[t];
  const S* g = grads[t];
  T* m = exp_avgs[t];
  T* v = exp_avg_sqs[t];
  mtx::for_each_strided<2>(c.start + threadIdx.x, c.end, blockDim.x, [&](long long i, T pi, T gi, T m_old, T v_old) {
    if (weight_decay != T(0)) {  // no term at all when 0, as the host path and PyTorch (0 * inf is NaN)
      if (decoupled) {
        pi -= lr * weight_decay * pi;
      } else {
        gi += weight_decay * pi;
      }
    }
    const T mi = beta1 * m_old + (T(1) - beta1) * gi;
    const T vi = beta2 * v_old + (T(1) - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    pi -= lr * (mi / bias_corr1) / (mtx::num<T>::sqrt(vi / bias_corr2) + eps);
    p[i] = pi;
  }, p, g, m, v);
}

template <typename S>
__global__ void sumsq_partial(const S* const* __restrict__ tensors,
                              const long long* __restrict__ sizes,
                              const int* __restrict__ block_tensor,
                              const long long* __restrict__ block_start, int nblocks, int chunk,
                              mtx::compute_t<S>* __restrict__ partial) {
  using T = mtx::compute_t<S>;
  const int b = blockIdx.x;
  if (b >= nblocks) return;
  const Chunk c = chunk_of(b, sizes, block_tensor, block_start, chunk);
  const S* x = tensors[c.t];
  T s = T(0);
  mtx::for_each_strided<4>(c.start + threadIdx.x, c.end, blockDim.x, [&](long long, T xi) { s += xi * xi; }, x);
  s = mtx::block_sum(s);
  if (threadIdx.x == 0) partial[b] = s;
}

template <typename S>
__global__ void sumsq_finalize(const mtx::compute_t<S>* __restrict__ partial, int n,
                               mtx::compute_t<S>* __restrict__ out) {
  using T = mtx::compute_t<S>;
  if (blockIdx.x != 0) return;
  T s = T(0);
  mtx::for_each_strided<8>(threadIdx.x, n, blockDim.x, [&](long long, T pi) { s += pi; }, partial);
  s = mtx::block_sum(s);
  if (threadIdx.x == 0) out[0] = mtx::num<T>::sqrt(s);
}

template <typename S>
__global__ void nonfinite_partial(const S* const* __restrict__ tensors,
                                  const long long* __restrict__ sizes,
                                  const int* __restrict__ block_tensor,
                                  const long long* __restrict__ block_start, int nblocks, int chunk,
                                  mtx::compute_t<S>* __restrict__ partial) {
  using T = mtx::compute_t<S>;
  const int b = blockIdx.x;
  if (b >= nblocks) return;
  const Chunk c = chunk_of(b, sizes, block_tensor, block_start, chunk);
  const S* x = tensors[c.t];
  T count = T(0);
  mtx::for_each_strided<4>(c.start + threadIdx.x, c.end, blockDim.x, [&](long long, T xi) {
    // 0 for a finite x; NaN for NaN and for +-inf (inf - inf). Exact IEEE arithmetic is what
    // makes this hold: no fast-math option is passed to NVRTC, nvcc or g++.
    const T d = xi - xi;
    if (d != d) count += T(1);
  }, x);
  count = mtx::block_sum(count);
  if (threadIdx.x == 0) partial[b] = count;
}

template <typename S>
__global__ void scale_inplace(S* const* __restrict__ tensors, const long long* __restrict__ sizes,
                              const int* __restrict__ block_tensor,
                              const long long* __restrict__ block_start, int nblocks, int chunk,
                              const S* __restrict__ factor) {
  using T = mtx::compute_t<S>;
  const int b = blockIdx.x;
  if (b >= nblocks) return;
  const Chunk c = chunk_of(b, sizes, block_tensor, block_start, chunk);
  S* x = tensors[c.t];
  const T f = T(*factor);
  mtx::for_each_strided<4>(c.start + threadIdx.x, c.end, blockDim.x, [&](long long i, T xi) { x[i] = xi * f; }, x);
}
