// hipattn/problem/validate_toolkit.hpp: generic host-side checks of a problem description (counts, sets,
// strided tensors, pointers) that accumulate their findings in a ValidationReport.
//
// A family's rules (problem/<family>_rules.hpp: unified, paged decode, dense prefill, MLA, merge) describe their
// fields and tensors and call these checks; each failed check appends one Issue naming the field exactly
// as the params struct spells it, with a message carrying the bad value(s). Nothing here stops at the
// first failure: a rule that depends on another one (a division by a count, an index into a host
// array) is guarded by the caller, so that the report lists every independent violation, first found
// first. throw_if_error throws the first issue's code and field with a message listing them all.
//
// Strided tensors are described innermost dimension first, as Dims (extent, stride in elements, and the
// field names of both). The rules fixed here (the tests pin them):
//   * Strides must be >= 0 and < 2^31 elements (kernels carry strides as 32-bit values; offsets are
//     formed in 64 bits).
//   * "No overlap": sort the dims by stride (ties keep the innermost dim first) and require each stride
//     >= previous stride * previous extent, starting from 1 (a stride of 0 on a dim of extent > 1 is an
//     overlap too). Dims of extent 1 are ignored, and a tensor with no element (an extent <= 0) is
//     never checked.
//   * Stride alignment: every stride of a dim with extent > 1, in bytes, is a multiple of the alignment;
//     the contiguous dim (stride name "1") is skipped.
//   * Byte extent: the larger of extent * stride of the outermost dim and 1 + sum (extent - 1) * stride
//     of all dims, times the element size (64-bit arithmetic, saturating).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/error.hpp"

namespace hipattn {

// One violated rule: its code, the offending field (spelled as in the params struct, or the host array
// or bound it breaks) and a message carrying the bad value(s).
struct Issue {
  ErrorCode code = ErrorCode::invalid_argument;
  std::string field;
  std::string message;
};

// Every issue one validation found, in the order the checks ran (the first is the one to fix first).
// Empty, and ok(), when the problem is valid; an ok report allocates nothing.
struct ValidationReport {
  std::vector<Issue> issues;

  bool ok() const noexcept { return issues.empty(); }
  size_t size() const noexcept { return issues.size(); }
  // The first issue; only when !ok().
  const Issue& first() const { return issues.front(); }
  // The first issue's code, field and message; invalid_argument, "" and "" when ok().
  ErrorCode code() const noexcept { return ok() ? ErrorCode::invalid_argument : issues.front().code; }
  const std::string& field() const noexcept { return ok() ? empty_string() : issues.front().field; }
  const std::string& message() const noexcept { return ok() ? empty_string() : issues.front().message; }
  // The first issue naming `field_name`, or nullptr.
  const Issue* find(std::string_view field_name) const noexcept {
    for (const Issue& i : issues)
      if (i.field == field_name) return &i;
    return nullptr;
  }
  bool has(std::string_view field_name) const noexcept { return find(field_name) != nullptr; }

  void add(ErrorCode code, std::string field_name, std::string msg) {
    issues.push_back(Issue{code, std::move(field_name), std::move(msg)});
  }
  void invalid(std::string field_name, std::string msg) {
    add(ErrorCode::invalid_argument, std::move(field_name), std::move(msg));
  }
  void unsupported(std::string field_name, std::string msg) {
    add(ErrorCode::unsupported, std::move(field_name), std::move(msg));
  }
  // Appends every issue of `other`.
  void append(const ValidationReport& other) { issues.insert(issues.end(), other.issues.begin(), other.issues.end()); }

  // "field: message" of every issue, joined by "; ".
  std::string summary() const {
    std::string s;
    for (const Issue& i : issues) {
      if (!s.empty()) s += "; ";
      s += i.field + ": " + i.message;
    }
    return s;
  }

 private:
  static const std::string& empty_string() noexcept {
    static const std::string e;
    return e;
  }
};

// Throw hipattn::Error with the first issue's code and field when `r` is not ok; the message is the
// first issue's, followed by the other issues ("[+N more: field: message; ...]"). Does nothing when ok.
inline void throw_if_error(const ValidationReport& r) {
  if (r.ok()) return;
  const Issue& f = r.first();
  std::string m = f.message;
  if (r.size() > 1) {
    m += " [+" + std::to_string(r.size() - 1) + " more: ";
    for (size_t i = 1; i < r.size(); ++i) {
      if (i > 1) m += "; ";
      m += r.issues[i].field + ": " + r.issues[i].message;
    }
    m += "]";
  }
  throw Error(f.code, f.field, m);
}

namespace validation {

// ---- formatting of bad values ----

inline std::string num(int64_t v) { return std::to_string(v); }
inline std::string flt(float v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  return buf;
}
inline std::string ptr(const void* p) {
  if (p == nullptr) return "nullptr";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}
// dtype_name, or "DType(n)" for a value outside the enum.
inline std::string dtype_str(DType d) {
  const std::string_view n = dtype_name(d);
  if (n == "?") return "DType(" + num(static_cast<int>(d)) + ")";
  return std::string(n);
}
// "a, b, c" (or "a or b" with `last_sep` " or ").
template <class T, class Fmt>
std::string join(std::span<const T> values, Fmt&& fmt, const char* last_sep = ", ") {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += (i + 1 == values.size()) ? last_sep : ", ";
    s += fmt(values[i]);
  }
  return s;
}

// ---- saturating 64-bit arithmetic (extents never wrap) ----

// a * b for a, b >= 0, saturating at INT64_MAX; 0 when either is <= 0.
inline int64_t sat_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}
// a + b for a, b >= 0, saturating at INT64_MAX.
inline int64_t sat_add(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

// ---- scalars ----

// `field` (value) >= min: "field (v) must be >= min". Returns whether it holds.
inline bool at_least(ValidationReport& r, const char* field, int64_t value, int64_t min) {
  if (value >= min) return true;
  r.invalid(field, std::string(field) + " (" + num(value) + ") must be >= " + num(min));
  return false;
}

// `value` is one of `allowed`: "field (v) is not one of a, b, c" with `code` (usually unsupported).
inline bool one_of(ValidationReport& r, ErrorCode code, const char* field, int64_t value, std::span<const int32_t> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return true;
  r.add(code, field,
        std::string(field) + " (" + num(value) + ") is not one of " + join(allowed, [](int32_t v) { return num(v); }));
  return false;
}

// `d` is one of `allowed`: "field (dtype) must be a or b" with `code` (usually unsupported).
inline bool dtype_in(ValidationReport& r, ErrorCode code, const char* field, DType d, std::initializer_list<DType> allowed) {
  if (std::find(allowed.begin(), allowed.end(), d) != allowed.end()) return true;
  const std::span<const DType> a(allowed.begin(), allowed.size());
  r.add(code, field, std::string(field) + " (" + dtype_str(d) + ") must be " + join(a, dtype_str, " or "));
  return false;
}

// One enumerator of an enumeration field and its name (enum_in).
template <class E>
struct EnumName {
  E value;
  const char* name;
};

// An enumeration field, which a C caller may fill with any byte: `value` is one of `allowed`, else
// "field (v) is not one of a, b, c" (invalid_argument), v the underlying integer.
template <class E>
inline bool enum_in(ValidationReport& r, const char* field, E value,
                    std::initializer_list<EnumName<std::type_identity_t<E>>> allowed) {
  for (const EnumName<E>& a : allowed)
    if (a.value == value) return true;
  const std::span<const EnumName<E>> a(allowed.begin(), allowed.size());
  r.invalid(field, std::string(field) + " (" + num(static_cast<int64_t>(static_cast<std::underlying_type_t<E>>(value))) +
                       ") is not one of " + join(a, [](const EnumName<E>& e) { return std::string(e.name); }));
  return false;
}

// ---- strided tensors ----

// One dimension of a strided tensor.
struct Dim {
  int64_t extent;
  int64_t stride;           // elements
  const char* extent_name;  // the field giving the extent ("num_q_heads")
  const char* stride_name;  // the field giving the stride ("q_stride_head"); "1" for the contiguous dim
};

// Whether `d` is the contiguous dim (stride 1 by contract, not a field).
inline bool is_unit(const Dim& d) { return d.stride_name[0] == '1' && d.stride_name[1] == '\0'; }

template <size_t N>
bool has_no_element(const std::array<Dim, N>& dims) {
  for (const Dim& d : dims)
    if (d.extent <= 0) return true;
  return false;
}

// Every stride >= 0 and < 2^31 elements; one issue per bad stride. Returns whether all hold.
template <size_t N>
bool strides_in_range(ValidationReport& r, const std::array<Dim, N>& dims) {
  bool good = true;
  for (const Dim& d : dims) {
    if (d.stride < 0) {
      r.invalid(d.stride_name, std::string(d.stride_name) + " (" + num(d.stride) + ") must be >= 0");
      good = false;
    } else if (d.stride > INT32_MAX) {
      r.invalid(d.stride_name, std::string(d.stride_name) + " (" + num(d.stride) + ") must be < 2^31 elements");
      good = false;
    }
  }
  return good;
}

// A lone stride field (a row stride of a 2D array): < 2^31 elements.
inline bool stride_below_2_31(ValidationReport& r, const char* field, int64_t stride) {
  if (stride <= INT32_MAX) return true;
  r.invalid(field, std::string(field) + " (" + num(stride) + ") must be < 2^31 elements");
  return false;
}

// No two index tuples of `tensor` address the same element (see the header comment). `dims` lists the
// innermost dimension first so that ties in the stride sort name the outer dim. One issue at most (the
// first overlapping dim in stride order). Returns whether it holds.
template <size_t N>
bool no_overlap(ValidationReport& r, const char* tensor, std::array<Dim, N> dims) {
  if (has_no_element(dims)) return true;
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  int64_t need = 1;
  const Dim* prev = nullptr;
  for (const Dim& d : dims) {
    if (d.extent <= 1) continue;
    if (d.stride < need) {
      std::string m = std::string(d.stride_name) + " (" + num(d.stride) + ") makes " + tensor + " overlap: its dimension (" +
                      d.extent_name + " = " + num(d.extent) + ") needs a stride >= " + num(need);
      if (prev != nullptr) {
        m += " = ";
        m += is_unit(*prev) ? std::string("1") : std::string(prev->stride_name) + " (" + num(prev->stride) + ")";
        m += " * " + std::string(prev->extent_name) + " (" + num(prev->extent) + ")";
      }
      r.invalid(d.stride_name, std::move(m));
      return false;
    }
    need = sat_mul(d.stride, d.extent);
    prev = &d;
  }
  return true;
}

// Every stride of a dim with extent > 1 (the contiguous dim excepted) is a multiple of `align_bytes` in
// bytes; one issue per bad stride. Returns whether all hold.
template <size_t N>
bool strides_aligned(ValidationReport& r, const std::array<Dim, N>& dims, int64_t elem_bytes, int64_t align_bytes) {
  if (has_no_element(dims)) return true;
  bool good = true;
  for (const Dim& d : dims) {
    if (d.extent <= 1 || is_unit(d)) continue;
    const int64_t bytes = d.stride * elem_bytes;
    if (bytes % align_bytes != 0) {
      r.invalid(d.stride_name, std::string(d.stride_name) + " (" + num(d.stride) + " elements = " + num(bytes) +
                                   " bytes) is not a multiple of " + num(align_bytes) + " bytes");
      good = false;
    }
  }
  return good;
}

// strides_in_range, then (when they hold) no_overlap, then (when it holds and elem_bytes > 0)
// strides_aligned: the whole layout check of one tensor, at most one stage's issues.
template <size_t N>
bool tensor_layout(ValidationReport& r, const char* tensor, const std::array<Dim, N>& dims, int64_t elem_bytes,
                   int64_t align_bytes) {
  return strides_in_range(r, dims) && no_overlap(r, tensor, dims) &&
         (elem_bytes <= 0 || strides_aligned(r, dims, elem_bytes, align_bytes));
}

// 1 + sum (extent - 1) * |stride|: the elements spanned by the tensor; 0 when it has no element.
template <size_t N>
int64_t span_elements(const std::array<Dim, N>& dims) {
  if (has_no_element(dims)) return 0;
  int64_t s = 1;
  for (const Dim& d : dims) s = sat_add(s, sat_mul(d.extent - 1, d.stride < 0 ? -d.stride : d.stride));
  return s;
}

// The byte extent of the tensor (see the header comment); dims innermost first, so dims[N - 1] is the
// outermost.
template <size_t N>
int64_t extent_bytes(const std::array<Dim, N>& dims, int64_t elem_bytes) {
  static_assert(N > 0);
  const Dim& outer = dims[N - 1];
  return sat_mul(std::max(sat_mul(outer.extent, outer.stride), span_elements(dims)), elem_bytes);
}

// ---- pointers ----

// A pointer field and what it must satisfy.
struct PtrRule {
  const void* p;
  const char* name;
  bool required;      // must be non-null
  int64_t alignment;  // bytes
  const char* why;    // why it is required (for the message)
};

// Every required pointer is non-null ("name (nullptr) is required (why)"), then every pointer is
// aligned ("name (0x..) is not N-byte aligned"); one issue per bad pointer. Returns whether all hold.
inline bool pointers(ValidationReport& r, std::span<const PtrRule> rules) {
  bool good = true;
  for (const PtrRule& p : rules)
    if (p.required && p.p == nullptr) {
      r.invalid(p.name, std::string(p.name) + " (nullptr) is required (" + p.why + ")");
      good = false;
    }
  for (const PtrRule& p : rules)
    if (p.alignment > 0 && reinterpret_cast<uintptr_t>(p.p) % static_cast<uintptr_t>(p.alignment) != 0) {
      r.invalid(p.name, std::string(p.name) + " (" + ptr(p.p) + ") is not " + num(p.alignment) + "-byte aligned");
      good = false;
    }
  return good;
}

// ---- repeated findings in a host array ----

// Reports the first violation of one rule over many elements (sequences, table entries) and counts the
// others: the first add() appends an issue, later ones are counted, finish() appends " (and N more)" to
// that issue's message. Keeps a report short on a large batch while still saying how many are bad.
class FirstOf {
 public:
  FirstOf(ValidationReport& r, const char* what_more) : r_(r), what_(what_more) {}
  FirstOf(const FirstOf&) = delete;
  FirstOf& operator=(const FirstOf&) = delete;
  ~FirstOf() { finish(); }
  void add(ErrorCode code, std::string field, std::string message) {
    if (index_ < 0) {
      index_ = static_cast<int64_t>(r_.size());
      r_.add(code, std::move(field), std::move(message));
    } else {
      ++more_;
    }
  }
  void invalid(std::string field, std::string message) { add(ErrorCode::invalid_argument, std::move(field), std::move(message)); }
  bool any() const { return index_ >= 0; }
  void finish() {
    if (more_ > 0) r_.issues[static_cast<size_t>(index_)].message += " (and " + num(more_) + " more " + what_ + ")";
    more_ = 0;
  }

 private:
  ValidationReport& r_;
  const char* what_;
  int64_t index_ = -1;
  int64_t more_ = 0;
};

// The logit parameters every family shares: scale finite and > 0, softcap finite and >= 0 (0
// disables it), window_left >= -1 (-1 disables the window).
inline void logit_params(ValidationReport& r, float scale, float softcap, int32_t window_left) {
  if (!std::isfinite(scale) || !(scale > 0.f)) r.invalid("scale", "scale (" + flt(scale) + ") must be finite and > 0");
  if (!std::isfinite(softcap) || softcap < 0.f)
    r.invalid("softcap", "softcap (" + flt(softcap) + ") must be finite and >= 0 (0 disables it)");
  if (window_left < -1)
    r.invalid("window_left", "window_left (" + num(window_left) + ") must be >= 0, or -1 to disable the window");
}

// A host copy of a cumulative length array (cu_seqlens) of n sequences: n + 1 entries, starting at 0,
// never decreasing, ending at `tokens` (the count named `tokens_name`). Returns whether it has n + 1
// entries (the caller's per-sequence checks need that).
inline bool cumulative_lengths(ValidationReport& r, const char* field, std::span<const int32_t> cu, size_t n, int64_t tokens,
                               const char* tokens_name) {
  const std::string f(field);
  if (cu.size() != n + 1) {
    r.invalid(f, f + " has " + num(int64_t(cu.size())) + " entries; num_seqs (" + num(int64_t(n)) + ") + 1 = " +
                     num(int64_t(n) + 1) + " expected");
    return false;
  }
  if (cu[0] != 0) r.invalid(f, f + "[0] (" + num(cu[0]) + ") must be 0");
  FirstOf decreasing(r, "decreasing indices");
  for (size_t i = 1; i <= n; ++i)
    if (cu[i] < cu[i - 1])
      decreasing.invalid(f, f + " decreases at index " + num(int64_t(i)) + ": " + f + "[" + num(int64_t(i)) + "] (" +
                                num(cu[i]) + ") < " + f + "[" + num(int64_t(i) - 1) + "] (" + num(cu[i - 1]) + ")");
  decreasing.finish();
  if (cu[n] != tokens)
    r.invalid(f, f + "[" + num(int64_t(n)) + "] (" + num(cu[n]) + ") must equal " + tokens_name + " (" + num(tokens) + ")");
  return true;
}

}  // namespace validation
}  // namespace hipattn
