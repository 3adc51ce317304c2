// The two kinds of failure a method reports to JavaScript (napiArgs.h `guarded` throws them): an argument
// refused, and anything else. Both carry a message meant for the caller; neither is ever a crash.

#pragma once

#include <stdexcept>
#include <string>

namespace arkivector {

/** An error thrown to JavaScript as an Error (code ERR_ARKIVECTOR_NATIVE). */
struct JsError : std::runtime_error {
  explicit JsError(const std::string& m) : std::runtime_error(m) {}
};

/** An argument of the wrong type, shape or range: thrown to JavaScript as a TypeError. */
struct ArgError : JsError {
  explicit ArgError(const std::string& m) : JsError(m) {}
};

}  // namespace arkivector
