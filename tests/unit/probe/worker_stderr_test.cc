// The probe worker's stderr as the agent reads it: which lines look fatal (UCX's own forms, as
// UCX 1.13 wrote them on Soft-RoCE), and the relay that keeps the last of them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "probe/worker/stderr_relay.h"

namespace rail::probe::worker {
namespace {

// UD wire-up timing out with the IPv4 RoCE v2 GID, then the close that asserts (ucs_fatal_error
// prints "[host:pid:thread:tid] <file>:<line> <message>").
constexpr const char* kUdTimeout =
    "[lab-a:812  :0:815]        ud_ep.c:276  Fatal: UD endpoint 0x5581e2c0 to <no debug data>: "
    "unhandled timeout error";
constexpr const char* kRequestAssertion =
    "[lab-a:812  :0:812]  ucp_request.c:684  Assertion `0' failed: got REQ message";
constexpr const char* kUcxError =
    "[1764168000.123456] [lab-a:812  :0]        ib_iface.c:993  UCX  ERROR ibv_create_ah failed: "
    "Invalid argument";

TEST(WorkerStderrTest, UcxFatalAssertionAndErrorLinesLookFatal) {
  EXPECT_TRUE(LooksFatal(kUdTimeout));
  EXPECT_TRUE(LooksFatal(kRequestAssertion));
  EXPECT_TRUE(LooksFatal(kUcxError));
}

TEST(WorkerStderrTest, WarningsBacktracesAndTheWorkersOwnLinesDoNot) {
  EXPECT_FALSE(
      LooksFatal("[1764168000.123456] [lab-a:812  :0]     ucp_worker.c:1783 UCX  WARN  "
                 "failed to set affinity"));
  EXPECT_FALSE(LooksFatal("==== backtrace (tid:    812) ===="));
  EXPECT_FALSE(
      LooksFatal(" 0  /lib/x86_64-linux-gnu/libucs.so.0(ucs_handle_error+0x2dc) "
                 "[0x7f3c2a1b02dc]"));
  EXPECT_FALSE(LooksFatal("ts=2026-11-26T17:00:00Z level=info msg=\"probe worker ready\""));
  EXPECT_FALSE(LooksFatal("ts=2026-11-26T17:00:00Z level=error msg=\"probe failed\""));
  EXPECT_FALSE(LooksFatal(""));
}

// Writes `text` into a fresh pipe, closes it (the worker died) and returns what Finish keeps.
std::string RelayOf(const std::string& text) {
  int ends[2];
  EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  base::UniqueFd write_end(ends[1]);
  StderrRelay relay{base::UniqueFd(ends[0])};
  EXPECT_EQ(::write(write_end.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  write_end = base::UniqueFd();
  return relay.Finish();
}

TEST(WorkerStderrTest, TheRelayKeepsTheLastFatalLine) {
  const std::string log = std::string(kUdTimeout) + "\n" + kRequestAssertion + "\n" +
                          "==== backtrace (tid:    812) ====\n" +
                          " 0  /lib/x86_64-linux-gnu/libucs.so.0(ucs_handle_error+0x2dc)\n";
  EXPECT_EQ(RelayOf(log), kRequestAssertion);
}

TEST(WorkerStderrTest, ALastLineWithoutItsEndCountsToo) {
  EXPECT_EQ(RelayOf(std::string("level=info msg=start\n") + kUdTimeout), kUdTimeout);
}

TEST(WorkerStderrTest, NothingFatalKeepsNothing) {
  EXPECT_EQ(RelayOf("level=info msg=start\nlevel=info msg=stop\n"), "");
}

TEST(WorkerStderrTest, FinishEndsTheRelayWhileAnotherProcessStillHoldsTheWriteEnd) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  base::UniqueFd write_end(ends[1]);  // held on, as a process the worker started could
  StderrRelay relay{base::UniqueFd(ends[0])};
  const std::string line = std::string(kRequestAssertion) + "\n";
  ASSERT_EQ(::write(write_end.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  EXPECT_EQ(relay.Finish(), kRequestAssertion);
}

}  // namespace
}  // namespace rail::probe::worker
