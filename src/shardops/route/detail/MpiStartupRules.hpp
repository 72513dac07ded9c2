#pragma once
/// \file
/// \brief The rules of skip_absent_mtls() (route/MpiStartup.hpp), apart from the files and
/// the environment they read, so that tests can give them any input.

#include <optional>
#include <string>
#include <vector>

namespace shardops {
namespace detail {

/// The value Open MPI takes for MCA parameter \p name from a parameter file's text (lines
/// `name = value`, `#` comments): its last setting, or nullopt where the file has none.
std::optional<std::string> mca_param_in_file(const std::string& text, const std::string& name);

/// The MTL selection that also excludes \p absent, given the one in effect (\p current;
/// nullopt: none set). nullopt when nothing changes: every one already excluded, or a
/// selection that names MTLs to include (Open MPI then opens only those), or one that is
/// not a plain list of names.
std::optional<std::string> mtl_excluding(const std::optional<std::string>& current,
                                         const std::vector<std::string>& absent);

}  // namespace detail
}  // namespace shardops
