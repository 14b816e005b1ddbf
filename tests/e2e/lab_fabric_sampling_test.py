#!/usr/bin/python3
"""A link that flaps after the agent starts and before its first scrape shows on that scrape.

The agent reads its rails' fabric counters (carrier_down_count, `ethtool -S`, hw_counters) at
start, a baseline, and again whenever nobody read them for health.fabric_sample_interval (default
25s); every scrape records its own reading too. So the windowed checks' evidence no longer begins
at the first scrape. Here an agent in host a starts
with the default interval, is waited for on /-/ready (never /metrics), and rail 0's link is taken
down and up three times from host b's end (rb0); the test reads ra0's carrier_down_count from
sysfs itself before and after and requires a rise of exactly 3. Then, within 20 s of the last
flap, the first scrapes (every 2 s) must show link_flaps failing on rail 0 with a reason naming
carrier_down_count and "3 time(s)", and ok on rail 1; two more scrapes from two other clients
1 s apart (as two Prometheus replicas) must see the same verdicts and reasons (but for the time
a reason spans: each replica's scrape may have recorded its own reading).

The same with the sampling off (health.fabric_sample_interval: 0s, the old behaviour: the
counters are read by the scrapes alone): the first scrape reads the same carrier_down_count but has
nothing to compare it with, so it gives no link_flaps verdict for rail 0 at all. The baseline
taken at start is what makes the difference.

Needs root (network namespaces, scripts/lab); skips with a message otherwise.
"""

import os
import re
import time

import figure_invariants
import harness
import lab
from lab import find

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlfsmp")
FLAPS = 3
FIRST_SCRAPE_WITHIN = 20.0  # seconds after the last flap (the first scrape reads it at once)
SCRAPE_INTERVAL = 2.0  # seconds between the first scrapes
CARRIER_TIMEOUT = 10.0  # seconds for a veth's carrier to follow its peer
REPLICA_GAP = 1.0  # seconds between the two replicas' scrapes

# A second client in host a's namespace, other than curl: Python's urllib on a new connection,
# with a user agent of its own (the Prometheus replica "b").
REPLICA_B = ("import sys, urllib.request\n"
             "request = urllib.request.Request(sys.argv[1], headers={'User-Agent': "
             "'Prometheus/replica-b', 'Accept-Encoding': 'identity'})\n"
             "with urllib.request.urlopen(request, timeout=10) as response:\n"
             "    sys.stdout.write(response.read().decode())\n")


def value(samples, name, **labels):
    """The value of the one sample of name with these labels, or None (fails when several)."""
    found = find(samples, name, **labels)
    assert len(found) <= 1, "%d samples of %s %s" % (len(found), name, labels)
    return found[0] if found else None


def reasons(samples, check, rail):
    """The reason labels of rail_check_info for check on rail."""
    return [labels["reason"] for name, labels, _ in samples
            if name == "rail_check_info" and labels.get("check") == check and
            labels.get("rail") == rail]


def without_span(texts):
    """Reasons with the time they span ("in the last 14s") left out."""
    return [re.sub(r"\bin the last \d+[sm]\b", "in the last ...", text) for text in texts]


def parse(text):
    return [(name, dict(labels), sample_value)
            for name, series in harness.parse_samples(text).items()
            for labels, sample_value in series.items()]


class LabFabricSamplingTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-lab-fabric-"

    # -- the lab --------------------------------------------------------------------------

    def sysfs(self, host, netdev, name):
        """/sys/class/net/<netdev>/<name> of a host, stripped."""
        return self.lab.exec(host, ["cat", "/sys/class/net/%s/%s" % (netdev, name)]).stdout.strip()

    def carrier_downs(self, netdev):
        """Host a's carrier_down_count of netdev: the test's own reading, not the agent's."""
        return int(self.sysfs("a", netdev, "carrier_down_count"))

    def wait_carrier(self, netdev, state):
        """Waits until host a's netdev reports carrier `state` ("0" or "1")."""
        def reached():
            try:
                return self.sysfs("a", netdev, "carrier") == state
            except Exception:  # carrier reads EINVAL while the device is down
                return False
        self.assertTrue(lab.wait_until(reached, CARRIER_TIMEOUT, interval=0.05),
                        "%s carrier did not become %s:\n%s" % (netdev, state, self.lab.status()))

    def flap_rail0(self):
        """Takes rail 0's far end (rb0, host b) down and up FLAPS times, each time until ra0's
        carrier follows; returns the monotonic time of the last flap."""
        near, far = lab.RAILS["rail0"]
        for _ in range(FLAPS):
            self.lab.exec("b", ["ip", "link", "set", far, "down"])
            self.wait_carrier(near, "0")
            self.lab.exec("b", ["ip", "link", "set", far, "up"])
            self.wait_carrier(near, "1")
        return time.monotonic()

    # -- the agent ------------------------------------------------------------------------

    def start_agent(self, name, health=None):
        """An agent in host a on both rails (with a health: mapping's inside), ready on /-/ready
        and never scraped; stopped at the end of the test."""
        text = lab.rails_yaml("a")
        if health:
            text += "health: {%s}\n" % health
        config = self.lab.write(name, text)
        agent = self.lab.start_agent("a", ["--config.file=" + config])
        self.addCleanup(agent.stop)
        url = "http://%s/-/ready" % agent.target

        def ready():
            result = self.lab.exec("a", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                         "--max-time", "2", url], check=False)
            return result.stdout == "200"
        self.assertTrue(lab.wait_until(ready, harness.STARTUP_TIMEOUT, interval=0.1),
                        "%s did not answer /-/ready:\n%s" % (url, agent.stderr_text()))
        return agent

    def replica_b_samples(self, agent):
        """A scrape by the second client (urllib, not curl), from host a's namespace."""
        result = self.lab.exec("a", ["/usr/bin/python3", "-c", REPLICA_B,
                                     "http://%s/metrics" % agent.target], check=False)
        self.assertEqual(result.returncode, 0, "replica b's scrape failed:\n" + result.stderr)
        return parse(figure_invariants.assert_invariants(
            result.stdout, "replica b's scrape of %s" % agent.target))

    # -- the tests ------------------------------------------------------------------------

    def test_1_a_flap_before_the_first_scrape_shows_on_it(self):
        ra0, ra1 = lab.RAILS["rail0"][0], lab.RAILS["rail1"][0]
        agent = self.start_agent("sampled.yaml")  # the default fabric_sample_interval
        downs_before = self.carrier_downs(ra0)
        rail1_downs_before = self.carrier_downs(ra1)
        last_flap = self.flap_rail0()
        self.assertEqual(self.carrier_downs(ra0) - downs_before, FLAPS,
                         "sysfs: ra0's carrier_down_count did not rise by exactly %d" % FLAPS)
        self.assertEqual(self.carrier_downs(ra1), rail1_downs_before, "rail 1 flapped too")

        def verdicts(samples):
            return (value(samples, "rail_check_ok", check="link_flaps", rail="rail0") == 0 and
                    value(samples, "rail_check_ok", check="link_flaps", rail="rail1") is not None)
        remaining = max(0.0, FIRST_SCRAPE_WITHIN - (time.monotonic() - last_flap))
        ok, samples = agent.wait_for(verdicts, remaining, interval=SCRAPE_INTERVAL)
        seen_after = time.monotonic() - last_flap
        self.assertTrue(ok, "no failing link_flaps on rail0 with a verdict on rail1 within %.0f s "
                        "of the last flap (last scrape %.1f s after it): rail0 %s, rail1 %s, "
                        "reasons %s" % (
                            FIRST_SCRAPE_WITHIN, seen_after,
                            find(samples, "rail_check_ok", check="link_flaps", rail="rail0"),
                            find(samples, "rail_check_ok", check="link_flaps", rail="rail1"),
                            reasons(samples, "link_flaps", "rail0")))
        print("link_flaps failed on rail0 %.1f s after the last flap: %s" % (
            seen_after, reasons(samples, "link_flaps", "rail0")))
        self.assert_flapped_verdicts(samples, "the first scrapes")

        # Two Prometheus replicas, 1 s apart, each on its own client: the same verdicts.
        replica_a = agent.samples()  # curl
        time.sleep(REPLICA_GAP)  # the replicas' offset, not a wait for a condition
        replica_b = self.replica_b_samples(agent)
        self.assert_flapped_verdicts(replica_a, "replica a")
        self.assert_flapped_verdicts(replica_b, "replica b")
        # The same reason but for how long it spans: a replica whose scrape came half
        # health.fabric_sample_interval after the latest reading recorded its own.
        self.assertEqual(without_span(reasons(replica_a, "link_flaps", "rail0")),
                         without_span(reasons(replica_b, "link_flaps", "rail0")),
                         "the two replicas were given different reasons")

    def assert_flapped_verdicts(self, samples, who):
        """link_flaps red on rail0 for FLAPS downs of ra0's carrier_down_count, green on
        rail1, in one scrape."""
        self.assertEqual(value(samples, "rail_check_ok", check="link_flaps", rail="rail0"), 0,
                         who)
        self.assertEqual(value(samples, "rail_check_ok", check="link_flaps", rail="rail1"), 1,
                         who)
        rail0 = reasons(samples, "link_flaps", "rail0")
        self.assertEqual(len(rail0), 1, "%s: rail_check_info of link_flaps on rail0: %s" % (
            who, rail0))
        self.assertIn("carrier_down_count", rail0[0], who)
        self.assertRegex(rail0[0], r"\bwent down %d time\(s\)" % FLAPS, who)
        self.assertIn(lab.RAILS["rail0"][0], rail0[0], "%s: the reason names no netdev" % who)
        self.assertEqual(reasons(samples, "link_flaps", "rail1"), [], who)

    def test_2_with_sampling_off_the_first_scrape_has_no_verdict(self):
        ra0 = lab.RAILS["rail0"][0]
        agent = self.start_agent("unsampled.yaml", health="fabric_sample_interval: 0s")
        downs_before = self.carrier_downs(ra0)
        self.flap_rail0()
        downs_after = self.carrier_downs(ra0)
        self.assertEqual(downs_after - downs_before, FLAPS,
                         "sysfs: ra0's carrier_down_count did not rise by exactly %d" % FLAPS)

        samples = agent.samples()  # the first scrape of this agent
        # The agent read the flapped counter (the same figure as sysfs), so the scrape is whole ...
        self.assertEqual(value(samples, "rail_netdev_carrier_down_changes_total", netdev=ra0),
                         downs_after)
        self.assertTrue(find(samples, "rail_check_ok", rail="rail0"), "no verdict at all on rail0")
        # ... but without a baseline it has no rise to judge: no link_flaps verdict, no reason.
        self.assertEqual(find(samples, "rail_check_ok", check="link_flaps", rail="rail0"), [],
                         "sampling off: the first scrape judged link_flaps on rail0")
        self.assertEqual(reasons(samples, "link_flaps", "rail0"), [])


if __name__ == "__main__":
    harness.main()
