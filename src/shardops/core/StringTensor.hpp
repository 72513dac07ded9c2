#pragma once
/// \file
/// \brief Host helpers that make and read string tensors (core/StringPool.hpp):
/// building one from values, reading its values back, counting its payload.

#include <cstdint>
#include <string>
#include <vector>

#include "shardops/core/Tensor.hpp"

namespace shardops {

/// Host: a string tensor holding \p values (row-major), its pool homed at \p home.
Tensor make_string_tensor(Shape shape, const std::vector<std::string>& values, int home = 0, StringFormat format = {});

/// \brief Host: a string tensor built from strings appended one at a time, costing 8
/// bytes of offset per string plus the bytes themselves (readers of large string
/// datasets use it instead of a std::string per element).
class StringTensorBuilder {
 public:
  explicit StringTensorBuilder(std::size_t expected_strings = 0);
  void append(const char* data, std::size_t length);
  std::size_t size() const noexcept { return offsets_.size() - 1; }
  /// The tensor of \p shape (as many elements as strings appended); the builder is emptied.
  Tensor finish(const Shape& shape, int home = 0, StringFormat format = {});

 private:
  std::vector<std::int64_t> offsets_{0};
  std::string bytes_;
};

/// Host: the strings of \p t, row-major. \throws InternalError if a handle names
/// another rank's pool (resolve those first: route/StringExchange.hpp).
std::vector<std::string> string_values(const Tensor& t);

/// Bytes of all strings \p t's elements name (its payload), counted once per element.
std::int64_t string_payload_bytes(const Tensor& t);

/// A string tensor of \p shape whose element e is entry e of a pool homed at \p home
/// (the caller attaches the pool).
Tensor sequential_string_handles(const Shape& shape, int home, const char* label);

/// \throws InternalError naming \p what unless every handle of \p t names an entry of
/// t's own pool (or is 0).
void check_own_string_handles(const Tensor& t, const char* what);

}  // namespace shardops
