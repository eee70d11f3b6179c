// The native half of the safetensors loader: the file is memory-mapped and every tensor is
// converted to float32 straight from the mapping into the array that will hold it, on every pool
// thread. Compared with positioned reads into a staging buffer and a widening pass, this skips one
// copy of the file through fresh memory (measured by `npm run bench:load`). What remains is the
// cost of obtaining the fresh float32 arrays: on the development VM (Firecracker), touching 1.3 GB
// of new memory takes 1.2 s wall and 0.45 s CPU even from a plain JavaScript fill, against 0.05 s
// of conversion; this loader runs at that floor. Transparent huge pages for the arrays (madvise)
// measured 4-6x slower there, MAP_POPULATE / MADV_POPULATE_WRITE / no MADV_SEQUENTIAL no faster.

#include "decode.h"

#if defined(_WIN32)
// No POSIX mmap: safetensors/nativeRead.ts does not offer this path on Windows (positioned reads).
namespace ck {
std::string widen_from_file(const std::string&, const std::vector<WidenJob>&) {
  return "memory-mapped loading is not available on this platform";
}
std::string map_file(const std::string&, void** data, size_t* size) {
  *data = nullptr;
  *size = 0;
  return "memory-mapped loading is not available on this platform";
}
std::string map_file_range(const std::string&, size_t, size_t, void** data, size_t* size) {
  *data = nullptr;
  *size = 0;
  return "memory-mapped loading is not available on this platform";
}
void unmap_file(void*, size_t) {}
}  // namespace ck
#else

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "half.h"
#include "pool.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ck {

namespace {

void convert(StoredType type, const unsigned char* src, float* dst, size_t n) {
  switch (type) {
    case StoredType::F32:
      std::memcpy(dst, src, n * sizeof(float));
      break;
    case StoredType::BF16: {
      // bf16 is the top half of a float32: a 16-bit shift, exact.
      for (size_t i = 0; i < n; i++) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(dst + i, &bits, 4);
      }
      break;
    }
    case StoredType::F16: {
      size_t i = 0;
#if defined(__F16C__)
      for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
      }
#endif
      for (; i < n; i++) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = half_to_float(h);
      }
      break;
    }
    case StoredType::F64:
      for (size_t i = 0; i < n; i++) {
        double d;
        std::memcpy(&d, src + 8 * i, 8);
        dst[i] = static_cast<float>(d);
      }
      break;
  }
}

size_t stored_size(StoredType t) {
  switch (t) {
    case StoredType::F32: return 4;
    case StoredType::BF16: return 2;
    case StoredType::F16: return 2;
    case StoredType::F64: return 8;
  }
  return 4;
}

struct Block {
  size_t job, begin, end;  // elements [begin, end) of jobs[job]
};

// Opens `file` read-only and gives its size; on failure returns why (and leaves no fd open).
std::string open_with_size(const std::string& file, int* fd, size_t* size) {
  *fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (*fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st;
  if (fstat(*fd, &st) != 0) {
    const int e = errno;
    close(*fd);
    *fd = -1;
    return std::string("cannot stat: ") + std::strerror(e);
  }
  *size = static_cast<size_t>(st.st_size);
  return "";
}

// Maps `size` bytes of `fd` read-only and closes it (the mapping keeps the file); returns why not.
std::string map_and_close(int fd, size_t size, void** map) {
  *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (*map == MAP_FAILED) {
    *map = nullptr;
    return std::string("cannot map: ") + std::strerror(map_errno);
  }
  return "";
}

}  // namespace

std::string widen_from_file(const std::string& file, const std::vector<WidenJob>& unsorted) {
  // In file order, so that each group below covers one stretch of the file.
  std::vector<WidenJob> jobs(unsorted);
  std::sort(jobs.begin(), jobs.end(), [](const WidenJob& a, const WidenJob& b) { return a.offset < b.offset; });
  int fd;
  size_t size;
  if (std::string err = open_with_size(file, &fd, &size); !err.empty()) return err;
  for (const WidenJob& j : jobs) {
    if (j.offset + j.count * stored_size(j.type) > size) {
      close(fd);
      return "file ends at byte " + std::to_string(size) + " inside a tensor at offset " + std::to_string(j.offset) +
             " (truncated?)";
    }
  }
  if (size == 0 || jobs.empty()) {
    close(fd);
    return "";
  }
  void* map;
  if (std::string err = map_and_close(fd, size, &map); !err.empty()) return err;
  madvise(map, size, MADV_SEQUENTIAL);
  const unsigned char* base = static_cast<const unsigned char*>(map);

  // Blocks of up to 2 MiB of output, in file order, taken dynamically by the pool threads in groups
  // of about 32 MiB of output (a big tensor spans several groups). After a group, its whole pages
  // of the mapping are dropped from this process (they stay in the page cache; a page a later
  // group shares is read back from there), so the mapping adds at most about one group's source
  // bytes to the peak resident memory instead of the whole file (or of a 256 MiB group, before:
  // 128 MiB of bf16 pages on top of SmolLM2-135M's float32 weights while they loaded).
  constexpr size_t kBlock = 1 << 19;
  constexpr size_t kGroup = 1 << 23;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<Block> blocks;
  for (size_t ji = 0; ji < jobs.size(); ji++)
    for (size_t b = 0; b < jobs[ji].count; b += kBlock) blocks.push_back({ji, b, std::min(jobs[ji].count, b + kBlock)});
  for (size_t first = 0; first < blocks.size();) {
    size_t last = first, elements = 0, lo = SIZE_MAX, hi = 0;
    for (; last < blocks.size() && (last == first || elements < kGroup); last++) {
      const Block& b = blocks[last];
      const WidenJob& j = jobs[b.job];
      elements += b.end - b.begin;
      lo = std::min(lo, j.offset + b.begin * stored_size(j.type));
      hi = std::max(hi, j.offset + b.end * stored_size(j.type));
    }
    parallel_for(static_cast<ptrdiff_t>(last - first), [&](ptrdiff_t i, int) {
      const Block& b = blocks[first + static_cast<size_t>(i)];
      const WidenJob& j = jobs[b.job];
      convert(j.type, base + j.offset + b.begin * stored_size(j.type), j.dst + b.begin, b.end - b.begin);
    });
    // Whole pages inside [lo, hi) only: a neighbouring block of the next group may still need the edges.
    const size_t a = (lo + page - 1) / page * page, e = hi / page * page;
    if (e > a) madvise(const_cast<unsigned char*>(base) + a, e - a, MADV_DONTNEED);
    first = last;
  }
  munmap(map, size);
  return "";
}

std::string map_file(const std::string& file, void** data, size_t* size) {
  *data = nullptr;
  *size = 0;
  int fd;
  size_t n;
  if (std::string err = open_with_size(file, &fd, &n); !err.empty()) return err;
  if (n == 0) {
    close(fd);
    return "";
  }
  // Read-only: the kernels only read frozen weights, and a stray write faults instead of silently
  // diverging from the file. The pages are the page cache's own (no copy, no fresh memory); they are
  // faulted in by the first pass that reads them (readahead is asked for now).
  void* map;
  if (std::string err = map_and_close(fd, n, &map); !err.empty()) return err;
  madvise(map, n, MADV_WILLNEED);
  *data = map;
  *size = n;
  return "";
}

std::string map_file_range(const std::string& file, size_t offset, size_t length, void** data, size_t* size) {
  *data = nullptr;
  *size = 0;
  int fd;
  size_t n;
  if (std::string err = open_with_size(file, &fd, &n); !err.empty()) return err;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (offset % page != 0 || offset > n || (length > 0 && length > n - offset)) {
    close(fd);
    return "cannot map bytes " + std::to_string(offset) + "+" + std::to_string(length) + " of a " + std::to_string(n) +
           "-byte file (the offset must be a multiple of " + std::to_string(page) + " inside the file)";
  }
  const size_t len = length > 0 ? length : n - offset;
  if (len == 0) {
    close(fd);
    return "";
  }
  void* map = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(offset));
  const int map_errno = errno;
  close(fd);
  if (map == MAP_FAILED) return std::string("cannot map: ") + std::strerror(map_errno);
  madvise(map, len, MADV_WILLNEED);
  *data = map;
  *size = len;
  return "";
}

void unmap_file(void* data, size_t size) {
  if (data != nullptr && size > 0) munmap(data, size);
}

}  // namespace ck

#endif  // !_WIN32
