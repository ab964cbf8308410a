// Includes the installed headers (host-only build) and validates one problem description.
#include <cstdio>

#include "hipattn/hipattn.hpp"

int main() {
  hipattn::UnifiedAttentionParams p;  // empty: validation must name the first bad field
  const hipattn::Status s = hipattn::validate(p);
  std::printf("hipattn consumer: validate(empty) -> %s: %s\n", s.field.c_str(), s.message.c_str());
  return s.ok() ? 1 : 0;  // an empty problem must not validate
}
