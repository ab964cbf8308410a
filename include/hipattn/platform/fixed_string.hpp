// hipattn/platform/fixed_string.hpp: a string built at compile time (instance names, kernel manifests).
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

namespace detail {
// Not constexpr: an append past the capacity calls it, which stops a constant evaluation.
HIPATTN_HOST_DEVICE inline void fixed_string_capacity_exceeded() {}
}  // namespace detail

// A literal-type string of at most kCapacity characters, built by constexpr appends. Longer input is
// a compile error where the string is a constant.
struct FixedString {
  static constexpr int kCapacity = 232;
  char s[kCapacity + 1] = {};
  int32_t n = 0;

  constexpr FixedString() = default;
  constexpr FixedString(const char* p) { *this += p; }  // NOLINT: implicit from a literal

  constexpr FixedString& operator+=(const char* p) {
    while (*p) {
      if (n >= kCapacity) {
        detail::fixed_string_capacity_exceeded();
        return *this;
      }
      s[n++] = *p++;
    }
    return *this;
  }
  constexpr FixedString& operator+=(const FixedString& o) { return *this += o.s; }
  constexpr FixedString& operator+=(int64_t v) {
    char d[24] = {};
    int k = 0;
    const bool neg = v < 0;
    uint64_t u = neg ? uint64_t(-(v + 1)) + 1 : uint64_t(v);
    do {
      d[k++] = char('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (neg) *this += "-";
    char r[24] = {};
    for (int i = 0; i < k; ++i) r[i] = d[k - 1 - i];
    return *this += r;
  }
  constexpr FixedString& operator+=(int32_t v) { return *this += int64_t(v); }
  // " key=value"
  template <class V>
  constexpr FixedString& field(const char* key, V value) {
    if (n > 0) *this += " ";
    *this += key;
    *this += "=";
    return *this += value;
  }
  constexpr const char* c_str() const { return s; }
  constexpr int32_t size() const { return n; }
  friend constexpr bool operator==(const FixedString& a, const FixedString& b) {
    if (a.n != b.n) return false;
    for (int i = 0; i < a.n; ++i)
      if (a.s[i] != b.s[i]) return false;
    return true;
  }
};

}  // namespace hipattn

// The kernel manifest: the first statement of every kernel of the library, naming what the kernel is
// as " key=value" fields (its role, then its configuration's name()). In an AMD device pass it is a
// used constant beside the kernel, whose symbol is the kernel's own with "16hipattn_manifest"
// appended (_ZZ<kernel's encoding>E16hipattn_manifest); tools/kernel_manifest.py reads it from the
// code object and writes <code object>.manifest.txt, one line per kernel: its symbol, a tab, the
// fields. The ISA checks, the model and the emulator find kernels by it, never by parsing C++ names.
// Elsewhere it compiles to nothing (the CUDA builds are unchanged by it).
#if defined(HIPATTN_BACKEND_HIP) && defined(__HIP_DEVICE_COMPILE__)
#define HIPATTN_KERNEL_MANIFEST(...) \
  [[gnu::used]] static constexpr ::hipattn::FixedString hipattn_manifest = (__VA_ARGS__)
#else
#define HIPATTN_KERNEL_MANIFEST(...) static_assert(true)
#endif
