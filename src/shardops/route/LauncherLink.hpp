#pragma once
/// \file
/// \brief The connection between an MPI process and its launcher's PMIx server, made
/// prompt.
///
/// Open MPI 4.1 (with PMIx 4) reaches the local PMIx server (mpirun's, or slurmstepd's
/// under srun --mpi=pmix) over a TCP connection on the loopback that its client side
/// leaves with Nagle's algorithm on. MPI_Finalize sends the server a few small messages in
/// a row: the second waits for the first one's acknowledgement, which Linux delays by up
/// to 40 ms, so every MPI process spends about 40 ms of its exit waiting, whatever it did
/// (docs/design.md, "Start-up and exit"). Turning Nagle off on that one connection
/// removes the wait and changes nothing else: PMIx frames each message itself.

namespace shardops {

/// \brief Sets TCP_NODELAY on this process's TCP connections to the PMIx server named in
/// its environment (PMIX_SERVER_URI*), and on no other socket. Call it after MPI_Init
/// (the connection is made there); harmless where there is no such connection. Not
/// collective. Returns how many connections it changed.
int prompt_launcher_link() noexcept;

}  // namespace shardops
