// peer_hello on hello-only records (doctor --peer's handshake, a result over no rail): an answered
// hello passes, one that got none fails with the client's reason, and a probe's record over a
// rail is never judged here (probe_failing's).
#include <gmock/gmock.h>

#include "health_fixture.h"
#include "rail/probe/result_store.h"
#include "support/fake_clock.h"

namespace rail::health::test {
namespace {

using ::testing::HasSubstr;

probe::ProbeResult Hello(const std::string& peer, bool answered, const base::Clock& clock) {
  probe::ProbeResult hello;
  hello.kind = probe::ProbeKind::kTcpRtt;
  hello.peer = peer;
  hello.error_reason = answered ? "hello_only" : "connect_failed";
  hello.error_message = answered ? "" : "connect 10.0.0.2:9841: Connection refused";
  hello.peer_agent_version = answered ? "0.4.0" : "";
  hello.finished_at = clock.WallNow();
  return hello;
}

std::vector<CheckResult> Evaluate(const probe::ResultStore& store) {
  Host host("rxe-dual-rail");
  host.series = store.Snapshot();
  return EvaluateChecks(host.Inputs());
}

TEST(PeerHelloTest, AnAnsweredHelloPassesAndAMissingOneFailsWithTheClientsReason) {
  ::rail::test::FakeClock clock;
  probe::ResultStore store{clock};
  store.Record(Hello("10.0.0.1:9841", true, clock), std::chrono::milliseconds(0));
  store.Record(Hello("10.0.0.2:9841", false, clock), std::chrono::milliseconds(0));
  const auto results = Evaluate(store);
  const auto answered = Find(results, "peer_hello", "", "10.0.0.1:9841");
  ASSERT_TRUE(answered);
  EXPECT_TRUE(answered->ok);
  const auto refused = Find(results, "peer_hello", "", "10.0.0.2:9841");
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->ok);
  EXPECT_THAT(refused->reason, HasSubstr("no hello from 10.0.0.2:9841: connect_failed "
                                         "(connect 10.0.0.2:9841: Connection refused)"));
}

TEST(PeerHelloTest, AProbeOverARailIsNoHello) {
  ::rail::test::FakeClock clock;
  probe::ResultStore store{clock};
  probe::ProbeResult run = Hello("10.0.0.2:9841", false, clock);
  run.rails = {"rxe0:1"};
  store.Record(std::move(run), std::chrono::minutes(1));
  for (const auto& result : Evaluate(store)) EXPECT_NE(result.check, "peer_hello");
}

}  // namespace
}  // namespace rail::health::test
