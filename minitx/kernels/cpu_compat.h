// cpu_compat.h -- run the CUDA subset used by minitx/kernels/*.cu on the host CPU.
//
// Purpose: CI machines have no GPU.  The test harness compiles the very same
// .cu source with g++ (`-include`-style: a generated wrapper .cpp includes this
// header, then the .cu file, then small extern "C" launch wrappers) and checks
// every kernel against a NumPy reference.
//
// Execution model
//   * A launch runs the grid's blocks one after another on a small pool of OS
//     threads (workers).  Different blocks may run concurrently on different
//     workers, so atomicAdd is a real atomic.
//   * Inside a block every CUDA thread is a cooperative fiber (ucontext) with
//     its own stack; all fibers of one block live on one OS thread.
//   * __syncthreads() is a barrier over the block's fibers.  Warp primitives
//     (__shfl_*_sync, __syncwarp, __ballot_sync) are barriers over the 32
//     lanes of the warp (threads linearised x-fastest, like CUDA) with a
//     double-buffered exchange slot per lane.  All lanes of the warp must take
//     part (the mask argument is not interpreted); a lane that has exited while
//     the others shuffle is reported as a deadlock.
//   * A barrier that can never complete (a thread returned early while others
//     wait, divergent __syncthreads) is detected and the launch fails with an
//     error message instead of hanging.
//   * __shared__ expands to `static thread_local`: one copy per worker thread,
//     reused by the blocks that worker runs (CUDA shared memory is also
//     uninitialised at block start).  Dynamic `extern __shared__` arrays are
//     not supported (the kernels use static shared memory only).
//   * Each fiber stack (128 KB by default, MINITX_CPU_STACK_KB) sits above a
//     guard page, so a stack overflow crashes loudly.
//   * The order in which ready fibers run between barriers is selectable
//     (forward, reverse, pseudo-random) so tests can shake out missing
//     barriers that happen to work in one order.  Those three visit every
//     ready fiber once per round, and a round takes each fiber only to its
//     next barrier (warp or block), so the warps of a block stay within one
//     warp primitive of each other.  On a GPU warps drift much further: a
//     shuffle synchronises only its own warp.  The fourth order, drift, lets
//     them: after the block starts and after every __syncthreads one warp (the
//     next in turn) runs alone through any number of warp primitives until it
//     reaches the next __syncthreads or exits, and only then do the others
//     run (in forward order).  A missing __syncthreads between two uses of the
//     same shared memory by different warps then shows up.
//
// bfloat16: common.cuh's mtx::bfloat16 is plain code over __float_as_uint and
// __uint_as_float (defined below), so the CPU build runs the very conversion the
// GPU runs; this header needs no type of its own for it.
//
// What this cannot prove: memory-model subtleties of real hardware (the
// emulator is sequentially consistent between barriers), bank conflicts,
// occupancy, register pressure, and lane-divergent use of warp primitives with
// partial masks.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// ---------------------------------------------------------------- keywords
#define MINITX_CPU 1  // the kernels' sources test it where the CPU build runs other code (mma.cuh)
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __constant__ static const

// ---------------------------------------------------------------- built-ins
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
      : x(x_), y(y_), z(z_) {}
};
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local uint3 blockDim;
inline thread_local uint3 gridDim;
constexpr int warpSize = 32;

// ---------------------------------------------------------------- math
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fadd_rn(float a, float b) { return a + b; }  // never fused: cpu_harness builds with -ffp-contract=off
inline double __dadd_rn(double a, double b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned int i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned int __float_as_uint(float f) { unsigned int i; memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, 8); return i; }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return (unsigned int)(((unsigned long long)a * (unsigned long long)b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
}

// ---------------------------------------------------------------- atomics
template <typename T>
inline T atomicAdd(T* addr, T v) {
  return std::atomic_ref<T>(*addr).fetch_add(v, std::memory_order_relaxed);
}
template <typename T>
inline T atomicMax(T* addr, T v) {
  std::atomic_ref<T> r(*addr);
  T old = r.load(std::memory_order_relaxed);
  while (old < v && !r.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
  }
  return old;
}
template <typename T>
inline T atomicExch(T* addr, T v) {
  return std::atomic_ref<T>(*addr).exchange(v, std::memory_order_relaxed);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// ---------------------------------------------------------------- runtime
namespace minitx_cpu {

enum FiberState { kReady = 0, kWaiting = 1, kDone = 2 };

struct Fiber {
  ucontext_t ctx;
  int state;
  int group;      // barrier group waited on
  unsigned gen;   // generation of that group when it started waiting
  uint3 tid;
};

struct Group {
  int size;
  int arrived;
  unsigned gen;
};

// Fiber stacks: one mmap'd region, each stack preceded by a PROT_NONE guard
// page so that a stack overflow faults instead of corrupting a neighbour.
struct StackPool {
  char* base = nullptr;
  size_t total = 0, stride = 0, usable = 0;
  bool allocate(int n, size_t stack_bytes) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    usable = (stack_bytes + page - 1) / page * page;
    stride = usable + page;
    total = stride * (size_t)n;
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      base = nullptr;
      return false;
    }
    base = static_cast<char*>(p);
    for (int i = 0; i < n; ++i) mprotect(base + (size_t)i * stride, page, PROT_NONE);
    return true;
  }
  char* stack(int i) const { return base + (size_t)i * stride + (stride - usable); }
  ~StackPool() {
    if (base) munmap(base, total);
  }
};

constexpr int kGatherWords = 8;  // the most words a lane posts to one warp_gather

struct Worker {
  ucontext_t sched;
  std::vector<Fiber> fibers;
  std::vector<Group> groups;  // [0] = block, [1 + w] = warp w
  std::vector<unsigned long long> shfl;  // [warp][parity][lane]
  std::vector<unsigned int> gather;      // [warp][parity][lane][kGatherWords] (warp_gather)
  StackPool stacks;
  size_t stack_size = 0;
  int current = -1;
  void (*body)(void*) = nullptr;
  void* body_arg = nullptr;
  int schedule = 0;
  unsigned rng = 12345u;
  std::vector<int> order;
  std::string error;
};

inline thread_local Worker* tl_worker = nullptr;
inline std::mutex g_error_mutex;
inline std::string g_last_error;

inline void set_error(const std::string& msg) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  g_last_error = msg;
}

inline void fiber_main() {
  Worker* w = tl_worker;
  w->body(w->body_arg);
  w->fibers[w->current].state = kDone;
  // returning switches to uc_link (the scheduler context)
}

// Arrive at barrier group g and yield until the whole group has arrived.
inline void barrier(int g) {
  Worker* w = tl_worker;
  Group& grp = w->groups[g];
  Fiber& f = w->fibers[w->current];
  asm volatile("" ::: "memory");
  if (++grp.arrived == grp.size) {
    grp.arrived = 0;
    ++grp.gen;
    f.state = kReady;
  } else {
    f.state = kWaiting;
    f.group = g;
    f.gen = grp.gen;
  }
  swapcontext(&f.ctx, &w->sched);
  asm volatile("" ::: "memory");
}

inline int current_linear_tid() { return tl_worker->current; }

// Runs one block to completion.  Returns false (with w->error set) on deadlock.
inline bool run_block(Worker* w) {
  const int n = (int)w->fibers.size();
  for (int i = 0; i < n; ++i) {
    Fiber& f = w->fibers[i];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = w->stacks.stack(i);
    f.ctx.uc_stack.ss_size = w->stacks.usable;
    f.ctx.uc_link = &w->sched;
    makecontext(&f.ctx, (void (*)())fiber_main, 0);
    f.state = kReady;
  }
  for (auto& g : w->groups) g.arrived = 0;
  int live = n;
  // drift (schedule 3): the warp running alone in this __syncthreads segment, or -1
  const int nwarps = (n + 31) / 32;
  int leader = -1, turn = 0;
  unsigned segment = w->groups[0].gen - 1;  // block-barrier generation the leader was chosen in
  while (live > 0) {
    if (w->schedule == 3 && nwarps > 1 && w->groups[0].gen != segment) {
      segment = w->groups[0].gen;  // a new segment: the next warp runs ahead alone
      leader = turn++ % nwarps;
    }
    // choose the visiting order for this round
    if (w->schedule == 1) {
      for (int i = 0; i < n; ++i) w->order[i] = n - 1 - i;
    } else if (w->schedule == 2) {
      for (int i = 0; i < n; ++i) w->order[i] = i;
      for (int i = n - 1; i > 0; --i) {
        w->rng = w->rng * 1664525u + 1013904223u;
        int j = (int)((w->rng >> 8) % (unsigned)(i + 1));
        std::swap(w->order[i], w->order[j]);
      }
    } else {
      for (int i = 0; i < n; ++i) w->order[i] = i;
    }
    bool progress = false;
    for (int k = 0; k < n; ++k) {
      const int i = w->order[k];
      Fiber& f = w->fibers[i];
      if (f.state == kDone || (leader >= 0 && (i >> 5) != leader)) continue;
      if (f.state == kWaiting) {
        if (w->groups[f.group].gen == f.gen) continue;
        f.state = kReady;
      }
      w->current = i;
      threadIdx = f.tid;
      swapcontext(&w->sched, &f.ctx);
      progress = true;
      if (f.state == kDone) --live;
    }
    if (!progress && leader >= 0) {
      leader = -1;  // the leader waits at __syncthreads (or has exited): the others' turn
      continue;
    }
    if (!progress) {
      int waiting_block = 0, waiting_warp = 0, done = 0;
      for (auto& f : w->fibers) {
        if (f.state == kDone) ++done;
        else if (f.group == 0) ++waiting_block;
        else ++waiting_warp;
      }
      char buf[320];
      snprintf(buf, sizeof buf,
               "deadlock in block (%u,%u,%u): %d threads wait at __syncthreads, "
               "%d wait at a warp primitive, %d have exited (a barrier or warp "
               "shuffle is not reached by every thread)",
               blockIdx.x, blockIdx.y, blockIdx.z, waiting_block, waiting_warp, done);
      w->error = buf;
      return false;
    }
  }
  return true;
}

struct LaunchOptions {
  int schedule = 0;     // 0 forward, 1 reverse, 2 pseudo-random, 3 drift
  int workers = 0;      // 0 = hardware concurrency
  int stack_kb = 128;   // per CUDA thread
};

// Launch `body` (a callable running one CUDA thread's code) over grid x block.
// Returns 0 on success; otherwise sets the last error and returns non-zero.
template <typename F>
int launch(dim3 grid, dim3 block, F& body, const LaunchOptions& opt) {
  const long long nthreads = (long long)block.x * block.y * block.z;
  const long long nblocks = (long long)grid.x * grid.y * grid.z;
  if (nthreads <= 0 || nthreads > 1024 || block.z > 64) {
    set_error("invalid block dimensions (need 1..1024 threads)");
    return 3;
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535u || grid.z > 65535u ||
      grid.x > 2147483647u) {
    set_error("invalid grid dimensions");
    return 3;
  }
  int nworkers = opt.workers > 0 ? opt.workers : (int)std::thread::hardware_concurrency();
  if (nworkers < 1) nworkers = 1;
  if (nworkers > nblocks) nworkers = (int)nblocks;

  std::atomic<long long> next{0};
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  std::string err;

  auto work = [&](int worker_id) {
    Worker w;
    const int n = (int)nthreads;
    w.fibers.resize(n);
    w.order.resize(n);
    w.schedule = opt.schedule;
    w.rng = 0x9E3779B9u * (unsigned)(worker_id + 1);
    w.stack_size = (size_t)(opt.stack_kb > 16 ? opt.stack_kb : 16) * 1024;
    if (!w.stacks.allocate(n, w.stack_size)) {
      failed.store(true);
      std::lock_guard<std::mutex> lock(err_mu);
      if (err.empty()) err = "could not allocate fiber stacks";
      return;
    }
    const int nwarps = (n + 31) / 32;
    w.groups.resize(1 + nwarps);
    w.groups[0] = Group{n, 0, 0};
    for (int k = 0; k < nwarps; ++k) {
      const int sz = std::min(32, n - 32 * k);
      w.groups[1 + k] = Group{sz, 0, 0};
    }
    w.shfl.assign((size_t)nwarps * 64, 0ull);
    w.gather.assign((size_t)nwarps * 64 * kGatherWords, 0u);
    for (int i = 0; i < n; ++i) {
      w.fibers[i].tid = uint3{(unsigned)(i % block.x), (unsigned)((i / block.x) % block.y),
                              (unsigned)(i / (block.x * block.y))};
    }
    w.body = [](void* p) { (*static_cast<F*>(p))(); };
    w.body_arg = &body;
    tl_worker = &w;
    blockDim = uint3{block.x, block.y, block.z};
    gridDim = uint3{grid.x, grid.y, grid.z};
    while (!failed.load()) {
      const long long b = next.fetch_add(1);
      if (b >= nblocks) break;
      blockIdx = uint3{(unsigned)(b % grid.x), (unsigned)((b / grid.x) % grid.y),
                       (unsigned)(b / ((long long)grid.x * grid.y))};
      if (!run_block(&w)) {
        failed.store(true);
        std::lock_guard<std::mutex> lock(err_mu);
        if (err.empty()) err = w.error;
        break;
      }
    }
    tl_worker = nullptr;
  };

  if (nworkers == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < nworkers; ++i) pool.emplace_back(work, i);
    for (auto& t : pool) t.join();
  }
  if (failed.load()) {
    set_error(err);
    return 4;
  }
  return 0;
}

// ---- generic typed entry point used by the generated extern "C" wrappers ----
template <typename T>
constexpr char type_code() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_pointer_v<U>) return 'p';
  else if constexpr (std::is_same_v<U, float>) return 'f';
  else if constexpr (std::is_same_v<U, double>) return 'd';
  else if constexpr (std::is_same_v<U, bool>) return '?';
  else if constexpr (std::is_integral_v<U> && sizeof(U) == 1) return std::is_signed_v<U> ? 'b' : 'B';
  else if constexpr (std::is_integral_v<U> && sizeof(U) == 2) return std::is_signed_v<U> ? 'h' : 'H';
  else if constexpr (std::is_integral_v<U> && sizeof(U) == 4) return std::is_signed_v<U> ? 'i' : 'I';
  else if constexpr (std::is_integral_v<U> && sizeof(U) == 8) return std::is_signed_v<U> ? 'q' : 'Q';
  else return '?';
}

template <typename... A, size_t... I>
int call_kernel(void (*fn)(A...), dim3 g, dim3 b, void** args, const LaunchOptions& opt,
                std::index_sequence<I...>) {
  std::tuple<std::remove_cv_t<A>...> vals{*static_cast<std::remove_cv_t<A>*>(args[I])...};
  auto body = [&]() { std::apply(fn, vals); };
  return launch(g, b, body, opt);
}

// grid/block: 3 unsigned each; args: pointers to each argument value (like
// cuLaunchKernel's kernelParams); codes: one type code per argument, checked
// against the kernel's parameter types; opts: {schedule, workers, stack_kb}.
template <typename... A>
int launch_export(void (*fn)(A...), const unsigned* grid, const unsigned* block, void** args,
                  const char* codes, const int* opts) {
  static constexpr char expect[] = {type_code<A>()..., '\0'};
  if (strcmp(expect, codes) != 0) {
    set_error(std::string("kernel argument mismatch: kernel expects (") + expect +
              "), launcher passed (" + codes + ")");
    return 2;
  }
  LaunchOptions opt;
  if (opts) {
    opt.schedule = opts[0];
    opt.workers = opts[1];
    if (opts[2] > 0) opt.stack_kb = opts[2];
  }
  return call_kernel(fn, dim3(grid[0], grid[1], grid[2]), dim3(block[0], block[1], block[2]),
                     args, opt, std::index_sequence_for<A...>{});
}

// ---- warp exchange --------------------------------------------------------
// The calling lane's place in its warp's exchange: warp, lane, the warp's
// barrier group and the 32 slots of the half that the group's current
// generation uses (the halves alternate, so a lane that races ahead into the
// next exchange cannot overwrite a slot a slower lane still has to read).
struct WarpSlots {
  int warp, lane;
  Group* grp;
  unsigned long long* slots;
};

inline WarpSlots warp_slots() {
  Worker* w = tl_worker;
  const int lin = w->current;
  WarpSlots ws;
  ws.warp = lin >> 5;
  ws.lane = lin & 31;
  ws.grp = &w->groups[1 + ws.warp];
  const unsigned parity = ws.grp->gen & 1u;
  ws.slots = &w->shfl[((size_t)ws.warp * 2 + parity) * 32];
  return ws;
}

template <typename T>
inline T warp_exchange(T v, int src_lane) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffle type");
  const WarpSlots ws = warp_slots();
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T));
  ws.slots[ws.lane] = bits;
  barrier(1 + ws.warp);
  if (src_lane < 0 || src_lane >= ws.grp->size) src_lane = ws.lane;
  T r;
  memcpy(&r, &ws.slots[src_lane], sizeof(T));
  return r;
}

inline unsigned warp_ballot(int pred) {
  const WarpSlots ws = warp_slots();
  ws.slots[ws.lane] = pred ? 1ull : 0ull;
  barrier(1 + ws.warp);
  unsigned r = 0;
  for (int i = 0; i < ws.grp->size; ++i)
    if (ws.slots[i]) r |= 1u << i;
  return r;
}

// Every lane posts N words and reads every lane's: all[lane][i]. One barrier, like a shuffle;
// the halves of the buffer alternate with the warp's generation as the shuffle slots do.
template <int N>
inline void warp_gather(const unsigned int (&mine)[N], unsigned int (&all)[32][N]) {
  static_assert(N <= kGatherWords, "warp_gather: too many words per lane");
  Worker* w = tl_worker;
  const WarpSlots ws = warp_slots();
  if (ws.grp->size != 32) {  // no launcher does this: a kernel bug, so fail loudly
    fprintf(stderr, "cpu_compat.h: warp_gather (an emulated mma.sync) needs a full warp of 32 threads\n");
    std::abort();
  }
  unsigned int* half = &w->gather[((size_t)ws.warp * 2 + (ws.grp->gen & 1u)) * 32 * kGatherWords];
  for (int i = 0; i < N; ++i) half[ws.lane * kGatherWords + i] = mine[i];
  barrier(1 + ws.warp);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < N; ++i) all[l][i] = half[l * kGatherWords + i];
}

// mma.sync of mma.cuh on the CPU: the warp's A [16 x K] and B [K x 8] fragments gathered
// (lane = 4 g + t holds them as mma.cuh's header lays out), each lane's four D elements
// d += sum_k A B summed in double (a product of two operands of at most 11 significant bits is
// exact there, and the sum of K of them and the float accumulator nearly so) and rounded once
// to float. `value` turns an operand's bits into its float.
template <int K, int E, typename Value>
inline void mma_sync(float (&d)[4], const unsigned int (&a)[4], const unsigned int (&b)[2], Value value) {
  const unsigned int mine[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  unsigned int all[32][6];
  warp_gather(mine, all);
  auto operand = [&](unsigned int reg, int e) {
    return (double)value(E == 2 ? ((reg >> (16 * e)) & 0xffffu) : reg);
  };
  double A[16][K], B[K][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane >> 2, t = lane & 3;
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < E; ++e) A[g + 8 * (r & 1)][(r >> 1) * (K / 2) + E * t + e] = operand(all[lane][r], e);
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < E; ++e) B[r * (K / 2) + E * t + e][g] = operand(all[lane][4 + r], e);
  }
  const int lane = current_linear_tid() & 31, g = lane >> 2, t = lane & 3;
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
    double s = d[r];
    for (int k = 0; k < K; ++k) s += A[row][k] * B[k][col];
    d[r] = (float)s;
  }
}

}  // namespace minitx_cpu

inline void __syncthreads() { minitx_cpu::barrier(0); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  minitx_cpu::barrier(1 + (minitx_cpu::current_linear_tid() >> 5));
}

template <typename T>
inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
  const int lane = minitx_cpu::current_linear_tid() & 31;
  return minitx_cpu::warp_exchange(v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask, int width = 32) {
  const int lane = minitx_cpu::current_linear_tid() & 31;
  int src = lane ^ lane_mask;
  if (src >= ((lane & ~(width - 1)) + width)) src = lane;
  return minitx_cpu::warp_exchange(v, src);
}
template <typename T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  const int lane = minitx_cpu::current_linear_tid() & 31;
  int src = lane + (int)delta;
  if ((src & ~(width - 1)) != (lane & ~(width - 1))) src = lane;
  return minitx_cpu::warp_exchange(v, src);
}
template <typename T>
inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  const int lane = minitx_cpu::current_linear_tid() & 31;
  int src = lane - (int)delta;
  if (src < (lane & ~(width - 1))) src = lane;
  return minitx_cpu::warp_exchange(v, src);
}
inline unsigned __ballot_sync(unsigned, int pred) { return minitx_cpu::warp_ballot(pred); }
inline int __any_sync(unsigned m, int pred) { return __ballot_sync(m, pred) != 0u; }
inline int __all_sync(unsigned m, int pred) {
  const unsigned b = __ballot_sync(m, pred);
  const int size = minitx_cpu::tl_worker->groups[1 + (minitx_cpu::current_linear_tid() >> 5)].size;
  const unsigned full = size >= 32 ? 0xffffffffu : ((1u << size) - 1u);
  return b == full;
}

// ---- per-library C entry points (one translation unit per shared object) ---
#ifndef MINITX_CPU_NO_EXPORTS
extern "C" const char* minitx_cpu_last_error() {
  static thread_local std::string copy;
  std::lock_guard<std::mutex> lock(minitx_cpu::g_error_mutex);
  copy = minitx_cpu::g_last_error;
  return copy.c_str();
}
#endif
