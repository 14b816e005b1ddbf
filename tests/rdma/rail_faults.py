"""Faults of one rail in the RDMA lab, tests that rdma_lab_test.py's class takes in (its lab, its
agents' configuration and its `probe` helper), run after its own tests (host a's agent is
stopped by then):

7. a rail throttled to THROTTLE_MBIT in both guests (tc tbf on its virtio netdev): an agent of
   host a that runs ucx_throughput on both rails fails probe_throughput on the throttled rail by
   the sibling rule and passes it on the other, and the throttled rail's run succeeds (bulk runs
   are bounded by time and computed from the bytes that completed, whatever the rail's speed);
8. the probe worker killed during `rail_exporter probe` over both rails (issue 22, item 2): the
   run in flight on rail0 fails with worker_crashed, the run queued on rail1 waits for the
   restarted worker and succeeds.
"""

import rdma_lab
from rdma_lab import find, series, NETDEV, RAILS

THROTTLED = "rail1"
THROTTLE_MBIT = 10
# tbf's queue: deep enough that a window of puts waits instead of being dropped (RC would
# retransmit and stall), so that the rail is slow, not lossy.
THROTTLE = "tbf rate %dmbit burst 32kb limit 2mb" % THROTTLE_MBIT
# ucx_throughput only, on both rails, one bulk run at a time on the host (the rails' figures then
# share the guests' CPU alike); the first turn within the interval's jitter (6 s); bulk budget
# (16 s) / (1 min x 0.9) = 30% per rail.
THROTTLE_PROBES = ("bulk_concurrency: host\n"
                   "probes:\n"
                   "  - {kind: ucx_throughput, operation: put, message_sizes: [%d], window: %d,"
                   " duration: 2s, timeout: 15s, interval: 1m}\n")
THROTTLE_TIMEOUT = 150  # seconds for both rails to have a result and a verdict


class RailFaultTests:
    """Mixed into rdma_lab_test.RdmaLabTest (self.lab, self.probe, the agent configuration)."""

    def stop_agent(self, name, host="a"):
        """Ends an agent started in host (by default a: its probes would run beside these),
        waiting until it has exited."""
        pid = self.lab.pid(name)
        if pid:
            self.lab.run(host, "kill %d 2>/dev/null; for i in $(seq 1 60); do kill -0 %d "
                         "2>/dev/null || exit 0; sleep 0.5; done; exit 1" % (pid, pid))

    def throttle(self, on):
        for host in rdma_lab.HOSTS:
            self.lab.run(host, "modprobe sch_tbf; tc qdisc %s dev %s root %s" % (
                "replace" if on else "del", NETDEV[THROTTLED], THROTTLE if on else ""),
                check=on)

    def throttled_agent_config(self):
        """Host a's configuration with only THROTTLE_PROBES and the default sibling fraction."""
        text = self.agent_config_text("a")
        text = text[:text.index("health:")] + (
            "health: {probe_throughput_min_line_rate_fraction: %g}\n" % self.line_rate_fraction)
        return self.lab.write("a-throttled.yaml", text + THROTTLE_PROBES % (
            self.message_size, self.window))

    def test_7_a_throttled_rail_fails_probe_throughput_by_the_sibling_rule(self):
        self.stop_agent("agent-a")
        self.throttle(True)
        try:
            samples = self.run_throttled_agent()
        finally:
            self.throttle(False)
            self.stop_agent("agent-a-throttled")
        figures = {labels["rail"]: value for labels, value in
                   series(samples, "rail_probe_throughput_bytes_per_second")
                   if labels["kind"] == "ucx_throughput"}
        print("ucx_throughput with %s throttled to %d Mbit/s (bytes/s): %s" % (
            THROTTLED, THROTTLE_MBIT, {rail: round(value) for rail, value in figures.items()}))
        other = RAILS[1 - RAILS.index(THROTTLED)]
        self.assertEqual(set(figures), set(RAILS), figures)
        # The qdisc is in effect: the throttled rail moves no more than its rate.
        self.assertLessEqual(figures[THROTTLED], THROTTLE_MBIT * 1e6 / 8 * 1.05, figures)
        self.assertGreater(figures[other], figures[THROTTLED], figures)
        for rail in RAILS:
            # The throttled run succeeded: time-bounded, from the bytes that completed.
            self.assertEqual(find(samples, "rail_probe_success", kind="ucx_throughput",
                                  rail=rail), [1.0], rail)
            self.assertEqual([value for labels, value in
                              series(samples, "rail_probe_errors_total")
                              if labels["rail"] == rail and value], [], rail)
        verdicts = {labels["rail"]: value for labels, value in series(samples, "rail_check_ok")
                    if labels["check"] == "probe_throughput"}
        reasons = {labels["rail"]: labels["reason"] for labels, _ in
                   series(samples, "rail_check_info") if labels["check"] == "probe_throughput"}
        print("probe_throughput: %s; reason on %s: %s" % (verdicts, THROTTLED,
                                                         reasons.get(THROTTLED)))
        self.assertEqual(verdicts, {THROTTLED: 0.0, other: 1.0}, reasons)
        self.assertIn("probe_throughput_min_sibling_fraction", reasons[THROTTLED])
        self.assertNotIn("line_rate", reasons[THROTTLED])

    def run_throttled_agent(self):
        """Starts host a's agent with the throttled configuration; its scrape once both rails
        have a ucx_throughput result and a probe_throughput verdict."""
        config = self.throttled_agent_config()
        self.lab.start("a", "agent-a-throttled", [
            self.binary, "--config.file=" + config, "--probe.worker-path=" + self.worker,
            "--web.listen-address=:%d" % rdma_lab.METRICS_PORT], env=self.ucx_env)
        self.lab.wait_http("a", "agent-a-throttled")
        samples = []

        def both_rails_judged():
            samples[:] = rdma_lab.parse(self.lab.scrape("a"))
            judged = {labels["rail"] for labels, _ in series(samples, "rail_check_ok")
                      if labels["check"] == "probe_throughput"}
            return judged >= set(RAILS)
        self.assertTrue(rdma_lab.wait_until(both_rails_judged, THROTTLE_TIMEOUT, 3),
                        "no probe_throughput verdict on both rails within %d s:\n%s" % (
                            THROTTLE_TIMEOUT, self.lab.read("agent-a-throttled.log")[-4000:]))
        return samples

    def test_8_a_run_queued_behind_a_worker_crash_waits_and_runs(self):
        # `probe` over both rails runs rail0, then rail1; its worker is killed once rail0 has
        # carried 1 MB.
        self.stop_agent("agent-a")
        command = (
            "before=$(cat /sys/class/net/%(netdev)s/statistics/tx_bytes); "
            "%(probe)s > /lab/queued.json 2>/lab/queued.err & p=$!; "
            "killed=; for i in $(seq 1 120); do w=$(pgrep -P $p | head -1); "
            "now=$(cat /sys/class/net/%(netdev)s/statistics/tx_bytes); "
            "if [ -n \"$w\" ] && [ $((now - before)) -gt 1000000 ]; then kill -9 $w; killed=$w; "
            "break; fi; sleep 0.5; done; wait $p; echo \"killed=$killed exit=$?\""
        ) % {"netdev": NETDEV["rail0"], "probe": self.probe_command("ucx_throughput", None,
                                                                      "4s")}
        output = self.lab.run("a", command, timeout=rdma_lab.RUN_TIMEOUT + 60).stdout
        print(output.strip())
        self.assertRegex(output, r"killed=\d+", "the worker was not killed mid-probe: " + output)
        runs = self.parse_probe(self.lab.read("queued.json"))
        by_rail = {run["rails"][0]: run for run in runs}
        print("after the kill: %s" % {rail: run.get("error_reason", "ok")
                                      for rail, run in by_rail.items()})
        self.assertEqual(set(by_rail), set(RAILS), runs)
        self.assertEqual(by_rail["rail0"].get("error_reason"), "worker_crashed", runs)
        self.assertTrue(by_rail["rail1"]["success"], "%s\n%s" % (
            by_rail["rail1"], self.lab.read("queued.err")[-2000:]))
