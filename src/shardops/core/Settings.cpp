#include "shardops/core/Settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "shardops/core/Error.hpp"
#include "shardops/core/NumberText.hpp"

extern char** environ;

namespace shardops {

namespace {

enum class Kind { Switch, Word, Count, Seconds, Free };

struct Setting {
  const char* name;
  Kind kind;
  std::vector<std::string> words;  ///< Kind::Word: the values it takes
  bool shared = false;             ///< every rank must see the same value (shared_settings_text)
};

// Every setting a job reads (docs/cli.md, "Environment"). Shared: those that choose a path
// through collective calls (how inputs are read, whether outputs stream); the rest are each
// rank's own (its memory, its MPI's abilities, rank 0's lock wait).
const std::vector<Setting>& settings() {
  static const std::vector<Setting> list = {
      {"SHARDOPS_LOCK_TIMEOUT", Kind::Seconds, {}},
      {"SHARDOPS_GPU_AWARE_MPI", Kind::Switch, {}},
      {"SHARDOPS_MPI_STAGING", Kind::Word, {"host", "auto"}},
      {"SHARDOPS_HUGE_PAGES", Kind::Switch, {}},
      {"SHARDOPS_REUSE_MEMORY_MB", Kind::Count, {}},
      {"SHARDOPS_MAP_INPUTS", Kind::Word, {"0", "1", "all"}, true},
      {"SHARDOPS_STREAM_OUTPUTS", Kind::Switch, {}, true},
      {"SHARDOPS_SKIP_ABSENT_MTLS", Kind::Switch, {}},
      {"SHARDOPS_ONE_RANK_MPI", Kind::Switch, {}},
      {"SHARDOPS_TEST_PAUSE", Kind::Free, {}},  // the tests' hook (core/Phases.hpp)
  };
  return list;
}

const Setting& setting(const char* name) {
  for (const Setting& s : settings()) {
    if (std::strcmp(s.name, name) == 0) return s;
  }
  throw InternalError(std::string("no setting ") + name);
}

std::optional<std::string> value_of(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

[[noreturn]] void refuse(const char* name, const std::string& value, const std::string& takes) {
  throw InvalidArgument(std::string(name) + "='" + value + "' is not a value it takes: " + takes);
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i)
    text += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return text;
}

// Edits (insert, delete, replace) that turn a into b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

void check(const Setting& s) {
  switch (s.kind) {
    case Kind::Switch: static_cast<void>(switch_setting(s.name)); break;
    case Kind::Word: static_cast<void>(word_setting(s.name)); break;
    case Kind::Count: static_cast<void>(count_setting(s.name)); break;
    case Kind::Seconds: static_cast<void>(seconds_setting(s.name)); break;
    case Kind::Free: break;
  }
}

}  // namespace

std::optional<bool> switch_setting(const char* name) {
  static_cast<void>(setting(name));
  const std::optional<std::string> v = value_of(name);
  if (!v) return std::nullopt;
  // In any case: TRUE, On and Yes are as common in job scripts as their lower-case forms.
  std::string word = *v;
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* yes : {"1", "true", "yes", "on"}) {
    if (word == yes) return true;
  }
  for (const char* no : {"0", "false", "no", "off"}) {
    if (word == no) return false;
  }
  refuse(name, *v, "1 or 0 (true/false, yes/no, on/off, in any case)");
}

std::optional<std::string> word_setting(const char* name) {
  const Setting& s = setting(name);
  const std::optional<std::string> v = value_of(name);
  if (!v) return std::nullopt;
  if (std::find(s.words.begin(), s.words.end(), *v) == s.words.end()) refuse(name, *v, joined(s.words));
  return v;
}

std::optional<unsigned long long> count_setting(const char* name) {
  static_cast<void>(setting(name));
  const std::optional<std::string> v = value_of(name);
  if (!v) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v->c_str(), &end, 10);
  if (!std::isdigit(static_cast<unsigned char>((*v)[0])) || *end != '\0' || errno == ERANGE)
    refuse(name, *v, "a whole number");
  return n;
}

std::optional<double> seconds_setting(const char* name) {
  static_cast<void>(setting(name));
  const std::optional<std::string> v = value_of(name);
  if (!v) return std::nullopt;
  const std::optional<double> seconds = decimal_of(*v);
  if (!seconds || !(*seconds >= 0.0) || !std::isfinite(*seconds)) refuse(name, *v, "a number of seconds >= 0");
  return seconds;
}

std::string shared_settings_text() {
  std::string text;
  for (const Setting& s : settings()) {
    if (!s.shared) continue;
    if (const std::optional<std::string> v = value_of(s.name))
      text += (text.empty() ? "" : " ") + std::string(s.name) + "=" + *v;
  }
  return text;
}

std::vector<std::string> check_settings() {
  for (const Setting& s : settings()) check(s);
  std::vector<std::string> warnings;
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    const std::string entry(*env);
    if (entry.rfind("SHARDOPS_", 0) != 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    const Setting* nearest = nullptr;
    std::size_t distance = 0;
    for (const Setting& s : settings()) {
      const std::size_t d = edit_distance(name, s.name);
      if (nearest == nullptr || d < distance) nearest = &s, distance = d;
    }
    if (distance > 0 && distance <= 2)
      warnings.push_back(name + " is not a setting of shardops (did you mean " + nearest->name + "?); it is ignored");
  }
  return warnings;
}

}  // namespace shardops
