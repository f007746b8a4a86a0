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
// Layout: logits, dlogits contiguous [rows, cols] of S; targets [rows] int64;
// loss, lse, dloss [rows] of T = compute_t<S> (float for bfloat16 S: a loss is a sum,
// and lse feeds the backward's exp, so neither is rounded to bfloat16).
//
// Thread mapping: one block per row, threads stride over the classes.  The
// forward uses block reductions (max, then sum of exp and sum of x in one
// pass) and thread 0 writes loss[i] and lse[i] with `=`.  The backward needs
// no reduction (lse comes from the forward); it writes the gradient row with
// `=` and never materialises a separate probability matrix, 16 bytes a load and a store where
// the rows allow it (mtx::map_row).
#include "common.cuh"

template <typename S>
__global__ void cross_entropy_forward(const S* __restrict__ logits,
                                      const long long* __restrict__ targets,
                                      mtx::compute_t<S>* __restrict__ loss,
                                      mtx::compute_t<S>* __restrict__ lse, int rows, int cols,
                                      long long ignore_index, mtx::compute_t<S> smoothing) {
  using T = mtx::compute_t<S>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const S* xr = logits + (long long)row * cols;

  T m = -mtx::num<T>::inf();
  mtx::for_each_column(cols, [&](long long, T xc) { m = mtx::num<T>::max(m, xc); }, xr);
  m = mtx::block_max(m);

  T se = T(0), sx = T(0);
  mtx::for_each_column(cols, [&](long long, T xc) {
    se += mtx::num<T>::exp(xc - m);
    sx += xc;
  }, xr);
  se = mtx::block_sum(se);
  sx = mtx::block_sum(sx);

  if (threadIdx.x == 0) {
    const T l = m + mtx::num<T>::log(se);
    lse[row] = l;
    const long long t = targets[row];
    T out;
    if (t == ignore_index) {
      out = T(0);
    } else if (t < 0 || t >= cols) {
      out = mtx::num<T>::nan();
    } else {
      // without smoothing the mean term is left out, not multiplied by 0: a -inf logit makes
      // l - sx / cols = +inf, and 0 * inf would make the loss NaN (the reference path's and
      // PyTorch's loss stays finite)
      out = smoothing != T(0) ? (T(1) - smoothing) * (l - xr[t]) + smoothing * (l - sx / T(cols))
                              : l - xr[t];
    }
    loss[row] = out;
  }
}

template <typename S>
__global__ void cross_entropy_backward(const S* __restrict__ logits,
                                       const long long* __restrict__ targets,
                                       const mtx::compute_t<S>* __restrict__ lse,
                                       const mtx::compute_t<S>* __restrict__ dloss,
                                       S* __restrict__ dlogits, int rows, int cols,
                                       long long ignore_index, mtx::compute_t<S> smoothing) {
  using T = mtx::compute_t<S>;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = (long long)row * cols;
  const S* xr = logits + base;
  S* gr = dlogits + base;
  const long long t = targets[row];

  if (t == ignore_index) {
    mtx::map_row(xr, gr, cols, [](T, int) { return T(0); });
    return;
  }
  const T g = (t < 0 || t >= cols) ? mtx::num<T>::nan() : dloss[row];
  const T l = lse[row];
  const T off = smoothing / T(cols);
  const T on = T(1) - smoothing;
  mtx::map_row(xr, gr, cols, [&](T x, int c) {
    const T p = mtx::num<T>::exp(x - l);
    return (p - (c == t ? on : T(0)) - off) * g;
  });
}
