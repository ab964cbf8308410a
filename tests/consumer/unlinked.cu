// Calls an instance library's entry point without linking one: tests/consumer/CMakeLists.txt checks
// that this program FAILS TO LINK (an undefined hipattn::prebuilt::unified_attention), rather than
// compiling the instance table in this translation unit.
#include "hipattn/dispatch/prebuilt.hpp"

int main() {
  hipattn::UnifiedAttentionParams p;
  hipattn::prebuilt::unified_attention(p, nullptr, 0, nullptr);
  return 0;
}
