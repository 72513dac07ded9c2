#include "shardops/route/LauncherLink.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace shardops {

namespace {

/// A TCP endpoint: address family, address bytes and port (network order).
struct Endpoint {
  int family = 0;
  unsigned char address[16] = {};
  std::uint16_t port = 0;
};

/// The tcp4:// and tcp6:// endpoints of a PMIx URI ("<namespace>.<rank>;tcp4://127.0.0.1:54905").
void parse_uri(const std::string& uri, std::vector<Endpoint>& out) {
  for (const char* scheme : {"tcp4://", "tcp6://"}) {
    for (std::size_t at = uri.find(scheme); at != std::string::npos; at = uri.find(scheme, at + 1)) {
      const std::size_t begin = at + std::strlen(scheme);
      std::size_t end = uri.find_first_of(";,", begin);
      if (end == std::string::npos) end = uri.size();
      const std::string hostport = uri.substr(begin, end - begin);
      const std::size_t colon = hostport.rfind(':');
      if (colon == std::string::npos) continue;
      std::string host = hostport.substr(0, colon);
      if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
      char* rest = nullptr;
      const unsigned long port = std::strtoul(hostport.c_str() + colon + 1, &rest, 10);
      if (rest == nullptr || *rest != '\0' || port == 0 || port > 65535) continue;
      Endpoint e;
      e.family = scheme[3] == '4' ? AF_INET : AF_INET6;
      if (inet_pton(e.family, host.c_str(), e.address) != 1) continue;
      e.port = htons(static_cast<std::uint16_t>(port));
      out.push_back(e);
    }
  }
}

std::vector<Endpoint> pmix_servers() {
  std::vector<Endpoint> out;
  for (char** env = environ; env != nullptr && *env != nullptr; ++env) {
    const std::string entry(*env);
    if (entry.rfind("PMIX_SERVER_URI", 0) != 0) continue;
    const std::size_t eq = entry.find('=');
    if (eq != std::string::npos) parse_uri(entry.substr(eq + 1), out);
  }
  return out;
}

bool connected_to(int fd, const std::vector<Endpoint>& servers) {
  int type = 0;
  socklen_t type_len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_STREAM) return false;
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return false;
  for (const Endpoint& e : servers) {
    if (peer.ss_family != e.family) continue;
    if (e.family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&peer);
      if (in->sin_port == e.port && std::memcmp(&in->sin_addr, e.address, 4) == 0) return true;
    } else {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&peer);
      if (in6->sin6_port == e.port && std::memcmp(&in6->sin6_addr, e.address, 16) == 0) return true;
    }
  }
  return false;
}

/// This process's open descriptors (from /proc/self/fd, else the first 1024).
std::vector<int> open_descriptors() {
  std::vector<int> fds;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (const dirent* entry = readdir(dir)) {
      char* rest = nullptr;
      const long fd = std::strtol(entry->d_name, &rest, 10);
      if (rest != entry->d_name && *rest == '\0' && fd != dirfd(dir)) fds.push_back(static_cast<int>(fd));
    }
    closedir(dir);
  } else {
    for (int fd = 0; fd < 1024; ++fd) fds.push_back(fd);
  }
  return fds;
}

}  // namespace

int prompt_launcher_link() noexcept {
  try {
    const std::vector<Endpoint> servers = pmix_servers();
    if (servers.empty()) return 0;
    int changed = 0;
    for (const int fd : open_descriptors()) {
      if (!connected_to(fd, servers)) continue;
      const int one = 1;
      if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0) ++changed;
    }
    return changed;
  } catch (...) {  // out of memory parsing the environment: leave the connection as it is
    return 0;
  }
}

}  // namespace shardops
