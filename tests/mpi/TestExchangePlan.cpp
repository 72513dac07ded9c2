// ExchangePlan on its own: counts, receive order, self rows, reuse, the reverse
// route, and the split of a large exchange into rounds.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "DistTestUtil.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {
namespace {

using test::byte_view_to_host;
using test::plan_to;
using test::round_limit;
using test::to_byte_view;
using test::world;

// Destination of local row i of rank `src` in the routing every test uses: a mix of
// every rank, the rank itself, and rows that are not sent (-1).
using DestRule = std::int64_t (*)(int src, std::int64_t i, int nranks);

std::int64_t mixed_dest(int src, std::int64_t i, int nranks) {
  if (i % 7 == 6) return -1;
  return (src * 3 + i * i + i / 2) % nranks;
}
std::int64_t all_to_zero(int, std::int64_t, int) { return 0; }
std::int64_t all_to_self(int src, std::int64_t, int) { return src; }
std::int64_t all_to_last(int, std::int64_t, int nranks) { return nranks - 1; }

// Rows of rank `src`: some ranks have none.
std::int64_t rows_of(int src, std::int64_t base) { return src == 1 ? 0 : base + 5 * src; }

std::vector<std::int64_t> dests_of(int src, std::int64_t n, int nranks, DestRule rule) {
  std::vector<std::int64_t> d(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = rule(src, i, nranks);
  return d;
}

// A row of `row_bytes` bytes that names (source rank, local row): every byte differs.
std::vector<unsigned char> row_payload(int src, std::int64_t i, std::size_t row_bytes, int salt) {
  std::vector<unsigned char> row(row_bytes);
  for (std::size_t b = 0; b < row_bytes; ++b) {
    row[b] = static_cast<unsigned char>((src * 131 + i * 17 + static_cast<std::int64_t>(b) * 7 + salt) & 0xff);
  }
  return row;
}

std::vector<unsigned char> local_payload(int src, std::int64_t n, std::size_t row_bytes, int salt) {
  std::vector<unsigned char> all;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto row = row_payload(src, i, row_bytes, salt);
    all.insert(all.end(), row.begin(), row.end());
  }
  return all;
}

// What rank `me` must receive: every source in rank order, its rows to `me` in local order.
std::vector<unsigned char> expected_receive(int me, int nranks, std::int64_t base, DestRule rule, std::size_t row_bytes,
                                            int salt) {
  std::vector<unsigned char> out;
  for (int s = 0; s < nranks; ++s) {
    const std::int64_t n = rows_of(s, base);
    for (std::int64_t i = 0; i < n; ++i) {
      if (rule(s, i, nranks) != me) continue;
      const auto row = row_payload(s, i, row_bytes, salt);
      out.insert(out.end(), row.begin(), row.end());
    }
  }
  return out;
}

TEST(ExchangePlan, CountsAreTheRoutingTable) {
  const int me = world().rank(), p = world().size();
  const std::int64_t base = 23;
  const ExchangePlan plan = plan_to(dests_of(me, rows_of(me, base), p, mixed_dest));
  EXPECT_EQ(plan.nranks(), p);
  EXPECT_EQ(plan.num_rows(), rows_of(me, base));
  // send_counts[r]: my rows to r; recv_counts[s]: s's rows to me.
  std::vector<std::int64_t> send(static_cast<std::size_t>(p), 0), recv(static_cast<std::size_t>(p), 0);
  for (int s = 0; s < p; ++s) {
    for (std::int64_t i = 0; i < rows_of(s, base); ++i) {
      const std::int64_t d = mixed_dest(s, i, p);
      if (s == me && d >= 0) ++send[static_cast<std::size_t>(d)];
      if (d == me) ++recv[static_cast<std::size_t>(s)];
    }
  }
  EXPECT_EQ(plan.send_counts(), send);
  EXPECT_EQ(plan.recv_counts(), recv);
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t c : recv) offsets.push_back(offsets.back() + c);
  EXPECT_EQ(plan.recv_offsets(), offsets);
  std::int64_t total_send = 0;
  for (std::int64_t c : send) total_send += c;
  EXPECT_EQ(plan.num_send(), total_send);
  EXPECT_EQ(plan.num_recv(), offsets.back());
  // Slots: rows that are sent get distinct positions, grouped by destination, stable.
  auto slots = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plan.slots());
  std::vector<std::int64_t> next(static_cast<std::size_t>(p), 0);
  for (int r = 1; r < p; ++r)
    next[static_cast<std::size_t>(r)] = next[static_cast<std::size_t>(r - 1)] + send[static_cast<std::size_t>(r - 1)];
  for (std::int64_t i = 0; i < plan.num_rows(); ++i) {
    const std::int64_t d = mixed_dest(me, i, p);
    EXPECT_EQ(slots(static_cast<std::size_t>(i)), d < 0 ? -1 : next[static_cast<std::size_t>(d)]++) << "row " << i;
  }
}

TEST(ExchangePlan, ReceiveOrderIsSourceRankThenLocalOrder) {
  const int me = world().rank(), p = world().size();
  for (DestRule rule : {mixed_dest, all_to_zero, all_to_last, all_to_self}) {
    for (std::size_t row_bytes : {std::size_t(1), std::size_t(3), std::size_t(8), std::size_t(16), std::size_t(40)}) {
      SCOPED_TRACE("row_bytes " + std::to_string(row_bytes));
      const std::int64_t n = rows_of(me, 31);
      const ExchangePlan plan = plan_to(dests_of(me, n, p, rule));
      const ByteView recv = plan.forward(to_byte_view(local_payload(me, n, row_bytes, 0)).data(), row_bytes);
      EXPECT_EQ(byte_view_to_host(recv), expected_receive(me, p, 31, rule, row_bytes, 0));
    }
  }
}

TEST(ExchangePlan, RowsToSelfAreNotSentThroughMpi) {
  const int me = world().rank(), p = world().size();
  const std::size_t row_bytes = 12;
  const std::int64_t n = rows_of(me, 40);
  {
    const std::vector<std::int64_t> dests = dests_of(me, n, p, mixed_dest);
    const ExchangePlan plan = plan_to(dests);
    EXPECT_EQ(plan.bytes_sent(), 0);
    plan.forward(to_byte_view(local_payload(me, n, row_bytes, 1)).data(), row_bytes);
    std::int64_t to_others = 0;
    for (std::int64_t d : dests) to_others += (d >= 0 && d != me) ? 1 : 0;
    EXPECT_EQ(plan.bytes_sent(), to_others * static_cast<std::int64_t>(row_bytes));
  }
  {
    const ExchangePlan plan = plan_to(dests_of(me, n, p, all_to_self));
    const ByteView recv = plan.forward(to_byte_view(local_payload(me, n, row_bytes, 1)).data(), row_bytes);
    EXPECT_EQ(plan.bytes_sent(), 0);
    EXPECT_EQ(byte_view_to_host(recv), local_payload(me, n, row_bytes, 1));
  }
}

TEST(ExchangePlan, OnePlanCarriesPayloadsOfDifferentRowSizes) {
  const int me = world().rank(), p = world().size();
  const std::int64_t n = rows_of(me, 29);
  const std::vector<std::int64_t> dests = dests_of(me, n, p, mixed_dest);
  const ExchangePlan plan = plan_to(dests);
  std::int64_t to_others = 0;
  for (std::int64_t d : dests) to_others += (d >= 0 && d != me) ? 1 : 0;
  std::int64_t expected_bytes = 0;
  for (std::size_t row_bytes : {std::size_t(16), std::size_t(3), std::size_t(8), std::size_t(16)}) {
    SCOPED_TRACE("row_bytes " + std::to_string(row_bytes));
    const int salt = static_cast<int>(row_bytes);
    const ByteView recv = plan.forward(to_byte_view(local_payload(me, n, row_bytes, salt)).data(), row_bytes);
    EXPECT_EQ(byte_view_to_host(recv), expected_receive(me, p, 29, mixed_dest, row_bytes, salt));
    expected_bytes += to_others * static_cast<std::int64_t>(row_bytes);
    EXPECT_EQ(plan.bytes_sent(), expected_bytes);
  }
  // Several sources packed into one send buffer (how DynamicStitch sends several inputs).
  const std::size_t row_bytes = 4;
  ByteView send("test::send", static_cast<std::size_t>(plan.num_send()) * row_bytes);
  const std::vector<unsigned char> all = local_payload(me, n, row_bytes, 9);
  const std::int64_t half = n / 2;
  const ByteView first = to_byte_view(std::vector<unsigned char>(all.begin(), all.begin() + half * 4));
  const ByteView second = to_byte_view(std::vector<unsigned char>(all.begin() + half * 4, all.end()));
  plan.pack(send, 0, first.data(), half, row_bytes);
  plan.pack(send, half, second.data(), n - half, row_bytes);
  EXPECT_EQ(byte_view_to_host(plan.exchange(send, row_bytes)), expected_receive(me, p, 29, mixed_dest, row_bytes, 9));
}

// The owner answers each received row with a reply; exchange_reverse + unpack put
// the replies back beside the rows that asked; rows not sent get zeros.
void check_round_trip(std::int64_t base, DestRule rule, const RouteOptions& route = RouteOptions()) {
  const int me = world().rank(), p = world().size();
  const std::int64_t n = rows_of(me, base);
  const std::size_t row_bytes = 8;
  const ExchangePlan plan = plan_to(dests_of(me, n, p, rule), route);
  // Ask: each row carries its own (source, index).
  std::vector<std::int64_t> ask;
  for (std::int64_t i = 0; i < n; ++i) ask.push_back(me * 1000000 + i);
  std::vector<unsigned char> ask_bytes(ask.size() * 8);
  if (!ask.empty()) std::memcpy(ask_bytes.data(), ask.data(), ask_bytes.size());
  const ByteView asked = plan.forward(to_byte_view(ask_bytes).data(), row_bytes);
  // Answer: the question times 10 plus the answering rank.
  std::vector<unsigned char> q = byte_view_to_host(asked);
  std::vector<std::int64_t> answer(q.size() / 8);
  if (!q.empty()) std::memcpy(answer.data(), q.data(), q.size());
  for (auto& a : answer) a = a * 10 + me;
  std::vector<unsigned char> answer_bytes(answer.size() * 8);
  if (!answer.empty()) std::memcpy(answer_bytes.data(), answer.data(), answer_bytes.size());
  const ByteView back = plan.exchange_reverse(to_byte_view(answer_bytes), row_bytes);
  EXPECT_EQ(static_cast<std::int64_t>(back.extent(0)), plan.num_send() * 8);
  std::vector<unsigned char> out_bytes(static_cast<std::size_t>(n) * 8, 0xab);
  ByteView out = to_byte_view(out_bytes);
  plan.unpack(back, out.data(), row_bytes);
  std::vector<std::int64_t> got(static_cast<std::size_t>(n));
  const std::vector<unsigned char> host = byte_view_to_host(out);
  if (n > 0) std::memcpy(got.data(), host.data(), host.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t d = rule(me, i, p);
    EXPECT_EQ(got[static_cast<std::size_t>(i)], d < 0 ? 0 : (me * 1000000 + i) * 10 + d) << "row " << i;
  }
}

TEST(ExchangePlan, ReverseRouteAndUnpackRoundTrip) {
  for (DestRule rule : {mixed_dest, all_to_zero, all_to_self, all_to_last}) check_round_trip(37, rule);
}

TEST(ExchangePlan, EmptyPlans) {
  const int me = world().rank(), p = world().size();
  {  // no rows anywhere
    const ExchangePlan plan = plan_to({});
    EXPECT_EQ(plan.num_send(), 0);
    EXPECT_EQ(plan.num_recv(), 0);
    EXPECT_EQ(plan.forward(nullptr, 8).extent(0), 0u);
    EXPECT_EQ(plan.exchange_reverse(ByteView("test::empty", 0), 8).extent(0), 0u);
  }
  {  // rows, none sent
    const ExchangePlan plan = plan_to(std::vector<std::int64_t>(5, -1));
    EXPECT_EQ(plan.num_send(), 0);
    EXPECT_EQ(plan.num_recv(), 0);
    std::vector<unsigned char> out_bytes(5 * 4, 0xff);
    ByteView out = to_byte_view(out_bytes);
    plan.unpack(plan.exchange_reverse(plan.forward(to_byte_view(local_payload(me, 5, 4, 0)).data(), 4), 4), out.data(),
                4);
    EXPECT_EQ(byte_view_to_host(out), std::vector<unsigned char>(20, 0));
  }
  {  // zero-byte rows still route (counts only)
    const ExchangePlan plan = plan_to(dests_of(me, rows_of(me, 10), p, mixed_dest));
    EXPECT_EQ(plan.forward(nullptr, 0).extent(0), 0u);
  }
}

// A large exchange split into rounds (staging through compact buffers) must move
// exactly the same bytes, in the same order, as one Alltoallv.
TEST(ExchangePlan, SplitIntoRoundsGivesTheSameResult) {
  const int me = world().rank(), p = world().size();
  const std::int64_t base = 150;
  const std::int64_t n = rows_of(me, base);
  for (DestRule rule : {mixed_dest, all_to_zero, all_to_last}) {
    const std::vector<std::int64_t> dests = dests_of(me, n, p, rule);
    std::vector<unsigned char> whole;
    std::int64_t whole_bytes = 0;
    {
      const ExchangePlan plan = plan_to(dests);
      whole = byte_view_to_host(plan.forward(to_byte_view(local_payload(me, n, 24, 5)).data(), 24));
      whole_bytes = plan.bytes_sent();
    }
    EXPECT_EQ(whole, expected_receive(me, p, base, rule, 24, 5));
    for (std::int64_t limit : {1, 4, 7, 64}) {
      SCOPED_TRACE("max rows per round " + std::to_string(limit));
      const ExchangePlan plan = plan_to(dests, round_limit(limit));
      for (std::size_t row_bytes : {std::size_t(24), std::size_t(3)}) {
        const ByteView recv = plan.forward(to_byte_view(local_payload(me, n, row_bytes, 5)).data(), row_bytes);
        EXPECT_EQ(byte_view_to_host(recv), expected_receive(me, p, base, rule, row_bytes, 5))
            << "row_bytes " << row_bytes;
      }
      EXPECT_EQ(plan.bytes_sent(), whole_bytes + whole_bytes / 24 * 3);
    }
    check_round_trip(base, rule, round_limit(5));
  }
}

// Ranks that disagree on whether they need rounds (one sends much, others little)
// still take the same path: the number of rounds is agreed collectively.
TEST(ExchangePlan, KeepsItsRouteOptions) {
  const ExchangePlan limited = plan_to({}, round_limit(3));
  EXPECT_EQ(limited.options().max_rows_per_round, 3);
  EXPECT_EQ(plan_to({}).options().max_rows_per_round, RouteOptions().max_rows_per_round);
}

TEST(ExchangePlan, SplitWhenOnlyOneRankIsLarge) {
  const int me = world().rank(), p = world().size();
  const std::int64_t n = me == p - 1 ? 100 : 2;
  std::vector<std::int64_t> dests;
  for (std::int64_t i = 0; i < n; ++i) dests.push_back(i % p);
  const ExchangePlan plan = plan_to(dests, round_limit(static_cast<std::int64_t>(4 * p)));
  const ByteView recv = plan.forward(to_byte_view(local_payload(me, n, 8, 3)).data(), 8);
  std::vector<unsigned char> expected;
  for (int s = 0; s < p; ++s) {
    const std::int64_t ns = s == p - 1 ? 100 : 2;
    for (std::int64_t i = 0; i < ns; ++i) {
      if (i % p != me) continue;
      const auto row = row_payload(s, i, 8, 3);
      expected.insert(expected.end(), row.begin(), row.end());
    }
  }
  EXPECT_EQ(byte_view_to_host(recv), expected);
}

// The receive buffer's bytes come from what the other ranks send: one rank that cannot hold
// them fails the exchange on every rank, with its message, and nobody waits in MPI.
TEST(ExchangePlan, ReceiveBeyondOneRanksBudgetFailsOnEveryRank) {
  const int me = world().rank(), p = world().size();
  const std::size_t row_bytes = 1024;
  const std::int64_t n = 2000;  // 2 MB from each rank, all to rank 0
  const ExchangePlan plan = plan_to(dests_of(me, n, p, all_to_zero));
  const MemoryBudget saved = memory_budget();
  if (me == 0) set_memory_budget(memory_held() + (64 << 10), 1, "a test's small budget");
  std::string message;
  try {
    plan.forward(to_byte_view(local_payload(me, n, row_bytes, 2)).data(), row_bytes);
  } catch (const InvalidArgument& e) {
    message = e.what();
  }
  if (me == 0)
    set_memory_budget(saved.bytes * static_cast<std::uint64_t>(saved.ranks_on_node), saved.ranks_on_node, saved.source);
  EXPECT_NE(message.find("the rows other ranks send this one in an exchange"), std::string::npos) << message;
  EXPECT_NE(message.find("a test's small budget"), std::string::npos) << message;
  // The same text on every rank.
  const std::int64_t length = static_cast<std::int64_t>(message.size());
  EXPECT_EQ(world().max(length), length);
  EXPECT_EQ(-world().max(-length), length);
}

}  // namespace
}  // namespace shardops
