#!/usr/bin/python3
"""The ethtool collector and the link_flaps check on the lab's veths (issue 23), with the agent
running as the package's user without any capability, as the hardened unit runs it.

What it shows: `ethtool -S` of each rail's veth is read through the SIOCETHTOOL ioctl
(ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS answer an unprivileged process; veth has no
allow-list, so only the count of its statistics is exported) and nothing is counted as a read
error; setting rail 0's veth down and up in host a raises its carrier counters by exactly that
and fails link_flaps for rail 0 only, naming carrier_down_count (veth counts no physical link-down
events), while rail 1 stays ok. Needs root for the namespaces; skips with a message otherwise.
"""
import os

import harness
import lab
from lab import find

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rleth")
SCRAPE_TIMEOUT = 30.0  # seconds for a scrape to show what the test waits for


def value(samples, name, **labels):
    """The value of the one sample of name with these labels, or None."""
    found = find(samples, name, **labels)
    return found[0] if found else None


def label_values(samples, name, label, **labels):
    """The `label` of each sample of name with these labels."""
    return [sample_labels[label] for sample_name, sample_labels, _ in samples
            if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items())]


class LabEthtoolTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    AGENT_USER = harness.PACKAGE_USER  # not root, no capability

    @classmethod
    def set_up_lab(cls):
        config = cls.lab.write("a.yaml", lab.rails_yaml("a", "tcp"))
        cls.agent = cls.lab.start_agent("a", ["--config.file=" + config])

    def test_1_statistics_through_the_ioctl_as_an_unprivileged_user(self):
        samples = self.agent.samples()
        for rail in lab.RAIL_NAMES:
            count = value(samples, "rail_nic_ethtool_statistics", rail=rail,
                          netdev=lab.netdev("a", rail), driver="veth", mapped="0")
            self.assertIsNotNone(count, "no ethtool statistics for %s" % rail)
            self.assertGreater(count, 0)
        self.assertFalse(find(samples, "rail_nic_pfc_pause_frames_total"),
                         "veth has no allow-list: no fabric family")
        errors = sum(find(samples, "rail_exporter_read_errors_total"))
        self.assertEqual(errors, 0)
        self.assertEqual(value(samples, "rail_exporter_scrape_collector_success",
                               collector="ethtool"), 1)

    def test_2_a_rail_set_down_and_up_is_a_flap(self):
        netdev = lab.netdev("a", "rail0")
        before, samples = self.agent.wait_for(
            lambda s: value(s, "rail_check_ok", check="link_flaps", rail="rail0") is not None,
            SCRAPE_TIMEOUT)
        self.assertTrue(before, "link_flaps gave no verdict after two scrapes")
        self.assertEqual(value(samples, "rail_check_ok", check="link_flaps", rail="rail0"), 1)
        changes = value(samples, "rail_netdev_carrier_changes_total", netdev=netdev)
        downs = value(samples, "rail_netdev_carrier_down_changes_total", netdev=netdev)
        ups = value(samples, "rail_netdev_carrier_up_changes_total", netdev=netdev)

        self.lab.exec("a", ["ip", "link", "set", netdev, "down"])
        self.lab.exec("a", ["ip", "link", "set", netdev, "up"])

        def flapped(s):
            return value(s, "rail_check_ok", check="link_flaps", rail="rail0") == 0
        ok, samples = self.agent.wait_for(flapped, SCRAPE_TIMEOUT)
        self.assertTrue(ok, "link_flaps did not fail after a down/up")
        self.assertEqual(value(samples, "rail_netdev_carrier_down_changes_total", netdev=netdev),
                         downs + 1)
        self.assertEqual(value(samples, "rail_netdev_carrier_up_changes_total", netdev=netdev),
                         ups + 1)
        self.assertEqual(value(samples, "rail_netdev_carrier_changes_total", netdev=netdev),
                         changes + 2)
        reasons = label_values(samples, "rail_check_info", "reason", check="link_flaps",
                               rail="rail0")
        self.assertTrue(reasons and "carrier_down_count" in reasons[0], reasons)
        self.assertEqual(value(samples, "rail_check_ok", check="link_flaps", rail="rail1"), 1)


if __name__ == "__main__":
    harness.main()
