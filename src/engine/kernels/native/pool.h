// A small thread pool for the kernels (replaces OpenMP).
//
// Why not OpenMP: its parallel regions end in a join that waits for every thread to arrive, so a
// worker that the OS has not yet woken up (a busy machine, or OpenBLAS's own threads spinning)
// stalls the whole call. Here the caller claims tasks itself and waits only for tasks that a
// worker actually started; a worker that wakes late finds nothing left and goes back to sleep.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace ck {

int threads();
void set_threads(int n);

// Threads worth using right now: threads(), or 1 while the pool has found that its helpers keep
// the caller waiting (a host with more runnable threads than cores descheduling them mid-task).
// Kernels decide how finely to split work from this; buffers indexed by worker use threads().
int active_threads();

// Runs call(ctx, i, worker) for i in [0, n) on up to threads() threads; worker is in [0, threads()).
// Calls from inside a task, or while another thread is using the pool, run inline on the caller.
void parallel_run(ptrdiff_t n, void (*call)(void*, ptrdiff_t, int), void* ctx);

template <class F>
void parallel_for(ptrdiff_t n, F&& f) {
  if (n <= 0) return;
  if (n == 1 || active_threads() == 1) {
    for (ptrdiff_t i = 0; i < n; i++) f(i, 0);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  parallel_run(n, [](void* c, ptrdiff_t i, int w) { (*static_cast<Fn*>(c))(i, w); },
               const_cast<void*>(static_cast<const void*>(&f)));
}

// f(begin, end, worker) over [0, n) in chunks of at least min_chunk elements; inline when small.
template <class F>
void parallel_range(ptrdiff_t n, ptrdiff_t min_chunk, F&& f) {
  if (n <= 0) return;
  // Chunk boundaries follow threads(), not active_threads(), so reductions over chunks give the
  // same bits whether or not the pool is running solo; parallel_for adapts the execution.
  const ptrdiff_t t = threads();
  ptrdiff_t chunks = std::min<ptrdiff_t>((n + min_chunk - 1) / min_chunk, 4 * t);
  if (t == 1 || chunks <= 1) {
    f(ptrdiff_t{0}, n, 0);
    return;
  }
  const ptrdiff_t per = (n + chunks - 1) / chunks;
  chunks = (n + per - 1) / per;
  parallel_for(chunks, [&](ptrdiff_t c, int w) { f(c * per, std::min(n, (c + 1) * per), w); });
}

}  // namespace ck
