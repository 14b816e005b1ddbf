#!/usr/bin/python3
"""A capacity measured too low is measured again at once, and no efficiency above range is shown.

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

Issue 28: a striping efficiency (ucx_multirail_throughput / multirail_capacity) above
1 + figures.striping_efficiency_tolerance (default 0.1) means the capacity is low, not that UCX
beat the rails: the agent withholds the efficiency (rail_multirail_striping_efficiency_withheld,
reason above_capacity, then awaiting_capacity), counts rail_multirail_capacity_remeasures_total
and runs multirail_capacity again at once instead of a whole interval later.

Here both rails are shaped to CAPACITY_RATE before the agents start, so that host a's first
multirail_capacity run (due at start: jitter 0, first in the configuration) measures them slow.
The moment its result is in (rail_probe_last_run_timestamp_seconds) both rails are shaped to
RELEASED_RATE instead, and the striped ucx_multirail_throughput run measures them at that rate:
an efficiency of about RELEASED_RATE / CAPACITY_RATE / 2 or more. The test's margin for reshaping
is a tcp_rtt on each rail between the two bulk runs (the scheduler starts no bulk run on a rail
while a latency probe uses it), LATENCY_HOLD long.

Why RELEASED_RATE and not no shaping at all: on veths of a small machine, multirail_capacity (two
contexts at once) is CPU-bound well below what one rail carries alone, and UCX over TCP puts a
striped run's bytes on one rail; unshaped, ucx_multirail_throughput measured 1.85 to 1.96 times
multirail_capacity on the 2-core development VM, an efficiency no re-measure brings into range. At
RELEASED_RATE on both rails both runs are bounded by the shaping, not the CPU.

Asserted on every scrape: figure_invariants.assert_invariants, no efficiency above
1 + EFFICIENCY_TOLERANCE, never an efficiency and its withholding together. Then: the efficiency
was withheld above_capacity (or awaiting_capacity), the re-measure counter rose, the second
multirail_capacity run finished within REMEASURE_WITHIN of the striped run (the interval is
INTERVAL_S), and an efficiency in [0, 1 + EFFICIENCY_TOLERANCE] is published at last.
"""

import os
import unittest

import harness
import lab
import striping_scenario as scenario
from figure_invariants import assert_invariants

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlremeasure")
CAPACITY_RATE = "100mbit"
CAPACITY_BYTES_PER_SECOND = 100e6 / 8
RELEASED_RATE = "1gbit"
INTERVAL_S = 300  # every probe's: a second capacity run within it is the re-measure
LATENCY_HOLD = "3s"  # the tcp_rtt runs between the capacity run and the striped one
REMEASURE_WITHIN_S = 30.0
EFFICIENCY_TOLERANCE = 0.1  # figures.striping_efficiency_tolerance's default
FIRST_RUN_TIMEOUT_S = 30.0
POLL_S = 0.2  # the scrape interval while waiting for the first capacity run
REMEASURE_TIMEOUT_S = 90.0

PROBES = (
    "  - {kind: multirail_capacity, duration: 1s, timeout: 5s, interval: %ds, jitter: 0}\n"
    "  - {kind: tcp_rtt, duration: %s, timeout: 6s, interval: %ds, jitter: 0}\n"
    "  - {kind: ucx_multirail_throughput, duration: 1s, timeout: 5s, interval: %ds, jitter: 0}\n"
    % (INTERVAL_S, LATENCY_HOLD, INTERVAL_S, INTERVAL_S))


@lab.needs_root
class LabCapacityRemeasureTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        lab.require_tools("ip", "curl", "tc")
        cls.lab = lab.Lab(PREFIX, tmp_prefix="rail-lab-remeasure-")
        cls.lab.up()
        try:
            for rail in lab.RAIL_NAMES:
                cls.lab.throttle(lab.rail_index(rail), CAPACITY_RATE)
            secret = cls.lab.secret("secret", "lab-remeasure-secret\n")
            config_b = cls.lab.config("b.yaml", "b", secret=secret)
            cls.config_a = cls.lab.config("a.yaml", "a", secret=secret,
                                          peers={scenario.PEER: lab.peer_address("b")},
                                          probes=PROBES)
            cls.lab.start_agent("b", ["--config.file=" + config_b])
        except BaseException:
            cls.lab.down()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lab.down()

    def test_low_capacity_is_remeasured_and_no_efficiency_above_range_is_shown(self):
        seen = {"withheld": set(), "efficiencies": [], "remeasures": []}

        def on_scrape(text, where):
            assert_invariants(text, where)
            samples = scenario.parse(text)
            value, withheld = scenario.efficiency(samples)
            if value is not None:
                assert 0 <= value <= 1 + EFFICIENCY_TOLERANCE, (
                    "%s: efficiency %r published" % (where, value))
                assert not withheld, "%s: efficiency %r and withheld %s" % (where, value,
                                                                           withheld)
                seen["efficiencies"].append(value)
            seen["withheld"].update(withheld)
            seen["remeasures"].append(scenario.one(
                samples, "rail_multirail_capacity_remeasures_total", peer=scenario.PEER))

        agent = self.lab.start_agent("a", ["--config.file=" + self.config_a])
        watcher = scenario.Watcher(agent, on_scrape)
        capacity = (scenario.CAPACITY, scenario.MULTI_RAIL)
        striped = (scenario.STRIPED, scenario.MULTI_RAIL)
        try:
            first, samples = watcher.wait(lambda s: scenario.last_run(s, *capacity),
                                          FIRST_RUN_TIMEOUT_S, POLL_S)
            self.assertIsNotNone(first, "no multirail_capacity run within %.0f s" %
                                 FIRST_RUN_TIMEOUT_S)
            for rail in lab.RAIL_NAMES:
                self.lab.throttle(lab.rail_index(rail), RELEASED_RATE)
            self.assertIsNone(scenario.last_run(watcher.samples(), *striped),
                              "the striped run ended before the rails were reshaped")
            low = scenario.one(samples, "rail_probe_throughput_bytes_per_second",
                               kind=scenario.CAPACITY, peer=scenario.PEER)
            print("first multirail_capacity at %s: %s Gbit/s" % (CAPACITY_RATE,
                                                                   scenario.gbits(low)))
            self.assertLessEqual(low, 2 * 1.2 * CAPACITY_BYTES_PER_SECOND)

            striped_at, samples = watcher.wait(lambda s: scenario.last_run(s, *striped), 30)
            self.assertIsNotNone(striped_at, "no ucx_multirail_throughput run")
            print("ucx_multirail_throughput at %s: %s Gbit/s, %.1f s after the capacity run" % (
                RELEASED_RATE, scenario.gbits(scenario.one(
                    samples, "rail_probe_throughput_bytes_per_second", kind=scenario.STRIPED,
                    peer=scenario.PEER)), striped_at - first))

            def remeasured_and_published(samples):
                again = scenario.last_run(samples, *capacity)
                value, _ = scenario.efficiency(samples)
                return (again, value) if again > first and value is not None else None
            done, samples = watcher.wait(remeasured_and_published, REMEASURE_TIMEOUT_S)
            record = scenario.round_record(samples, 1, watcher.elapsed())
            print("then: %s" % scenario.describe(dict(record, wait_s=0, round_span_s=0)))
            print("withheld reasons seen: %s; remeasures: %s" % (sorted(seen["withheld"]),
                                                                seen["remeasures"]))
        except BaseException:
            print("agent a's log:\n" + agent.stderr_text()[-4000:])
            raise
        finally:
            agent.stop()

        self.assertTrue(seen["withheld"] & {"above_capacity", "awaiting_capacity"},
                        "the efficiency was never withheld for the low capacity: %s" %
                        sorted(seen["withheld"]))
        counts = [count or 0 for count in seen["remeasures"]]
        self.assertEqual(counts[0], 0, "a re-measure before the first striped run")
        self.assertGreaterEqual(counts[-1], 1, "rail_multirail_capacity_remeasures_total "
                                "never rose: %s" % seen["remeasures"])
        self.assertIsNotNone(done, "no second multirail_capacity run and published efficiency "
                             "within %.0f s of the striped run (interval %d s)" % (
                                 REMEASURE_TIMEOUT_S, INTERVAL_S))
        again, value = done
        self.assertLess(again - striped_at, REMEASURE_WITHIN_S,
                        "the capacity was measured again %.1f s after the striped run" % (
                            again - striped_at))
        self.assertTrue(0 <= value <= 1 + EFFICIENCY_TOLERANCE, value)
        self.assertGreater(record["throughput"][scenario.CAPACITY], 4 * low,
                           "the second capacity run did not see the rails reshaped")
        runs = scenario.values(samples, "rail_probe_runs_total", kind=scenario.CAPACITY,
                               peer=scenario.PEER)
        self.assertEqual(sum(runs), 2, "capacity runs: %s" % runs)


if __name__ == "__main__":
    harness.main()
