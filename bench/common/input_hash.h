/* The counter-based hash every benchmark program makes its inputs with (C and C++):
 * value i of stream `stream` under seed `seed`, the same on every rank count, so that
 * shardops_bench, petsc_sf_bench and tpetra_bench move exactly the same rows. One copy,
 * included by all three: were they to drift apart, the peers would run other workloads. */
#ifndef SHARDOPS_BENCH_INPUT_HASH_H
#define SHARDOPS_BENCH_INPUT_HASH_H

#include <stdint.h>

/* splitmix64's finaliser */
static inline uint64_t bench_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static inline uint64_t bench_hash(uint64_t seed, uint64_t stream, uint64_t i) {
  return bench_mix(bench_mix(seed * 4 + stream) ^ i);
}

#endif
