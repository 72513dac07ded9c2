#pragma once
/// \file
/// \brief What `-v` prints while a job runs (rank 0): each phase as it starts and ends,
/// and during a long transfer a line at most once a second. Off unless a program turns
/// it on (the command line does for -v on rank 0); then it writes to stderr.

#include <cstdint>

namespace shardops {

/// Turns the printing on or off for this process.
void set_progress(bool on) noexcept;
bool progress_on() noexcept;

/// A phase starts (ScopedPhase calls it); returns the mark to pass to progress_phase_end().
std::int64_t progress_phase_start(const char* phase) noexcept;
/// A phase ended after \p seconds (with the bytes progress_count() counted in it, and their rate).
void progress_phase_end(const char* phase, double seconds, std::int64_t mark) noexcept;

/// \brief Work of \p phase done in pieces inside the phase running now (an output's rows
/// made while they are written): its start, with \p how it runs...
void progress_inner_phase_start(const char* phase, const char* how) noexcept;
/// ...and its end, after \p seconds spent in it in all.
void progress_inner_phase_end(const char* phase, double seconds) noexcept;

/// \brief \p done of \p total bytes of \p what moved by this rank so far: printed at most
/// once a second (and counted for the phase's rate).
void progress_bytes(const char* what, std::int64_t done, std::int64_t total) noexcept;
/// \brief A line about what the job waits for (another job's lock): printed at once.
void progress_note(const char* text) noexcept;
/// Adds \p bytes this rank moved through files (reads and writes) to the phase's count.
void progress_count(std::int64_t bytes) noexcept;

}  // namespace shardops
