// Private: an allocator for large numeric work arrays. Above 1 MiB it hands out memory aligned to
// 2 MiB and advised for transparent huge pages (MADV_HUGEPAGE; Linux's default THP mode is
// "madvise"), so that touching a fresh 32 MiB vector costs 16 page faults instead of 8,192. On
// virtual machines a fault is expensive: before this, allocating and zeroing the work vectors of a
// 2048^2 poisson_2d solve took longer than the iteration itself. Elements are default-initialised:
// `BigVector<double> v(n)` leaves them unset (no zeroing pass); give a value, v(n, 0.0), to set them.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tts::detail {

template <typename T>
struct BigAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  static constexpr std::size_t kThreshold = std::size_t{1} << 20;

  BigAllocator() = default;
  template <typename U>
  BigAllocator(const BigAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages are small
#endif
    return static_cast<T*>(p);
  }
  // Default-initialise instead of value-initialise: work arrays are written before they are read.
  template <typename U>
  void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kThreshold) {
      ::operator delete(p);
    } else {
      std::free(p);
    }
  }
  template <typename U>
  bool operator==(const BigAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const BigAllocator<U>&) const noexcept {
    return false;
  }
};

template <typename T>
using BigVector = std::vector<T, BigAllocator<T>>;

}  // namespace tts::detail
