"""A rail that really loses packets, a test that rdma_lab_test.py's class takes in (its lab, its
agents' configuration), run after the faults of rail_faults.py (host a's agent is stopped by then):

9. netem drops LOSS_PERCENT of the packets leaving eth1 in both guests (`tc qdisc ... netem
   loss`) while a fresh agent of host a runs ucx_throughput pinned to rc_verbs (UCX_TLS=rc_v:
   rc_verbs, with ud_verbs for the wire-up only) on both rails. rxe retransmits: its
   hw_counters rise on rxe1 in both guests and stay flat on rxe0, as `rdma statistic show`
   (netlink, not the sysfs files the agent reads) says before and after. Both agents fail
   roce_retransmissions on rail1 alone, each reason naming rxe counters that rose by no more
   than the kernel's own figures, and a failing probe_throughput on rail1 names them in its
   diagnosis of the run. Over ud_verbs UCX would retransmit in software and rxe's counters would
   stay flat: the probe is pinned to RC for that.
"""

import concurrent.futures
import json
import re
import time

import rdma_lab
from rdma_lab import find, series, DEVICE, NETDEV, RAILS

LOSSY = "rail1"
# 3%: rxe's RC recovers every loss (the responder NAKs the gap, the requester goes back to it)
# and the queue pair survives. Measured with this step's probe on a quiet machine: 0.5%, 1%, 3%
# and 5% all completed, the lossy rail at 12%, 4%, 1.7% and 0.3% of the clean rail's rate, host
# a's rcvd_seq_err and completer_retry_err up by 5 to 16 each. On a busy machine the clean rail
# is bound by the guests' CPU: 1% once left the lossy rail at 79% of it, and probe_throughput
# passed; at 3% the lossy rail stays far behind, so probe_throughput fails there (and gives its
# diagnosis) in any weather, while the check asserts only what a failing verdict must say.
LOSS_PERCENT = 3
LOSS = "netem loss %g%%" % LOSS_PERCENT
# rxe's hw_counters that count a retransmission, a timeout or an RNR (roce_retransmissions).
RETRANSMISSION_COUNTERS = ("rcvd_seq_err", "out_of_seq_request", "duplicate_request",
                           "completer_retry_err", "retry_exceeded_err", "rcvd_rnr_err",
                           "send_rnr_err", "retry_rnr_exceeded_err")
# The agents sample the RDMA counters every 2 s and judge the last minute. Host a runs
# ucx_throughput over rc_verbs on both rails, one bulk run at a time, the first at the
# agent's start (no jitter); the default sibling fraction (0.5) and the lab's line-rate fraction.
LOSSY_HEALTH = ("health: {probe_throughput_min_line_rate_fraction: %g, fabric_window: 60s, "
                "fabric_sample_interval: 2s}\n")
LOSSY_PROBES = ("bulk_concurrency: host\n"
                "probes:\n"
                "  - {kind: ucx_throughput, operation: put, message_sizes: [%d], window: %d,"
                " duration: 2s, timeout: 15s, interval: 1m, jitter: 0, ucx_transports: rc_v}\n")
LOSSY_TIMEOUT = 120  # seconds for both rails' verdicts in both agents
ROSE = re.compile(r"\b([a-z_]+) rose by (\d+)")


def counters(text):
    """`rdma -j statistic show`: {device: {counter: value}} (port 1 only)."""
    return {entry["ifname"]: {k: v for k, v in entry.items() if isinstance(v, int)}
            for entry in json.loads(text) if entry.get("port") == 1}


def rises(before, after, device):
    """The retransmission counters of device that rose between two readings: {name: rise}."""
    return {name: after[device].get(name, 0) - before[device].get(name, 0)
            for name in RETRANSMISSION_COUNTERS
            if after[device].get(name, 0) > before[device].get(name, 0)}


def in_parallel(*calls):
    """Runs each call (of no arguments) in a thread of its own, as guest commands of different
    hosts may run (each takes seconds under TCG): their results, in order."""
    with concurrent.futures.ThreadPoolExecutor(max(1, len(calls))) as pool:
        futures = [pool.submit(call) for call in calls]
        return [future.result() for future in futures]


def named_rises(reason):
    """The retransmission counters a reason says rose: {name: rise}."""
    return {name: int(rise) for name, rise in ROSE.findall(reason)
            if name in RETRANSMISSION_COUNTERS}


class LossyRailTests:
    """Mixed into rdma_lab_test.RdmaLabTest (self.lab, self.stop_agent, the agents' config)."""

    def lose(self, host):
        """Loads sch_netem in host, reads its rxe counters and puts the loss on the lossy rail's
        netdev: the counters, or None where the kernel has no sch_netem."""
        result = self.lab.run(host, "modprobe sch_netem || exit 3; rdma -j statistic show && "
                              "tc qdisc replace dev %s root %s" % (NETDEV[LOSSY], LOSS),
                              check=False)
        if result.returncode == 3:
            return None
        self.assertEqual(result.returncode, 0, result.stdout)
        return counters(result.stdout)

    def stop_losing(self, host):
        """Takes the loss off host's lossy netdev: how many packets netem dropped and the rxe
        counters read right before."""
        result = self.lab.run(host, "tc -s qdisc show dev %s; echo '=== rdma'; rdma -j statistic "
                              "show; tc qdisc del dev %s root" % (NETDEV[LOSSY], NETDEV[LOSSY]))
        shown, reading = result.stdout.split("=== rdma\n", 1)
        drops = re.search(r"netem .*?dropped (\d+)", shown, re.S)
        return int(drops.group(1)) if drops else 0, counters(reading)

    def lossy_agent_config(self):
        text = self.agent_config_text("a")
        text = text[:text.index("health:")] + LOSSY_HEALTH % self.line_rate_fraction
        return self.lab.write("a-lossy.yaml", text + LOSSY_PROBES % (self.message_size,
                                                                     self.window))

    def start_agent(self, host, name, config):
        self.lab.start(host, name, [
            self.binary, "--config.file=" + config, "--probe.worker-path=" + self.worker,
            "--web.listen-address=:%d" % rdma_lab.METRICS_PORT], env=self.ucx_env)
        self.lab.wait_http(host, name)

    def restart_responder(self):
        """Host b's agent again, sampling as often and judging over the same window as host
        a's lossy agent: its window then holds this step alone."""
        self.stop_agent("agent-b", host="b")
        self.start_agent("b", "agent-b", self.lab.write(
            "b-lossy.yaml", self.responder_config_text() +
            LOSSY_HEALTH % self.line_rate_fraction))

    def prepare(self, host):
        """Host a without an agent, host b with a fresh one; then lose(host)."""
        if host == "a":
            self.stop_agent("agent-a")
        else:
            self.restart_responder()
        return self.lose(host)

    def test_9_a_lossy_rail_fails_roce_retransmissions(self):
        start = time.monotonic()
        # No RC traffic flows from here until host a's agent starts: whatever either agent sees
        # rise happens between these readings and those at the end.
        before = dict(zip(rdma_lab.HOSTS, in_parallel(*[
            lambda host=host: self.prepare(host) for host in rdma_lab.HOSTS])))
        ready = time.monotonic()
        if None in before.values():
            in_parallel(*[lambda host=host: self.stop_losing(host)
                          for host, reading in before.items() if reading is not None])
            self.skip_step("the guests' kernel has no sch_netem module")
        try:
            samples = self.run_lossy_agent()
        finally:
            judged = time.monotonic()
            ends = in_parallel(lambda: self.stop_losing("a"), lambda: self.stop_losing("b"),
                               lambda: self.stop_agent("agent-a-lossy"))
        drops = {host: end[0] for host, end in zip(rdma_lab.HOSTS, ends)}
        after = {host: end[1] for host, end in zip(rdma_lab.HOSTS, ends)}
        print("%s with %g%% loss: netem dropped %s packets; the step took %.0f s (agents and "
              "loss ready in %.0f s, verdicts %.0f s later, cleared in %.0f s)" % (
                  LOSSY, LOSS_PERCENT, drops, time.monotonic() - start, ready - start,
                  judged - ready, time.monotonic() - judged))
        # Host a sends the data, host b little more than acknowledgements.
        self.assertGreater(drops["a"], 0, "netem dropped nothing: %s" % drops)
        self.check_rc_runs(samples["a"])
        for host in rdma_lab.HOSTS:
            with self.subTest(host=host):
                self.check_retransmissions(host, samples[host], before[host], after[host])
        self.check_diagnosis(samples["a"], before["a"], after["a"])

    def run_lossy_agent(self):
        """Starts host a's lossy agent; both agents' scrapes ({host: samples}) once host a has
        judged probe_throughput on both rails and both agents fail roce_retransmissions on the
        lossy rail."""
        self.start_agent("a", "agent-a-lossy", self.lossy_agent_config())
        samples = {}

        def judged(host):
            samples[host] = rdma_lab.parse(self.lab.scrape(host))
            throughput = {labels["rail"] for labels, _ in series(samples[host], "rail_check_ok")
                          if labels["check"] == "probe_throughput"}
            return (host == "b" or throughput >= set(RAILS)) and find(
                samples[host], "rail_check_ok", check="roce_retransmissions",
                rail=LOSSY) == [0.0]
        # Host b samples as often as host a: once a has judged, b has, or is about to.
        in_time = all(rdma_lab.wait_until(lambda host=host: judged(host), LOSSY_TIMEOUT, 1)
                      for host in rdma_lab.HOSTS)
        self.assertTrue(in_time, "no probe_throughput verdict on both rails, or "
                        "roce_retransmissions not failing on %s in both hosts, within %d s: "
                        "%s\n%s" % (LOSSY, LOSSY_TIMEOUT, self.verdicts(samples),
                                     self.lab.read("agent-a-lossy.log")[-4000:]))
        return samples

    @staticmethod
    def verdicts(samples):
        """{host: {(check, rail): (value, reason)}} of the checks this step judges."""
        checks = ("roce_retransmissions", "probe_throughput")
        out = {}
        for host, host_samples in samples.items():
            reasons = {(labels["check"], labels["rail"]): labels["reason"]
                       for labels, _ in series(host_samples, "rail_check_info")}
            out[host] = {(labels["check"], labels["rail"]): (
                value, reasons.get((labels["check"], labels["rail"])))
                for labels, value in series(host_samples, "rail_check_ok")
                if labels["check"] in checks}
        return out

    def check_rc_runs(self, samples):
        """Both rails' runs succeeded over rc_verbs on their own rxe device (with rc_v UCX may
        list ud_verbs too: the auxiliary transport of the wire-up, which cannot put)."""
        for rail in RAILS:
            self.assertEqual(find(samples, "rail_probe_success", kind="ucx_throughput",
                                  rail=rail), [1.0], rail)
            lanes = {(labels["transport"], labels["device"]) for labels, on in
                     series(samples, "rail_probe_transport_info")
                     if on == 1 and labels["kind"] == "ucx_throughput" and labels["rail"] == rail}
            self.assertIn(("rc_verbs", DEVICE[rail] + ":1"), lanes, rail)
            self.assertLessEqual(lanes, {("rc_verbs", DEVICE[rail] + ":1"),
                                         ("ud_verbs", DEVICE[rail] + ":1")}, rail)
        print("ucx_throughput over rc_verbs (bytes/s): %s" % {
            labels["rail"]: round(value) for labels, value in
            series(samples, "rail_probe_throughput_bytes_per_second")
            if labels["kind"] == "ucx_throughput"})

    def check_retransmissions(self, host, samples, before, after):
        """roce_retransmissions fails on the lossy rail, which the kernel saw retransmit; on each
        rail it fails where the kernel saw rises, naming them by at most the kernel's figures,
        and passes where the kernel saw none (the clean rail, unless the guests were so short of
        CPU that rxe dropped packets there too)."""
        kernel = {rail: rises(before, after, DEVICE[rail]) for rail in RAILS}
        verdict = self.verdicts({host: samples})[host]
        print("host %s: kernel's retransmission counter rises %s; roce_retransmissions %s" % (
            host, kernel, {rail: verdict.get(("roce_retransmissions", rail)) for rail in RAILS}))
        self.assertNotEqual(kernel[LOSSY], {}, "rxe did not retransmit (host %s)" % host)
        for rail in RAILS:
            self.assertIn(("roce_retransmissions", rail), verdict, (host, rail))
            value, reason = verdict[("roce_retransmissions", rail)]
            if not kernel[rail]:
                self.assertEqual((value, reason), (1.0, None), "host %s %s: the kernel saw no "
                                 "retransmission" % (host, rail))
                continue
            if rail != LOSSY:
                print("host %s: the clean rail %s retransmitted too (rxe drops packets when the "
                      "guests are short of CPU): 'only on %s' is not shown by this run" % (
                          host, rail, LOSSY))
            self.assertEqual(value, 0.0, (host, rail, kernel[rail]))
            self.assertIn(DEVICE[rail], reason)
            self.check_named_rises(reason, kernel[rail])

    def check_named_rises(self, reason, kernel_rises):
        """The counters a reason says rose: at least one, each one that the kernel saw rise, by
        no more than the kernel's figure (the agent read within the test's two readings)."""
        named = named_rises(reason)
        self.assertNotEqual(named, {}, "no rxe retransmission counter named: " + reason)
        for name, rise in named.items():
            self.assertIn(name, kernel_rises, reason)
            self.assertGreater(rise, 0, reason)
            self.assertLessEqual(rise, kernel_rises[name], reason)

    def check_diagnosis(self, samples, before, after):
        """A failing probe_throughput on the lossy rail names the counters in its diagnosis of
        the run; the other rail passes it."""
        verdict = self.verdicts({"a": samples})["a"]
        other = RAILS[1 - RAILS.index(LOSSY)]
        self.assertEqual(verdict[("probe_throughput", other)], (1.0, None))
        value, reason = verdict[("probe_throughput", LOSSY)]
        print("probe_throughput on %s: %g %s" % (LOSSY, value, reason or ""))
        if value == 1.0:
            return
        self.assertIn("during the run: ", reason)
        self.check_named_rises(reason.split("during the run: ", 1)[1],
                               rises(before, after, DEVICE[LOSSY]))
