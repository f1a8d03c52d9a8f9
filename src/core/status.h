// Status and Result<T>: how every layer reports failure, without exceptions across layers.
//
// A Status is ok or carries a code and a human message that already names what failed
// (file:line:column, NVML function, path). Result<T> holds either a T or a non-ok Status.
// Convert errno with FromErrno(); NVML codes are converted in sources/nvml.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace vw {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // a flag, duration, size or option the user gave is wrong
  kParseError,        // input data does not have the expected shape
  kNotFound,          // file, GPU, PID, symbol absent
  kIoError,           // read/write failed
  kPermissionDenied,  // EACCES/EPERM, NVML_ERROR_NO_PERMISSION
  kUnavailable,       // library or device not usable now (no NVML, GPU lost)
  kTimeout,           // a call passed its deadline
  kInternal,          // a bug in vramwatch
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status ParseError(std::string m) { return {StatusCode::kParseError, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "parse_error: trace.csv:12:5: expected a number of MiB, got 'abc'"
  std::string ToString() const;

  // Returns a copy with "context: " prepended to the message.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// errno -> Status; `what` names the operation and object, e.g. "open /proc/12/stat".
Status FromErrno(int err, std::string_view what);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace vw

// Propagate a non-ok Status from an expression returning Status.
#define VW_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::vw::Status _vw_status = (expr);        \
    if (!_vw_status.ok()) return _vw_status; \
  } while (0)
