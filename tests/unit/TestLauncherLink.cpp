#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "shardops/route/LauncherLink.hpp"

namespace {

// A listening TCP socket on the IPv4 loopback, a client connected to it, and the
// accepted end; all closed on scope exit.
struct LoopbackPair {
  int listener = -1, client = -1, accepted = -1;
  int port = 0;

  LoopbackPair() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port = ntohs(a.sin_port);
    client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return;
    accepted = accept(listener, nullptr, nullptr);
  }
  ~LoopbackPair() {
    for (int fd : {listener, client, accepted})
      if (fd >= 0) close(fd);
  }
  LoopbackPair(const LoopbackPair&) = delete;
  LoopbackPair& operator=(const LoopbackPair&) = delete;
};

int no_delay(int fd) {
  int v = -1;
  socklen_t len = sizeof v;
  return getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0 ? v : -1;
}

// Sets an environment variable for the scope of one test.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) { setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

TEST(LauncherLink, OnlyTheConnectionToTheNamedServerGetsNoDelay) {
  LoopbackPair server, other;
  ASSERT_GT(server.accepted, 0);
  ASSERT_GT(other.accepted, 0);
  ASSERT_EQ(no_delay(server.client), 0);
  const ScopedEnv uri("PMIX_SERVER_URI_SHARDOPS_TEST", "1234.0;tcp4://127.0.0.1:" + std::to_string(server.port));
  EXPECT_GE(shardops::prompt_launcher_link(), 1);
  EXPECT_NE(no_delay(server.client), 0);
  // A connection to another port, and the server's own end of the named one, stay as they were.
  EXPECT_EQ(no_delay(other.client), 0);
  EXPECT_EQ(no_delay(server.accepted), 0);
  EXPECT_EQ(no_delay(other.accepted), 0);
}

TEST(LauncherLink, MalformedUrisChangeNothing) {
  LoopbackPair server;
  ASSERT_GT(server.accepted, 0);
  const std::string port = std::to_string(server.port);
  const ScopedEnv uri("PMIX_SERVER_URI_SHARDOPS_TEST", "x;tcp4://localhost:" + port +
                                                           ";tcp4://127.0.0.1:;tcp4://127.0.0.1:" + port +
                                                           "x;tcp4://127.0.0.1:99999;tcp6://[::1:" + port + ";tcp4://");
  shardops::prompt_launcher_link();
  EXPECT_EQ(no_delay(server.client), 0);
}

}  // namespace
