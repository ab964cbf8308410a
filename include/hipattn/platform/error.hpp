// hipattn/platform/error.hpp: the library's typed errors (host side).
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace hipattn {

// What kind of failure an Error is.
enum class ErrorCode {
  invalid_argument,  // a field of the problem is inconsistent or out of range
  unsupported,       // a valid request that no instantiation serves (head size, dtype pair, target)
  runtime,           // the HIP / CUDA runtime reported a failure
  workspace,         // the workspace passed is too small or misaligned
};

inline const char* error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::runtime: return "runtime";
    case ErrorCode::workspace: return "workspace";
  }
  return "?";
}

// The exception every hipattn entry point throws. `field()` names the offending field
// (or the failing runtime call) and `what()` carries the whole message.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string field, const std::string& message)
      : std::runtime_error(std::string("hipattn: ") + error_code_name(code) + ": " + field + ": " + message),
        code_(code),
        field_(std::move(field)) {}
  ErrorCode code() const noexcept { return code_; }
  const std::string& field() const noexcept { return field_; }

 private:
  ErrorCode code_;
  std::string field_;
};

}  // namespace hipattn
