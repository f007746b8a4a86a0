// probe_kernels.cu -- tiny kernels that pin down the CPU compat header's
// emulation of CUDA semantics (used only by tests/kernels/test_cpu_harness.py).

// out[tid * 4 + 0..3] = xor(16), down(delta), up(delta), shfl(src) of v = tid * 10
template <typename T>
__global__ void probe_shuffles(T* out, int delta, int src) {
  const int tid = threadIdx.x;
  const T v = T(tid * 10);
  out[tid * 4 + 0] = __shfl_xor_sync(0xffffffffu, v, 16);
  out[tid * 4 + 1] = __shfl_down_sync(0xffffffffu, v, delta);
  out[tid * 4 + 2] = __shfl_up_sync(0xffffffffu, v, delta);
  out[tid * 4 + 3] = __shfl_sync(0xffffffffu, v, src);
}

// Each thread writes shared[tid], barrier, reads its neighbour's value.
template <typename T>
__global__ void probe_barrier(T* out) {
  __shared__ T buf[1024];
  const int tid = threadIdx.x;
  buf[tid] = T(blockIdx.x * 1000 + tid);
  __syncthreads();
  out[blockIdx.x * blockDim.x + tid] = buf[(tid + 1) % blockDim.x];
}

// Missing barrier on purpose: reads the neighbour's slot without __syncthreads.
template <typename T>
__global__ void probe_racy(T* out, int salt) {
  __shared__ T buf[1024];
  const int tid = threadIdx.x;
  buf[tid] = T(salt + tid);
  out[blockIdx.x * blockDim.x + tid] = buf[(tid + 1) % blockDim.x];
}

// Thread 0 leaves before a barrier the others wait at -> must be reported.
template <typename T>
__global__ void probe_deadlock(T* out) {
  if (threadIdx.x == 0) return;
  __syncthreads();
  out[threadIdx.x] = T(1);
}

// Writes one element past the end of out (length n).
template <typename T>
__global__ void probe_oob(T* out, int n) {
  if (threadIdx.x == 0) out[n] = T(7);
}

// Every thread of every block adds 1 to out[0] and out[1 + blockIdx.x % 4].
template <typename T>
__global__ void probe_atomics(T* out) {
  atomicAdd(out, T(1));
  atomicAdd(out + 1 + (blockIdx.x % 4), T(1));
}

// 2-D/3-D indices: out[linear block][linear thread] = encoded indices.
template <typename T>
__global__ void probe_indices(T* out) {
  const int lb = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int lt = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int nt = blockDim.x * blockDim.y * blockDim.z;
  out[lb * nt + lt] = T(threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z +
                        1000 * (blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z));
}

// ballot of (lane is odd) -> out[warp]
template <typename T>
__global__ void probe_ballot(unsigned int* out) {
  const unsigned int b = __ballot_sync(0xffffffffu, threadIdx.x & 1);
  if ((threadIdx.x & 31) == 0) out[threadIdx.x >> 5] = b;
}

// int / long long argument plumbing: out[0] = a + b + c
template <typename T>
__global__ void probe_args(T* out, int a, long long b, T c, unsigned long long d) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = T(a) + T(b) + c + T(d);
}
