#!/usr/bin/python3
"""The agent on real RDMA devices: Soft-RoCE (rdma_rxe) rails in two QEMU guests (issue 22).

Needs root, QEMU and Debian's kernel package (scripts/rdma-lab check); skips with the reason
otherwise, and fails instead when RAIL_REQUIRE_RDMA_LAB=1. The guests boot once for every test
of this file (tests/rdma/rdma_lab.py); host b runs a responder-only agent, host a an agent that
probes host b with every probe kind over both rails. The tests run in order:

1. inventory (inventory_checks.py): host a's /metrics against the guest's own `ibv_devinfo -v`,
   `rdma link`, `rdma dev`, `ip` and sysfs read with the shell's read and globs;
2. probes: every scheduled kind succeeds on every rail; each UCX kind's
   rail_probe_transport_info names rc_verbs or ud_verbs on that rail's rxe device, never tcp;
3. doctor in host a, with the peer;
4. dma-buf: what the probe worker reports for dma-buf registration on rxe, against an
   ibv_reg_dmabuf_mr call of our own (Python ctypes on libibverbs);
5. the initiator (and its worker) killed during a put run: host b's agent keeps serving, its
   worker is up and a new run succeeds;
6. reference tools (reference_tools.py): ib_write_bw, ucx_perftest ucp_put_bw and our
   ucx_throughput, alternating, the medians' ratios printed (never asserted: the guests are
   emulated);
7.-8. faults of one rail (rail_faults.py): a rail throttled to 10 Mbit/s, the probe worker killed
   with a run queued on the other rail;
9. a rail that loses packets (lossy_rail.py): netem loss on rail1 while host a probes both rails
   over rc_verbs; rxe retransmits on rail1 and roce_retransmissions fails there alone, in both
   agents, against the kernel's own counters (`rdma statistic show`);
10. the quirk handling off: both agents restarted without ucx_device_quirk_workaround and without
   any UCX setting; host a's UCX probe series fails probe_failing with UCX's fatal line in the
   reason, and ucx_device_quirk names the settings.

The tests run by their number (main() orders them so: test_10_ after test_9_).

Every scrape of an agent (assert_verdicts) checks every rail_check_ok series against VERDICTS.

Without UCX_UD_VERBS_ETH_DGID_CHECK=n UCX 1.13's UD wire-up times out over rxe's IPv4 RoCE v2 GID
and every UCX probe aborts its worker (issue 22, item 1). Tests 1 to 6 give the agents
`ucx_device_quirk_workaround: true` (their workers get the setting, nothing else does) and no
UCX setting of their own, and ucx_device_quirk fails on every rail throughout; test 10 shows what
happens without it.
"""

import argparse
import errno
import json
import os
import re
import sys
import time
import unittest

import inventory_checks
import lossy_rail
import rail_faults
import rdma_lab
import reference_tools
from rdma_lab import find, series, DEVICE, RAILS

BINARY = None  # the build's rail_exporter and probe worker (main() sets them)
WORKER = None
QUIRK_SETTINGS = ("UCX_UD_VERBS_ETH_DGID_CHECK=n", "UCX_IB_GID_INDEX=0")
# Test 10: one UCX series (ucx_rtt over rail0, 8 B), often, so that it fails
# health.probe_failing_runs (3) runs in a row before the worker's crash loop (5 deaths in a row
# without an answer) stops the restarts.
FAILING_RUNS = 3
QUIRK_TIMEOUT = 300  # seconds for probe_failing to fail without the workaround
PROBES_WITHOUT_WORKAROUND = (
    "  - {kind: ucx_rtt, rails: [rail0], message_sizes: [8], duration: 1s, timeout: 15s,"
    " interval: 20s, jitter: 0}\n")
# UCX's fatal forms as the worker's stderr relay keeps them (probe/worker/stderr_relay.h).
UCX_FATAL_LINE = re.compile(r"its last fatal line: .*(Fatal: |Assertion )")
SECRET = "rdma-lab-shared-secret\n"
PEER_B = rdma_lab.peer_address("b")
SCHEDULE_TIMEOUT = 480  # seconds for every scheduled probe of host a to have a result
PROBE_TIMEOUT = 120  # seconds for one `rail_exporter probe` run in a guest
KILLS = 3  # initiators killed during a put run
MESSAGE_SIZE = 65536  # bytes per message of every throughput figure compared
# The line-rate fraction probe_throughput uses here: the emulated rails move a few MB/s against
# a port rate of 100 Gb/s (12.5 GB/s), ~0.05%; 0.00001 (125 kB/s) still fails a rail that moves
# next to nothing. The sibling fraction is lowered too: under TCG the two rails' figures
# differ by load alone.
LINE_RATE_FRACTION = 0.00001
SIBLING_FRACTION = 0.1

UCX_KINDS = ("ucx_throughput", "ucx_rtt")  # single-rail UCX kinds
MULTIRAIL_KINDS = ("multirail_capacity", "ucx_multirail_throughput")
TCP_KINDS = ("tcp_throughput", "tcp_rtt")
# Window 4 (not 16): with 16 outstanding 64 KiB puts per rail, a guest short of CPU drops rxe
# packets and RC's retries stall a rail past the 10 s drain timeout (issue 22, item 3).
# multirail_capacity, which loads both rails at once, even needs 16 KiB messages and a window of
# 2: with 4 x 64 KiB rail0 stalled until the run's deadline whenever the machine was busy.
# ucx_multirail_throughput uses am at 256 KiB: UCX stripes rendezvous over both rails, but puts of
# 64 KiB go over one lane (multirail_striping then fails, rightly). Intervals short enough that a
# run that fails is retried within the wait; the bulk budget: (4 bulk jobs x (20 s + 1 s)) /
# (4 min x 0.9) = 39% per rail at most (the agent allows 50%).
WINDOW = 4
PROBES = (
    "  - {kind: ucx_rtt, duration: 1s, timeout: 20s, interval: 2m}\n"
    "  - {kind: ucx_throughput, operation: put, message_sizes: [%(size)d], window: %(window)d,"
    " duration: 2s, timeout: 20s, interval: 4m}\n"
    "  - {kind: multirail_capacity, message_sizes: [16384], window: 2, duration: 2s,"
    " timeout: 20s, interval: 4m}\n"
    "  - {kind: ucx_multirail_throughput, operation: am, message_sizes: [262144],"
    " window: %(window)d, duration: 2s, timeout: 20s, interval: 4m}\n"
    "  - {kind: tcp_rtt, duration: 1s, timeout: 10s, interval: 2m}\n"
    "  - {kind: tcp_throughput, duration: 2s, timeout: 20s, interval: 4m}\n"
) % {"size": MESSAGE_SIZE, "window": WINDOW}
# The series every scheduled job gives: (kind, rail, size).
EXPECTED_SERIES = ({("ucx_rtt", rail, size) for rail in RAILS for size in ("8", "4096")} |
                   {("ucx_throughput", rail, str(MESSAGE_SIZE)) for rail in RAILS} |
                   {("tcp_rtt", rail, "8") for rail in RAILS} |
                   {("tcp_throughput", rail, "131072") for rail in RAILS} |
                   {("multirail_capacity", "rail0+rail1", "16384"),
                    ("ucx_multirail_throughput", "rail0+rail1", "262144")})

# What every rail_check_ok series must read on rxe, by check: 1 or 0, per (rail, peer) as the
# check gives them. A check not listed must be absent. "after" marks series that appear only once
# their evidence exists (a handshake, a successful probe): absent before, the value after.
#   port_active, port_rate (expected 100 Gb/s, the NICs advertise 100000 Mb/s), roce_gid (rxe
#   adds the IPv4 RoCE v2 GID at index 1), mtu (1500 on both), duplicate_subnet: 1.
#   counter_saturated: absent: rxe has no counters/ (no PMA), so there is nothing to saturate
#   (its bytes come from the netdev's statistics: rail_port_bytes_source_info, checked below).
#   peer_mtu, peer_version (after the first handshake), probe_throughput (LINE_RATE_FRACTION),
#   transport_fallback (after a UCX probe), multirail_striping (after ucx_multirail_throughput,
#   am at 256 KiB: about 50% per rail): 1.
#   link_flaps (from the virtio netdevs' carrier counters; judged over a window, so from the
#   second scrape on): 1.
#   roce_retransmissions (rxe's retransmission, timeout and RNR hw_counters, read by the agent
#   at its start and by every scrape; a verdict from the second reading on): 1, or 0 with a reason naming the rail's rxe device and a counter that rose: the emulated
#   rails really drop packets when the guests are short of CPU (test 2 saw duplicate_request and
#   completer_retry_err rise on rxe0 with the machine at load 8), so any step may see a real
#   retransmission. Test 9 makes rail1 lose packets and judges the check against the kernel.
#   pcie_link: absent (rxe is a virtual device with no PCI function); the GPU checks: absent
#   (no GPU); the other fabric checks: absent (virtio_net has no allow-listed ethtool
#   statistics, rxe none of the mlx5 congestion hw_counters, no hwmon, no DCB).
VERDICTS = {
    "port_active": {"per": "rail", "value": 1},
    "port_rate": {"per": "rail", "value": 1},
    "roce_gid": {"per": "rail", "value": 1},
    "mtu": {"per": "rail", "value": 1},
    "duplicate_subnet": {"per": "rail", "value": 1},
    "peer_mtu": {"per": "rail_peer", "value": 1, "after": True},
    "peer_version": {"per": "peer", "value": 1, "after": True},
    "probe_throughput": {"per": "rail_peer", "value": 1, "after": True},
    "transport_fallback": {"per": "rail_peer", "value": 1, "after": True},
    "multirail_striping": {"per": "peer", "value": 1, "after": True},
    "link_flaps": {"per": "rail", "value": 1, "after": True},
    "roce_retransmissions": {"per": "rail", "value": 1, "after": True,
                             "or_failing": r"\b%(device)s port 1 [a-z_]+ rose by \d+"},
    # From the first result of a series; multi-rail series are judged on "rail0+rail1".
    "probe_failing": {"per": "rail_peer", "value": 1, "after": True},
    # UCX 1.13 on rxe with the IPv4 GID at index 1: fails on both hosts although their workers
    # run with the workaround (issue 22, item 1).
    "ucx_device_quirk": {"per": "rail", "value": 0},
}

def agent_config(host, peers=True, workaround=True, probes=PROBES):
    text = "ucx_device_quirk_workaround: %s\n" % ("true" if workaround else "false")
    text += "rails:\n" + "".join(
        "  - {name: %s, device: %s, expected_rate_gbps: 100}\n" % (rail, DEVICE[rail])
        for rail in RAILS)
    text += ("responder: {listen_address: ':%d', secret_file: /lab/secret, name: host-%s}\n"
             % (rdma_lab.RESPONDER_PORT, host))
    if peers:
        text += "peers:\n  - {name: b, address: '%s'}\n" % PEER_B
        text += ("budget: {max_bulk_time_fraction_per_rail: 0.5, "
                 "max_bytes_per_hour: 100000000000000}\n")
        text += ("health: {probe_throughput_min_line_rate_fraction: %g, "
                 "probe_throughput_min_sibling_fraction: %g}\n"
                 % (LINE_RATE_FRACTION, SIBLING_FRACTION))
        text += "probes:\n" + probes
    return text


class RdmaLabTest(rdma_lab.RdmaLabTestCase, inventory_checks.InventoryTests,
                  reference_tools.ReferenceToolTests, rail_faults.RailFaultTests,
                  lossy_rail.LossyRailTests):
    # What the mixed-in tests take from this file.
    line_rate_fraction = LINE_RATE_FRACTION
    message_size = MESSAGE_SIZE
    window = WINDOW
    ucx_env = {}  # the agents' own ucx_device_quirk_workaround, nothing else

    @property
    def binary(self):
        return BINARY

    @property
    def worker(self):
        return WORKER

    @staticmethod
    def agent_config_text(host):
        return agent_config(host)

    @staticmethod
    def responder_config_text():
        return agent_config("b", peers=False)

    @classmethod
    def set_up_lab(cls):
        lab = cls.lab
        lab.write("secret", SECRET, 0o600)
        cls.config_a = lab.write("a.yaml", agent_config("a"))
        cls.config_b = lab.write("b.yaml", agent_config("b", peers=False))
        cls.scrapes = 0
        cls.start_agents(cls.config_a, cls.config_b)

    @classmethod
    def start_agents(cls, config_a, config_b):
        for host, config in (("b", config_b), ("a", config_a)):
            cls.lab.start(host, "agent-" + host, [
                BINARY, "--config.file=" + config, "--probe.worker-path=" + WORKER,
                "--web.listen-address=:%d" % rdma_lab.METRICS_PORT])
            cls.lab.wait_http(host, "agent-" + host)

    # -- scrapes, each with every verdict asserted ------------------------------------------

    def scrape(self, host):
        """A scrape of host's agent, its verdicts asserted: [(name, labels, value)]."""
        samples = rdma_lab.parse(self.lab.scrape(host))
        self.assert_verdicts(host, samples)
        type(self).scrapes += 1
        return samples

    def assert_verdicts(self, host, samples):
        verdicts = series(samples, "rail_check_ok")
        reasons = {(labels["check"], labels["rail"], labels["peer"]): labels["reason"]
                   for labels, _ in series(samples, "rail_check_info")}
        probing = host == "a"
        seen = {}
        for labels, value in verdicts:
            check, rail, peer = labels["check"], labels["rail"], labels["peer"]
            expected = VERDICTS.get(check)
            self.assertIsNotNone(expected, "host %s: check %s (rail %r, peer %r) = %g is not "
                                 "expected on rxe; reason: %s" % (
                                     host, check, rail, peer, value,
                                     reasons.get((check, rail, peer))))
            if value == 0 and "or_failing" in expected:
                self.assertRegex(reasons.get((check, rail, peer), ""), expected["or_failing"] % {
                    "device": DEVICE[rail]}, (host, check, rail))
            else:
                self.assertEqual(value, expected["value"], "host %s: %s rail=%r peer=%r: %s" % (
                    host, check, rail, peer, reasons.get((check, rail, peer))))
            per = expected["per"]
            if check == "ucx_device_quirk":
                for setting in QUIRK_SETTINGS:
                    self.assertIn(setting, reasons.get((check, rail, peer), ""), (host, rail))
            if check == "probe_failing" and rail == "+".join(RAILS):
                rail = RAILS[0]  # a multi-rail series' verdict: judged like one of a rail
            self.assertEqual(rail in RAILS, per in ("rail", "rail_peer"), (check, rail))
            self.assertEqual(peer == "b", per in ("peer", "rail_peer") and probing,
                             (host, check, peer))
            seen.setdefault(check, set()).add((rail, peer))
        for check, expected in VERDICTS.items():
            if expected.get("after"):
                continue
            self.assertEqual(seen.get(check), {(rail, "") for rail in RAILS},
                             "host %s: check %s must have one verdict per rail" % (host, check))
        return seen

    # -- 2. every probe kind over rxe ------------------------------------------------------

    def test_2_every_probe_kind_runs_over_rxe(self):
        # Each series must succeed at least once; a run that fails (the emulated rails stall now
        # and then) is retried at its next interval, and its errors are printed.
        start = time.monotonic()
        succeeded = {}  # (kind, rail, size): the lanes of its successful run
        samples = []

        def every_series_succeeded():
            samples[:] = self.scrape("a")
            for labels, value in series(samples, "rail_probe_success"):
                key = (labels["kind"], labels["rail"], labels["size"])
                if value == 1 and key not in succeeded:
                    succeeded[key] = {
                        (lanes["rail"], lanes["transport"], lanes["device"])
                        for lanes, on in series(samples, "rail_probe_transport_info")
                        if on == 1 and (lanes["kind"], lanes["size"]) == key[::2] and
                        lanes["rail"] in key[1].split("+")}
            return EXPECTED_SERIES <= set(succeeded)
        rdma_lab.wait_until(every_series_succeeded, SCHEDULE_TIMEOUT, 5)
        errors = sorted("%s %s %s: %s %g" % (labels["kind"], labels["rail"], labels["size"],
                                            labels["reason"], value)
                        for labels, value in series(samples, "rail_probe_errors_total"))
        print("every series succeeded within %.0f s; failed runs meanwhile: %s" % (
            time.monotonic() - start, errors or "none"))
        self.assertEqual(EXPECTED_SERIES - set(succeeded), set(),
                         "series without a successful run after %d s; errors: %s\n%s" % (
                             SCHEDULE_TIMEOUT, errors, self.lab.read("agent-a.log")[-4000:]))
        for (kind, rail, size), lanes in sorted(succeeded.items()):
            if kind in TCP_KINDS:
                continue
            rails = rail.split("+")
            self.assertEqual({lane[0] for lane in lanes}, set(rails),
                             "%s %s: lanes %s" % (kind, rail, lanes))
            for lane_rail, transport, device in lanes:
                self.assertIn(transport, ("rc_verbs", "ud_verbs"), (kind, rail, lanes))
                self.assertEqual(device, DEVICE[lane_rail] + ":1", (kind, rail, lanes))
        for rail in RAILS:
            self.assertEqual(find(samples, "rail_fallback_tcp", rail=rail, peer="b"), [0.0])
        # The workaround is the workers' own: neither agent has the setting, both workers do.
        for host in rdma_lab.HOSTS:
            agent, worker = self.environments(host)
            self.assertNotIn("UCX_UD_VERBS_ETH_DGID_CHECK", agent, host)
            self.assertIn(QUIRK_SETTINGS[0], worker.splitlines(), host)
        # The probe-derived verdicts exist once their evidence does.
        seen = self.assert_verdicts("a", samples)
        for check in ("peer_mtu", "peer_version"):
            self.assertIn(check, seen, "no %s verdict after the handshakes" % check)
        print("lanes of the successful runs: %s" % {
            "%s/%s/%s" % key: sorted("%s %s" % lane[1:] for lane in lanes)
            for key, lanes in sorted(succeeded.items()) if lanes})
        print("throughput of the last runs (bytes/s): %s" % {
            "%s/%s" % (labels["kind"], labels["rail"]): round(value)
            for labels, value in series(samples, "rail_probe_throughput_bytes_per_second")})

    # -- 3. doctor ---------------------------------------------------------------------------

    def test_3_doctor(self):
        result = self.lab.run("a", "%s doctor --config.file=%s --peer=%s "
                              "--probe.worker-path=%s" % (BINARY, self.config_a, PEER_B, WORKER),
                              timeout=PROBE_TIMEOUT, check=False)
        print("doctor in host a (exit %d):\n%s" % (result.returncode, result.stdout))
        # UCX 1.13 on rxe: ucx_device_quirk fails on both rails, and nothing else does.
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        failed = re.findall(r"^FAIL (\S+) rail=(\S+): (.*)$", result.stdout, re.M)
        self.assertEqual(sorted((check, rail) for check, rail, _ in failed),
                         [("ucx_device_quirk", rail) for rail in RAILS], result.stdout)
        for _, _, reason in failed:
            for setting in QUIRK_SETTINGS:
                self.assertIn(setting, reason)
        for rail in RAILS:
            self.assertIn(DEVICE[rail], result.stdout)
            # The GID index line names the quirk instead of recommending index 1.
            gid_line = re.search(r"^INFO roce_gid_index rail=%s: (.*)$" % rail, result.stdout,
                                 re.M)
            self.assertIsNotNone(gid_line, result.stdout)
            self.assertIn("ucx_device_quirk", gid_line.group(1))
            self.assertNotIn("UCX_IB_GID_INDEX=1", gid_line.group(1))
        self.scrape("a")

    # -- 4. dma-buf --------------------------------------------------------------------------

    def test_4_dma_buf_registration_on_rxe(self):
        # Our own registration attempt, as the worker makes it: a 4 KiB dma-buf MR of fd -1 on a
        # fresh protection domain; what matters is the errno that says whether the device knows
        # dma-buf at all (EOPNOTSUPP: no; EBADF or another: yes, the fd was refused).
        script = self.lab.write("dmabuf.py", DMABUF_SCRIPT)
        own = json.loads(self.lab.run("a", "python3 " + script).stdout)
        capabilities = self.lab.run("a", "%s --capabilities" % WORKER)
        reported = json.loads(capabilities.stdout)
        worker = {entry["device"]: entry for entry in reported["dma_buf"]}
        print("dma-buf registration on rxe: ibv_reg_dmabuf_mr %s; the worker reports %s" % (
            own, reported["dma_buf"]))
        for device in DEVICE.values():
            self.assertIn(device, own)
            self.assertIn(device, worker)
            knows_dma_buf = own[device]["registered"] or own[device]["errno"] not in (
                errno.EOPNOTSUPP, errno.EPROTONOSUPPORT)
            self.assertEqual(worker[device]["supported"], knows_dma_buf, (own, worker))
            # rxe (kernel 6.1, rdma-core 44) has no dma-buf MR registration: the call fails with
            # EOPNOTSUPP, and the worker says so.
            self.assertFalse(own[device]["registered"])
            self.assertEqual(own[device]["errno"], errno.EOPNOTSUPP)
            self.assertEqual(worker[device]["detail"], os.strerror(errno.EOPNOTSUPP))
        self.scrape("a")

    # -- 5. the worker killed mid-probe ------------------------------------------------------

    def test_5_initiator_killed_during_a_put_run(self):
        pid_b = self.lab.pid("agent-b")
        command = (
            "out=; for n in $(seq 1 %(kills)d); do "
            "before=$(cat /sys/class/net/eth0/statistics/tx_bytes); "
            "%(binary)s probe --config.file=%(config)s --peer=%(peer)s "
            "--probe.worker-path=%(worker)s --kind=ucx_throughput --operation=put "
            "--rail=rail0 --size=%(size)d --window=%(window)d --duration=20s --timeout=60s "
            "--output=json "
            ">/dev/null 2>&1 & p=$!; "
            # Mid-probe: the worker exists and rail 0 has carried 1 MB more than before.
            "moving=0; for i in $(seq 1 120); do w=$(pgrep -P $p | head -1); "
            "now=$(cat /sys/class/net/eth0/statistics/tx_bytes); "
            "if [ -n \"$w\" ] && [ $((now - before)) -gt 1000000 ]; then moving=1; break; fi; "
            "sleep 0.5; done; kill -9 $p; wait $p 2>/dev/null; "
            "gone=0; for i in $(seq 1 20); do kill -0 $w 2>/dev/null || { gone=1; break; }; "
            "sleep 0.5; done; echo \"kill $n worker=$w moving=$moving gone=$gone\"; done"
        ) % {"kills": KILLS, "binary": BINARY, "config": self.config_a,
             "peer": PEER_B, "worker": WORKER, "size": MESSAGE_SIZE,
             "window": WINDOW}
        output = self.lab.run("a", command, timeout=KILLS * 120).stdout
        print(output.strip())
        kills = re.findall(r"kill \d+ worker=(\d*) moving=(\d) gone=(\d)", output)
        self.assertEqual(len(kills), KILLS, output)
        for worker, moving, gone in kills:
            self.assertTrue(worker, "no probe worker seen: %s" % output)
            self.assertEqual(moving, "1", "no put traffic on rail 0 before the kill: " + output)
            self.assertEqual(gone, "1", "a killed initiator left its worker behind: " + output)
        # Host b's agent is the same process, serves, and its worker is up again.
        self.assertEqual(self.lab.pid("agent-b"), pid_b)
        self.lab.run("b", "kill -0 %d" % pid_b)
        samples = []

        def worker_up():
            samples[:] = self.scrape("b")
            return find(samples, "rail_exporter_probe_worker_up") == [1.0]
        self.assertTrue(rdma_lab.wait_until(worker_up, 60, 2),
                        "host b's probe worker is not up: %s" % [
                            s for s in samples if "probe_worker" in s[0]])
        restarts = {labels["reason"]: value for labels, value in
                    series(samples, "rail_exporter_probe_worker_restarts_total")}
        print("host b's worker restarts by reason after %d kills: %s" % (KILLS, restarts))
        # A new run from host a succeeds.
        runs = self.probe("ucx_throughput", "rail0")
        self.assertTrue(runs and all(run["success"] for run in runs), runs)
        self.scrape("a")

    def probe_command(self, kind, rail, duration="2s"):
        """The command line of `rail_exporter probe` in host a against host b (every rail when
        rail is None), JSON out."""
        return ("%s probe --config.file=%s --peer=%s --probe.worker-path=%s --kind=%s %s"
                "--size=%d --window=%d --duration=%s --timeout=60s --output=json" % (
                    BINARY, self.config_a, PEER_B, WORKER, kind,
                    "--rail=%s " % rail if rail else "", MESSAGE_SIZE, WINDOW, duration))

    def parse_probe(self, output):
        """The JSON results in `rail_exporter probe`'s output."""
        try:
            return json.loads(output[output.index("["):])
        except ValueError:
            self.fail("no results from `rail_exporter probe`:\n%s" % output)

    def probe(self, kind, rail, duration="2s"):
        """`rail_exporter probe` in host a against host b: its JSON results."""
        result = self.lab.run("a", self.probe_command(kind, rail, duration),
                              timeout=PROBE_TIMEOUT, check=False)
        return self.parse_probe(result.stdout)

    # -- 10. without the workaround -----------------------------------------------------------

    def environments(self, host):
        """The environment variables of host's agent and of its probe worker ("" when none
        runs), one per line."""
        pid = self.lab.pid("agent-" + host)
        return self.lab.run(host, "tr '\\0' '\\n' < /proc/%d/environ; echo '=== worker'; "
                            "w=$(pgrep -P %d | head -1); [ -n \"$w\" ] && tr '\\0' '\\n' < "
                            "/proc/$w/environ; true" % (pid, pid)).stdout.split("=== worker\n")

    def test_10_without_the_quirk_workaround(self):
        lab = self.lab
        for host in rdma_lab.HOSTS:
            pid = lab.pid("agent-" + host)  # host a's is stopped by tests 7 to 9
            if not pid:
                continue
            lab.run(host, "kill %d 2>/dev/null; for i in $(seq 1 150); do kill -0 %d 2>/dev/null "
                    "|| exit 0; sleep 0.2; done; exit 1" % (pid, pid), check=False)
        config_a = lab.write("a-off.yaml", agent_config(
            "a", workaround=False, probes=PROBES_WITHOUT_WORKAROUND))
        config_b = lab.write("b-off.yaml", agent_config("b", peers=False, workaround=False))
        self.start_agents(config_a, config_b)
        for host in rdma_lab.HOSTS:
            for environment in self.environments(host):
                self.assertNotIn("UCX_", environment, host)
        state = {}

        def failing():
            samples = rdma_lab.parse(lab.scrape("a"))
            state["samples"] = samples
            state["reasons"] = {(labels["check"], labels["rail"], labels["peer"]): labels["reason"]
                                for labels, _ in series(samples, "rail_check_info")}
            return find(samples, "rail_check_ok", check="probe_failing", rail="rail0",
                        peer="b") == [0.0]
        failed = rdma_lab.wait_until(failing, QUIRK_TIMEOUT, 5)
        log_a = lab.read("agent-a.log")
        self.assertTrue(failed, "probe_failing did not fail within %d s: %s\n%s" % (
            QUIRK_TIMEOUT, state.get("reasons"), log_a[-4000:]))
        reason = state["reasons"][("probe_failing", "rail0", "b")]
        print("host a without the workaround: probe_failing rail0 b: %s" % reason)
        self.assertRegex(reason, r"^ucx_rtt \(size 8\) failed its last \d+ runs "
                         r"\(health.probe_failing_runs %d\): (peer_)?worker_crashed"
                         % FAILING_RUNS)
        self.assertRegex(reason, UCX_FATAL_LINE)
        # UCX's own line reached the agent's log unchanged, through the worker's stderr relay.
        self.assertRegex(log_a, r"\.c:\d+\s+(Fatal: |Assertion )")
        for rail in RAILS:
            quirk = state["reasons"][("ucx_device_quirk", rail, "")]
            print("host a without the workaround: ucx_device_quirk %s: %s" % (rail, quirk))
            for setting in QUIRK_SETTINGS:
                self.assertIn(setting, quirk)
        # No verdict of the failing series' kind stays green meanwhile.
        for check in ("transport_fallback", "probe_throughput"):
            self.assertEqual(find(state["samples"], "rail_check_ok", check=check, rail="rail0",
                                  peer="b"), [], check)


# Tries a dma-buf MR registration on every RDMA device (fd -1, 4 KiB, local write) and prints
# {device: {"registered": bool, "errno": the errno of a failure}} as JSON.
DMABUF_SCRIPT = r"""
import ctypes, json
verbs = ctypes.CDLL("libibverbs.so.1", use_errno=True)
verbs.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p)
verbs.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
verbs.ibv_get_device_name.restype = ctypes.c_char_p
verbs.ibv_get_device_name.argtypes = [ctypes.c_void_p]
verbs.ibv_open_device.restype = ctypes.c_void_p
verbs.ibv_open_device.argtypes = [ctypes.c_void_p]
verbs.ibv_alloc_pd.restype = ctypes.c_void_p
verbs.ibv_alloc_pd.argtypes = [ctypes.c_void_p]
verbs.ibv_reg_dmabuf_mr.restype = ctypes.c_void_p
verbs.ibv_reg_dmabuf_mr.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t,
                                    ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
IBV_ACCESS_LOCAL_WRITE = 1
count = ctypes.c_int()
devices = verbs.ibv_get_device_list(ctypes.byref(count))
answers = {}
for i in range(count.value):
    name = verbs.ibv_get_device_name(devices[i]).decode()
    pd = verbs.ibv_alloc_pd(verbs.ibv_open_device(devices[i]))
    ctypes.set_errno(0)
    mr = verbs.ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE)
    code = ctypes.get_errno()
    answers[name] = {"registered": bool(mr), "errno": code}
print(json.dumps(answers))
"""

def by_step(first, second):
    """Orders test methods by their step number (test_10_ after test_9_)."""
    def key(name):
        match = re.match(r"test_(\d+)_", name)
        return (int(match.group(1)) if match else 0, name)
    return (key(first) > key(second)) - (key(first) < key(second))


def main():
    global BINARY, WORKER
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--worker", required=True)
    args, rest = parser.parse_known_args(sys.argv[1:])
    BINARY, WORKER = args.binary, args.worker
    loader = unittest.TestLoader()
    loader.sortTestMethodsUsing = by_step
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, testLoader=loader)


if __name__ == "__main__":
    main()
