#pragma once
/// \file
/// \brief The SHARDOPS_* environment variables a job reads: one list of their names and
/// the values each takes, one parser.
///
/// Each setting is read where it matters (the lock's timeout when a lock is waited for,
/// huge pages at the first large allocation). The command line checks them all before any
/// work (check_settings), so that a value a setting does not take is a usage error at the
/// start, not a surprise in the middle, and a misspelt name is not silently ignored.

#include <optional>
#include <string>
#include <vector>

namespace shardops {

/// \brief A switch: 1/0 (also true/false, yes/no, on/off); nullopt where unset or empty.
/// \throws InvalidArgument naming the variable for any other value.
std::optional<bool> switch_setting(const char* name);

/// \brief One of the words the setting takes (settings.cpp's list); nullopt where unset or
/// empty. \throws InvalidArgument naming the variable and the words for any other value.
std::optional<std::string> word_setting(const char* name);

/// \brief A whole number >= 0; nullopt where unset or empty. \throws InvalidArgument.
std::optional<unsigned long long> count_setting(const char* name);

/// \brief A number of seconds >= 0; nullopt where unset or empty. \throws InvalidArgument.
std::optional<double> seconds_setting(const char* name);

/// \brief Checks every SHARDOPS_* variable of the environment that names a setting.
/// \throws InvalidArgument for the first value its setting does not take. Returns a warning
/// for each variable whose name is not a setting's but nearly is (a misspelling).
std::vector<std::string> check_settings();

/// \brief The settings a job's ranks must share, as text ("NAME=value" of each one set,
/// in the list's order): SHARDOPS_MAP_INPUTS and SHARDOPS_STREAM_OUTPUTS, which choose a
/// path through collective calls (ranks that read them differently hung). The others are
/// each rank's own.
std::string shared_settings_text();

}  // namespace shardops
