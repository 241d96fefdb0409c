#pragma once

#include <catch2/catch.hpp>

#include <string>

#include <troupe/core/errors.hpp>

namespace troupe::testing {

/// Runs `fn` and returns the Error code it throws (fails the test if it does not throw one).
template <class Fn>
Errc error_code_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("expected troupe::Error");
  return Errc::internal;
}

/// Runs `fn` and returns the message of the Error it throws (fails the test if it does not throw one).
template <class Fn>
std::string error_message_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected troupe::Error");
  return {};
}

} // namespace troupe::testing
