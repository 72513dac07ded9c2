#pragma once
/// \file
/// \brief Decimal numbers in text, whatever the C locale says: a program that loads the
/// library (Python, after `locale.setlocale`) may have set one with a decimal comma, which
/// printf and strtod follow; messages and settings must read the same everywhere.

#include <optional>
#include <string>

namespace shardops {

/// \p value with \p digits digits after the point ("0.15"), always a point.
std::string fixed_text(double value, int digits);

/// The number \p text holds, written with a point ("0.5", "300", "1e3"), whole or nothing:
/// std::nullopt if anything else is in it.
std::optional<double> decimal_of(const std::string& text);

}  // namespace shardops
