#!/usr/bin/python3
"""DCB netlink for real, as the agent's unprivileged user (issue 23).

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

The lab's rails are veths, and veth has no DCB operations: the kernel answers RTM_GETDCB with
EOPNOTSUPP. So this is the "no DCB" path only, but the real one: libmnl's socket, the request,
the kernel's answer and its parsing, inside the namespace that holds the rails, run with no
capability (harness.as_user(PACKAGE_USER), as the package's unit runs it). Checked: each rail
reads rail_qos_dcb_info{state="not_supported"} and nothing else of the qos families (PFC unknown,
never "off"); qos_config gives no verdict (neither a pass nor a failure); `rail_exporter doctor`
in the namespace says why for each rail and names `dcb pfc show`; with --no-collector.qos no
qos series appears. The parsing of answers with a DCB configuration is tested on recorded
answers (tests/unit/nic).
"""

import os
import unittest

import harness
import lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlqos")
QOS_FAMILIES = ("rail_qos_pfc_enabled", "rail_qos_trust_info", "rail_qos_dscp_priority",
                "rail_qos_pfc_requests_total", "rail_qos_roce_ecn_enabled")


class LabQosTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    TMP_PREFIX = "rail-lab-qos-"
    AGENT_USER = harness.PACKAGE_USER

    @classmethod
    def set_up_lab(cls):
        harness.require_executable(cls, harness.BINARY)
        cls.config = cls.lab.write("a.yml", lab.rails_yaml("a", transport="tcp"))
        cls.agent = cls.lab.start_agent("a", ["--config.file=" + cls.config])

    def test_veth_rails_have_no_dcb_rather_than_pfc_off(self):
        samples = self.agent.samples()
        for rail, (netdev, _) in lab.RAILS.items():
            self.assertEqual(lab.find(samples, "rail_qos_dcb_info", rail=rail, netdev=netdev,
                                      state="not_supported"), [1.0], rail)
        for family in QOS_FAMILIES:
            self.assertEqual([s for s in samples if s[0] == family], [], family)
        self.assertEqual(lab.find(samples, "rail_check_ok", check="qos_config"), [])
        self.assertEqual(lab.find(samples, "rail_exporter_scrape_collector_success",
                                  collector="qos"), [1.0])

    def test_doctor_says_why_each_rail_is_not_judged(self):
        result = lab.in_ns(self.lab.ns_a, harness.as_user(harness.PACKAGE_USER) + [
            harness.BINARY, "doctor", "--config.file=" + self.config], check=False)
        for rail, (netdev, _) in lab.RAILS.items():
            self.assertIn("INFO qos_config rail=%s: not judged: no DCB on %s: the netdev has no "
                          "DCB operations (the kernel answers EOPNOTSUPP)" % (rail, netdev),
                          result.stdout)
            self.assertIn("dcb pfc show dev %s" % netdev, result.stdout)
        self.assertNotIn("FAIL qos_config", result.stdout)
        self.assertNotIn("PASS qos_config", result.stdout)

    def test_collector_off_reads_nothing(self):
        agent = self.lab.start_agent("a", ["--config.file=" + self.config, "--no-collector.qos"])
        try:
            names = {name for name, _, _ in agent.samples()}
        finally:
            agent.stop()
        self.assertFalse({n for n in names if n.startswith("rail_qos_")}, names)


if __name__ == "__main__":
    harness.main()
