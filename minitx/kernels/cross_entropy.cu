// cross_entropy.cu -- fused log-softmax + negative log-likelihood with label
// smoothing and ignore_index, forward and backward.
//
// Math (row i of logits x with C = cols classes, target t = targets[i],
// eps = label smoothing):
//   lse_i  = log sum_j exp(x[i,j])                 (max-shifted; NaN if a logit is)
//   loss_i = (1 - eps) * (lse_i - x[i,t]) + eps * (lse_i - (1/C) sum_j x[i,j])
//   dlogits[i,j] = (exp(x[i,j] - lse_i) - (1 - eps) * [j == t] - eps / C) * dloss_i
//   Rows with t == ignore_index: loss_i = 0 and dlogits[i,:] = 0 (lse_i is still
//   written).  A target outside [0, C) that is not ignore_index yields NaN loss
//   and NaN gradient for that row (loud instead of an out-of-bounds read).
//
// Layout: logits, dlogits contiguous [rows, cols] of T; targets [rows] int64;
// loss, lse, dloss [rows] of compute_t<T> (float for a bfloat16 T: a loss is a sum,
// and lse feeds the backward's exp, so neither is rounded to bfloat16).
//
// Thread mapping: one block per row, threads stride over the classes.  The
// forward uses block reductions (max, then sum of exp and sum of x in one
// pass) and thread 0 writes loss[i] and lse[i] with `=`.  The backward needs
// no reduction (lse comes from the forward); it writes the gradient row with
// `=` and never materialises a separate probability matrix.
#include "common.cuh"

template <typename T>
__global__ void cross_entropy_forward(const T* __restrict__ logits,
                                      const long long* __restrict__ targets,
                                      mtx::compute_t<T>* __restrict__ loss,
                                      mtx::compute_t<T>* __restrict__ lse, int rows, int cols,
                                      long long ignore_index, mtx::compute_t<T> smoothing) {
  using C = mtx::compute_t<T>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const T* xr = logits + (long long)row * cols;

  C m = -mtx::num<C>::inf();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = mtx::num<C>::max(m, C(xr[c]));
  m = mtx::block_max(m);

  C se = C(0), sx = C(0);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    se += mtx::num<C>::exp(C(xr[c]) - m);
    sx += C(xr[c]);
  }
  se = mtx::block_sum(se);
  sx = mtx::block_sum(sx);

  if (threadIdx.x == 0) {
    const C l = m + mtx::num<C>::log(se);
    lse[row] = l;
    const long long t = targets[row];
    C out;
    if (t == ignore_index) {
      out = C(0);
    } else if (t < 0 || t >= cols) {
      out = mtx::num<C>::nan();
    } else {
      out = (C(1) - smoothing) * (l - C(xr[t])) + smoothing * (l - sx / C(cols));
    }
    loss[row] = out;
  }
}

template <typename T>
__global__ void cross_entropy_backward(const T* __restrict__ logits,
                                       const long long* __restrict__ targets,
                                       const mtx::compute_t<T>* __restrict__ lse,
                                       const mtx::compute_t<T>* __restrict__ dloss,
                                       T* __restrict__ dlogits, int rows, int cols,
                                       long long ignore_index, mtx::compute_t<T> smoothing) {
  using C = mtx::compute_t<T>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = (long long)row * cols;
  const T* xr = logits + base;
  T* gr = dlogits + base;
  const long long t = targets[row];

  if (t == ignore_index) {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) gr[c] = T(0);
    return;
  }
  const C g = (t < 0 || t >= cols) ? mtx::num<C>::nan() : dloss[row];
  const C l = lse[row];
  const C off = smoothing / C(cols);
  const C on = C(1) - smoothing;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const C p = mtx::num<C>::exp(C(xr[c]) - l);
    gr[c] = T((p - (c == t ? on : C(0)) - off) * g);
  }
}
