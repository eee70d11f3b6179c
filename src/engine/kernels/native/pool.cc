#include "pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef CK_HAVE_OPENBLAS
#include <cblas.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CK_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define CK_PAUSE() asm volatile("yield")
#else
#define CK_PAUSE() ((void)0)
#endif

namespace ck {

namespace {

// Spin this long before sleeping, so back-to-back kernel calls find the workers awake without
// holding a core for long when the engine is idle (or OpenBLAS's threads want it).
constexpr std::chrono::microseconds kSpin{50};

// Calls ready() with pause instructions in between until it returns true or kSpin has passed.
template <class Ready>
bool spin_until(Ready ready) {
  const auto end = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; i++) {
    if (ready()) return true;
    CK_PAUSE();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > end) return ready();
  }
}

thread_local bool t_in_pool = false;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Decides whether helpers pay off. Over windows of kWindowNs of parallel jobs it adds up how long
// the caller, having run out of tasks, waited for tasks that a helper had claimed. On an
// oversubscribed host a helper is descheduled mid-task for milliseconds, and such waits grow to
// a large part of every job: measured on the training step at load 13 on 2 cores, 2 threads took
// 29-38 s wall and 12 CPU-s against 19 s and 10 CPU-s for 1 thread. When waits exceed
// kMaxWaitShare of the window the pool runs solo (everything on the caller) for a while, then
// tries helpers again; the solo period doubles while the host stays busy.
class Helpfulness {
 public:
  bool solo(int64_t t) const { return t < solo_until_.load(std::memory_order_relaxed); }

  // COOKBOOK_POOL_ADAPT=0 keeps the helpers on however long they keep the caller waiting.
  static bool enabled() {
    static const bool on = [] {
      const char* env = std::getenv("COOKBOOK_POOL_ADAPT");
      return env == nullptr || std::string(env) != "0";
    }();
    return on;
  }

  // Forget what was measured (a new thread count starts with helpers).
  void reset() {
    solo_until_.store(0, std::memory_order_relaxed);
    elapsed_ = waited_ = 0;
    solo_ns_ = kMinSoloNs;
  }

  // Called by the one thread that owns the pool's run lock.
  void record(int64_t t_end, int64_t elapsed, int64_t waited) {
    elapsed_ += elapsed;
    waited_ += waited;
    if (elapsed_ < kWindowNs) return;
    if (enabled() && waited_ > kMaxWaitShare * static_cast<double>(elapsed_)) {
      solo_until_.store(t_end + solo_ns_, std::memory_order_relaxed);
      solo_ns_ = std::min(solo_ns_ * 2, kMaxSoloNs);
    } else {
      solo_ns_ = kMinSoloNs;
    }
    elapsed_ = waited_ = 0;
  }

 private:
  static constexpr int64_t kWindowNs = 20'000'000;
  static constexpr double kMaxWaitShare = 0.25;
  static constexpr int64_t kMinSoloNs = 250'000'000, kMaxSoloNs = 4'000'000'000;
  std::atomic<int64_t> solo_until_{0};
  int64_t elapsed_ = 0, waited_ = 0, solo_ns_ = kMinSoloNs;
};

class Pool {
 public:
  int size() const { return size_.load(std::memory_order_relaxed); }
  bool solo() const { return help_.solo(now_ns()); }

  void resize(int n) {
    std::lock_guard<std::mutex> run(run_mutex_);
    stop_workers();
    size_.store(n, std::memory_order_relaxed);
    help_.reset();
  }

  void run(ptrdiff_t n, void (*call)(void*, ptrdiff_t, int), void* ctx) {
    std::unique_lock<std::mutex> run(run_mutex_, std::try_to_lock);
    if (t_in_pool || !run.owns_lock()) {
      for (ptrdiff_t i = 0; i < n; i++) call(ctx, i, 0);
      return;
    }
    ensure_workers();
    const int64_t t0 = now_ns();
    {
      std::lock_guard<std::mutex> lock(m_);
      call_ = call;
      ctx_ = ctx;
      n_ = n;
      next_ = 0;
      pending_.store(n, std::memory_order_relaxed);
      epoch_.fetch_add(1, std::memory_order_release);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) work_cv_.notify_all();
    t_in_pool = true;
    for (;;) {
      ptrdiff_t i;
      {
        std::lock_guard<std::mutex> lock(m_);
        if (next_ >= n_) break;
        i = next_++;
      }
      call(ctx, i, 0);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
    t_in_pool = false;
    const int64_t t1 = now_ns();
    // Only tasks a worker has claimed can still be running.
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(m_);
      done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    const int64_t t2 = now_ns();
    help_.record(t2, t2 - t0, t2 - t1);
  }

 private:
  void ensure_workers() {
    const int want = size() - 1;
    if (static_cast<int>(workers_.size()) == want) return;
    stop_workers();
    stop_ = false;
    for (int w = 1; w <= want; w++) workers_.emplace_back([this, w] { worker(w); });
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  void worker(int id) {
    t_in_pool = true;
    uint64_t seen = epoch_.load(std::memory_order_acquire);
    for (;;) {
      // Take tasks while the current job has some left.
      for (;;) {
        void (*call)(void*, ptrdiff_t, int);
        void* ctx;
        ptrdiff_t i;
        {
          std::lock_guard<std::mutex> lock(m_);
          if (stop_) return;
          seen = epoch_.load(std::memory_order_relaxed);
          if (next_ >= n_) break;
          i = next_++;
          call = call_;
          ctx = ctx_;
        }
        call(ctx, i, id);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          std::lock_guard<std::mutex> lock(m_);
          done_cv_.notify_all();
        }
      }
      // Wait for the next job: spin briefly, then sleep.
      if (!spin_until([&] { return epoch_.load(std::memory_order_acquire) != seen; })) {
        std::unique_lock<std::mutex> lock(m_);
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        work_cv_.wait(lock, [&] { return stop_ || epoch_.load(std::memory_order_relaxed) != seen; });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  std::atomic<int> size_{1};
  std::mutex run_mutex_;  // one job at a time (several JS threads may call kernels)
  std::mutex m_;          // guards the job fields below
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::thread> workers_;
  bool stop_ = false;
  void (*call_)(void*, ptrdiff_t, int) = nullptr;
  void* ctx_ = nullptr;
  ptrdiff_t n_ = 0, next_ = 0;
  std::atomic<ptrdiff_t> pending_{0};
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> sleeping_{0};
  Helpfulness help_;
};

// Never destroyed: worker threads must not be joined during static destruction at process exit.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

std::mutex g_threads_m;
std::atomic<bool> g_threads_set{false};

void apply_threads(int n) {
  if (n < 1) n = 1;
  pool().resize(n);
#ifdef CK_HAVE_OPENBLAS
  // One OpenBLAS thread per call: gemm.cc splits products across our pool instead (see there).
  openblas_set_num_threads(1);
#endif
  g_threads_set.store(true, std::memory_order_release);
}

}  // namespace

int threads() {
  if (!g_threads_set.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(g_threads_m);
    if (!g_threads_set.load(std::memory_order_relaxed)) {
      const char* env = std::getenv("COOKBOOK_THREADS");
      int n = env != nullptr ? std::atoi(env) : 0;
      if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
      apply_threads(n);
    }
  }
  return pool().size();
}

void set_threads(int n) {
  std::lock_guard<std::mutex> lock(g_threads_m);
  apply_threads(n);
}

int active_threads() {
  const int n = threads();
  return n > 1 && pool().solo() ? 1 : n;
}

void parallel_run(ptrdiff_t n, void (*call)(void*, ptrdiff_t, int), void* ctx) { pool().run(n, call, ctx); }

}  // namespace ck
