#include "shardops/route/MpiStartup.hpp"

#include <mpi.h>

#include <glob.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "shardops/core/Settings.hpp"
#include "shardops/route/detail/MpiStartupRules.hpp"

namespace shardops {

namespace detail {

namespace {

std::string trimmed(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool is_component_name(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> mca_param_in_file(const std::string& text, const std::string& name) {
  std::optional<std::string> value;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    if (trimmed(line.substr(0, eq)) == name) value = trimmed(line.substr(eq + 1));
  }
  return value;
}

std::optional<std::string> mtl_excluding(const std::optional<std::string>& current,
                                         const std::vector<std::string>& absent) {
  std::vector<std::string> excluded;
  if (current && !current->empty()) {
    if ((*current)[0] != '^') return std::nullopt;  // MTLs named to include: only those open
    std::istringstream names(current->substr(1));
    std::string name;
    while (std::getline(names, name, ',')) {
      name = trimmed(name);
      if (!is_component_name(name)) return std::nullopt;
      excluded.push_back(name);
    }
  }
  bool added = false;
  for (const std::string& name : absent) {
    bool listed = false;
    for (const std::string& e : excluded) listed = listed || e == name;
    if (!listed) {
      excluded.push_back(name);
      added = true;
    }
  }
  if (!added) return std::nullopt;
  std::string value = "^";
  for (std::size_t i = 0; i < excluded.size(); ++i) value += (i ? "," : "") + excluded[i];
  return value;
}

}  // namespace detail

namespace {

bool any_path_matches(const char* pattern) {
  glob_t found{};
  const bool any = glob(pattern, 0, nullptr, &found) == 0 && found.gl_pathc > 0;
  globfree(&found);
  return any;
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

/// The MTLs whose device Open MPI 4.1's components look for is missing (the checks of
/// their component_open functions).
std::vector<std::string> absent_mtls() {
  std::vector<std::string> absent;
  if (!exists("/dev/ipath")) absent.emplace_back("psm");
  if (!any_path_matches("/dev/hfi1_[0-9]") && !any_path_matches("/dev/hfi1_[0-9][0-9]")) absent.emplace_back("psm2");
  return absent;
}

/// A parameter file's text: "" for a file that does not exist, nullopt for one that
/// cannot be read.
std::optional<std::string> file_text(const std::string& path) {
  if (!exists(path)) return std::string();
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

/// Open MPI's configuration folder: OPAL_SYSCONFDIR, else the one of the Open MPI this
/// was built with (empty if unknown, or if OPAL_PREFIX moved the installation).
std::string ompi_sysconfdir() {
  if (const char* dir = std::getenv("OPAL_SYSCONFDIR")) return dir;
  if (std::getenv("OPAL_PREFIX") != nullptr) return "";
#if defined(SHARDOPS_OMPI_SYSCONFDIR)
  return SHARDOPS_OMPI_SYSCONFDIR;
#else
  return "";
#endif
}

// Whether Open MPI may still be told what to load: MPI has not started, and neither the user
// (or mpirun's --mca) set any of \p params nor chose parameter sets this does not read.
bool open_mpi_settings_free(std::initializer_list<const char*> params) {
  int started = 0;
  MPI_Initialized(&started);
  if (started) return false;
  for (const char* name : params) {
    if (std::getenv(name) != nullptr) return false;
  }
  for (const char* name : {"OMPI_MCA_mca_base_param_files", "OMPI_MCA_mca_base_override_param_file",
                           "OMPI_MCA_mca_base_param_file_prefix", "OMPI_MCA_mca_base_envar_file_prefix"}) {
    if (std::getenv(name) != nullptr) return false;
  }
  return true;
}

// What Open MPI's parameter files say of one parameter.
struct FileParam {
  bool known = true;                 ///< false: the folder is unknown, or a file cannot be read
  bool overridden = false;           ///< the override file sets it: that beats the environment
  std::optional<std::string> value;  ///< the value the files give, the override's first
};

// \p param in Open MPI's parameter files, in its order of precedence: the override file, then
// the user's, then the system's (where Open MPI's folder has none, it is not this Open MPI's).
FileParam mca_param_from_files(const std::string& param) {
  FileParam p, unknown;
  unknown.known = false;
  const std::string sysconf = ompi_sysconfdir();
  if (sysconf.empty() || !exists(sysconf + "/openmpi-mca-params.conf")) return unknown;
  std::vector<std::string> files{sysconf + "/openmpi-mca-params-override.conf"};
  if (const char* home = std::getenv("HOME")) files.push_back(std::string(home) + "/.openmpi/mca-params.conf");
  files.push_back(sysconf + "/openmpi-mca-params.conf");
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::optional<std::string> text = file_text(files[i]);
    if (!text) return unknown;
    p.value = detail::mca_param_in_file(*text, param);
    if (p.value) {
      p.overridden = i == 0;
      return p;
    }
  }
  return p;
}

std::string skip_path_bound_sharedfp_or_throw() {
#if !defined(OPEN_MPI)
  return "";
#else
  if (!open_mpi_settings_free({"OMPI_MCA_sharedfp"})) return "";
  // A crash on long paths is worse than leaving a site's unreadable choice unknown: only a
  // choice the files are seen to make stands.
  if (mca_param_from_files("sharedfp").value) return "";
  constexpr const char* kValue = "^lockedfile,sm";
  return setenv("OMPI_MCA_sharedfp", kValue, 0) == 0 ? kValue : "";
#endif
}

std::string skip_absent_mtls_or_throw() {
#if !defined(OPEN_MPI)
  return "";
#else
  if (!switch_setting("SHARDOPS_SKIP_ABSENT_MTLS").value_or(true)) return "";
  if (!open_mpi_settings_free({"OMPI_MCA_mtl", "OMPI_MCA_pml"})) return "";
  const std::vector<std::string> absent = absent_mtls();
  if (absent.empty()) return "";
  // Files it cannot read, or a value in the override file (which beats the environment): left alone.
  const FileParam current = mca_param_from_files("mtl");
  if (!current.known || current.overridden) return "";
  const std::optional<std::string> value = detail::mtl_excluding(current.value, absent);
  if (!value || setenv("OMPI_MCA_mtl", value->c_str(), 0) != 0) return "";
  return *value;
#endif
}

}  // namespace

bool mpi_needed() noexcept {
  try {
    if (switch_setting("SHARDOPS_ONE_RANK_MPI").value_or(false)) return true;
  } catch (...) {
    return true;  // a value it does not take: MPI starts, and the job's settings check says why
  }
  for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (const char* value = std::getenv(size)) return std::strcmp(value, "1") != 0;
  }
  // Started by a launcher that names no rank count: only MPI can tell.
  for (const char* rank : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "PMIX_NAMESPACE"}) {
    if (std::getenv(rank) != nullptr) return true;
  }
  return false;
}

std::string skip_absent_mtls() noexcept {
  try {
    return skip_absent_mtls_or_throw();
  } catch (...) {
    return "";  // a faster start-up is not worth failing the job for
  }
}

std::string skip_path_bound_sharedfp() noexcept {
  try {
    return skip_path_bound_sharedfp_or_throw();
  } catch (...) {
    return "";
  }
}

}  // namespace shardops
