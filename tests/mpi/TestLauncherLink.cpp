#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "shardops/route/LauncherLink.hpp"

extern char** environ;

namespace {

// Whether the launcher named a PMIx server reached over TCP (mpirun's is; a launcher
// whose PMIx server is reached otherwise has nothing to change).
bool launcher_uses_tcp() {
  for (char** env = environ; *env != nullptr; ++env) {
    if (std::strncmp(*env, "PMIX_SERVER_URI", 15) == 0 &&
        (std::strstr(*env, "tcp4://") != nullptr || std::strstr(*env, "tcp6://") != nullptr))
      return true;
  }
  return false;
}

// Under mpirun, MPI_Init has connected this rank to mpirun's PMIx server: the call finds
// that connection and turns Nagle off on it, on every rank, and again when called twice.
TEST(LauncherLink, FindsTheConnectionMpiInitMade) {
  if (!launcher_uses_tcp()) GTEST_SKIP() << "no PMIx server over TCP in the environment";
  const int first = shardops::prompt_launcher_link();
  EXPECT_GE(first, 1);
  EXPECT_EQ(shardops::prompt_launcher_link(), first);
  int lowest = first;
  MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_GE(lowest, 1);
}

}  // namespace
