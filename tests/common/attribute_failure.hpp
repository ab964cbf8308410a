// tests/common/attribute_failure.hpp: failure injection for the dynamic shared-memory limit
// (hipattn::rt::ensure_max_dynamic_shared), kept out of the library's public headers.
#pragma once
#include "hipattn/platform/runtime.hpp"

namespace hipattn::rt::testing {

// The next runtime call of ensure_max_dynamic_shared (any thread, any kernel) asks for a limit no
// device grants, so it fails as a real failure does (the runtime returns the error and records it as
// its last error); and every limit remembered so far is forgotten, so that the next launch does call
// the runtime. One failure per call of this function.
inline void fail_next_attribute_set() {
  kernel_attribute_cache().clear();
  detail::force_attribute_failure.store(true);
}

}  // namespace hipattn::rt::testing
