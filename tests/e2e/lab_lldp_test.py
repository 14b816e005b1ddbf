#!/usr/bin/python3
"""Each rail's switch port over LLDP, for real (issue 31, parts 1 and 4).

Needs root (network namespaces, scripts/lab) and lldpd (Debian's `lldpd`: lldpd and lldpcli);
skips with a message otherwise.

A switched lab of three hosts, then `scripts/lab lldp-up`: in the switch namespace one lldpd per
rail, leaf-rail0 and leaf-rail1, each announcing the ports of its rail's bridge every second
(port id the switch port's name, description Ethernet1/<host number>), and one lldpd in each host
on its rails, each on a control socket of its own. The agent of host a asks host a's lldpd
(--collector.neighbor.lldpd-socket) through liblldpctl. Checked against an independent reading,
`lldpcli -u <socket> -f json show neighbors` in host a, and against the lab's wiring: every rail's
rail_link_neighbor_info names the leaf of that rail, the switch port of host a on it, and the
chassis id and port description lldpcli shows; its age agrees with lldpcli's within the time
between the two readings; rail_link_neighbor_source_info says state="ok" with no remedy. An agent
pointed at a socket nobody listens on reads state="no_lldpd" with `apt install lldpd ...` and
no neighbour series at all. The landing page shows each rail's leaf and port. `rail_exporter doctor` in host a names each
rail's leaf and port; run
as the package's user without the group _lldpd (lldpd's socket is mode 0770 root:_lldpd) it says
`lldpd_error` with `adduser <the agent's user> _lldpd`, and with that group it reads the ports.
Then the cabling verdicts: an agent whose configuration says rail0 belongs on leaf-rail0 and rail1
on leaf-rail1 passes rail_cabling on both rails; `scripts/lab recable a 1 0` moves host a's rail 1
port to rail 0's bridge (leaf-rail0 announces it from then on) and rail_cabling fails for rail1
alone, first for the change (naming leaf-rail1, the port it had, for the test's 6 s change
window), then for its reason naming leaf-rail0 and the port once the old leaf's announcement
expired; `recable a 1 1` is a change again, then clears it. After the lab is
down, none of the lab's lldpds runs.
"""

import json
import os
import re
import time
import unittest

import harness
import lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rllldp")
# health.cabling.change_window in the cabling test: a changed neighbour fails this long after.
CHANGE_WINDOW = 6
CABLING_WAIT = 20.0  # seconds: the old leaf's announcement lives its TTL (4 s) after a recabling
NEIGHBOR_WAIT = 20.0  # seconds: lldpd sends every second once configured (tx-interval 1)
AGE_PATTERN = re.compile(r"^(\d+) days?, (\d\d):(\d\d):(\d\d)$")  # lldpcli's "0 day, 00:00:03"


def lldpcli_neighbors(text):
    """{interface: (system name, chassis id, port id, port description, age seconds)} of
    `lldpcli -f json show neighbors`. lldpcli's JSON gives one interface as an object and several
    as a list of one-key objects."""
    interfaces = json.loads(text).get("lldp", {}).get("interface", [])
    if isinstance(interfaces, dict):
        interfaces = [{name: value} for name, value in interfaces.items()]
    out = {}
    for entry in interfaces:
        for name, neighbor in entry.items():
            (system_name, chassis), = neighbor["chassis"].items()
            days, hours, minutes, seconds = map(int, AGE_PATTERN.match(neighbor["age"]).groups())
            out[name] = (system_name, chassis["id"]["value"], neighbor["port"]["id"]["value"],
                         neighbor["port"].get("descr", ""),
                         ((days * 24 + hours) * 60 + minutes) * 60 + seconds)
    return out


class LabLldpTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX
    LAB_HOSTS = 3
    TMP_PREFIX = "rail-lab-lldp-"
    TOOLS = ("ip", "curl", "lldpd", "lldpcli")

    @classmethod
    def set_up_lab(cls):
        harness.require_executable(cls, harness.BINARY)
        started = time.monotonic()
        cls.lab.script("lldp-up")
        cls.socket = cls.lab.script("lldp-socket", "a").stdout.strip()
        cls.config = cls.lab.write("a.yml", lab.rails_yaml("a", transport="tcp"))
        os.chmod(cls.lab.tmp, 0o755)  # doctor reads the configuration as the package's user too
        lab.ensure_system_user(harness.PACKAGE_USER)
        cls.agent = cls.lab.start_agent("a", ["--config.file=" + cls.config,
                                              "--collector.neighbor.lldpd-socket=" + cls.socket])
        heard, _ = cls.agent.wait_for(
            lambda samples: all(lab.find(samples, "rail_link_neighbor_source_info", rail=rail,
                                         state="ok") for rail in lab.RAIL_NAMES),
            NEIGHBOR_WAIT, interval=0.5)
        cls.seconds_to_neighbors = time.monotonic() - started
        print("lab_lldp: both rails' neighbours in the agent %.1f s after lldp-up"
              % cls.seconds_to_neighbors)
        if not heard:
            raise AssertionError("the agent of host a saw no neighbour on both rails within "
                                 "%.0f s" % NEIGHBOR_WAIT)

    @classmethod
    def tearDownClass(cls):
        pids = []
        run = os.path.join(os.environ.get("LAB_RUN", "/run/rail-lab"), PREFIX)
        if os.path.isdir(run):
            for name in os.listdir(run):
                if name.endswith(".pid"):
                    with open(os.path.join(run, name)) as handle:
                        pids.append(int(handle.read()))
        super().tearDownClass()
        alive = [pid for pid in pids if lab.running(pid)]
        if alive:
            raise AssertionError("lldpds of the lab still run after down: %s" % alive)

    def read_both(self):
        """(the agent's samples, lldpcli's neighbours of host a), read one after the other."""
        samples = self.agent.samples()
        shown = self.lab.exec("a", ["lldpcli", "-u", self.socket, "-f", "json", "show",
                                    "neighbors"])
        return samples, lldpcli_neighbors(shown.stdout)

    def test_neighbor_info_matches_lldpcli_and_the_wiring(self):
        samples, shown = self.read_both()
        self.assertEqual(set(shown), {lab.netdev("a", rail) for rail in lab.RAIL_NAMES}, shown)
        for rail in lab.RAIL_NAMES:
            netdev = lab.netdev("a", rail)
            system_name, chassis_id, port_id, description, _ = shown[netdev]
            index = lab.rail_index(rail)
            # The lab's wiring, which neither lldpd nor the agent decides.
            self.assertEqual((system_name, port_id, description),
                             ("leaf-rail%d" % index, "sa%d" % index, "Ethernet1/1"))
            series = [labels for name, labels, value in samples
                      if name == "rail_link_neighbor_info" and labels["rail"] == rail]
            self.assertEqual(series, [{"rail": rail, "netdev": netdev, "chassis_id": chassis_id,
                                       "port_id": port_id, "system_name": system_name,
                                       "port_description": description, "vlan": ""}], rail)
            self.assertEqual(lab.find(samples, "rail_link_neighbor_source_info", rail=rail,
                                      state="ok", remedy=""), [1.0], rail)

    def test_landing_page_shows_each_rails_switch_port(self):
        page = lab.in_ns(self.lab.ns_a, ["curl", "-sf", "--max-time", "10",
                                         "http://%s/" % self.agent.target]).stdout
        self.assertIn("<th>switch port</th>", page)
        for rail in lab.RAIL_NAMES:
            index = lab.rail_index(rail)
            self.assertRegex(page, r'<tr class="rail" data-rail="%s">.*<td>leaf-rail%d port sa%d'
                             r'</td>' % (rail, index, index))

    def test_age_agrees_with_lldpcli(self):
        before = time.monotonic()
        samples, shown = self.read_both()
        between = time.monotonic() - before
        for rail in lab.RAIL_NAMES:
            _, chassis_id, port_id, _, shown_age = shown[lab.netdev("a", rail)]
            (age,) = lab.find(samples, "rail_link_neighbor_age_seconds", rail=rail,
                              chassis_id=chassis_id, port_id=port_id)
            # lldpcli shows whole seconds; the agent read first.
            self.assertGreaterEqual(age, 0, rail)
            self.assertLessEqual(abs(age - shown_age), between + 1.0, (rail, age, shown_age))

    def test_no_lldpd_on_the_socket_says_how_to_start_it_and_nothing_else(self):
        absent = os.path.join(self.lab.tmp, "no-lldpd.socket")
        agent = self.lab.start_agent("a", ["--config.file=" + self.config,
                                           "--collector.neighbor.lldpd-socket=" + absent])
        try:
            samples = agent.samples()
        finally:
            agent.stop()
        for rail in lab.RAIL_NAMES:
            self.assertEqual(lab.find(samples, "rail_link_neighbor_source_info", rail=rail,
                                      state="no_lldpd",
                                      remedy="apt install lldpd && systemctl enable --now lldpd"),
                             [1.0], rail)
        for family in ("rail_link_neighbor_info", "rail_link_neighbor_age_seconds"):
            self.assertEqual([s for s in samples if s[0] == family], [], family)

    def doctor(self, groups):
        """doctor's text in host a as the package's user with these supplementary groups
        (None: as root)."""
        user = [] if groups is None else [
            "setpriv", "--reuid=" + harness.PACKAGE_USER, "--regid=" + harness.PACKAGE_USER,
            "--groups=" + groups if groups else "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs"]
        return self.lab.exec("a", user + [
            harness.BINARY, "doctor", "--config.file=" + self.config,
            "--collector.neighbor.lldpd-socket=" + self.socket], check=False).stdout

    def test_doctor_names_each_rails_switch_port(self):
        for groups in (None, "_lldpd"):
            text = self.doctor(groups)
            for rail in lab.RAIL_NAMES:
                index = lab.rail_index(rail)
                self.assertIn("INFO neighbor rail=%s: leaf-rail%d port sa%d (Ethernet1/1)\n"
                              % (rail, index, index), text, groups)

    def test_doctor_outside_group_lldpd_says_how_to_get_in(self):
        text = self.doctor("")
        for rail in lab.RAIL_NAMES:
            self.assertIn("INFO neighbor rail=%s: lldpd_error: cannot connect to lldpd's socket %s: "
                          "Permission denied" % (rail, self.socket), text)
        self.assertIn("     fix: adduser <the agent's user> _lldpd\n", text)
        self.assertNotIn("leaf-rail", text)

    def test_rail_cabling_fails_the_recabled_rail_alone_until_it_is_put_back(self):
        config = self.lab.write("a-cabling.yml", lab.rails_yaml("a", transport="tcp") +
                                "health:\n  cabling:\n    switches: {rail0: leaf-rail0, "
                                "rail1: leaf-rail1}\n    change_window: %ds\n" % CHANGE_WINDOW)
        agent = self.lab.start_agent("a", ["--config.file=" + config,
                                           "--collector.neighbor.lldpd-socket=" + self.socket])

        def verdicts(samples):
            return {rail: lab.find(samples, "rail_check_ok", check="rail_cabling", rail=rail)
                    for rail in lab.RAIL_NAMES}

        def reasons(samples):
            return [labels["reason"] for name, labels, _ in samples
                    if name == "rail_check_info" and labels.get("check") == "rail_cabling"]

        def changed_from(port):
            return lambda s: any("its neighbour changed" in reason and "from " + port in reason
                                 for reason in reasons(s))
        try:
            good = {"rail0": [1.0], "rail1": [1.0]}
            ok, samples = agent.wait_for(lambda s: verdicts(s) == good, CABLING_WAIT, 0.5)
            self.assertTrue(ok, verdicts(samples))
            started = time.monotonic()
            self.lab.script("recable", "a", 1, 0)
            failed, samples = agent.wait_for(
                lambda s: verdicts(s) == {"rail0": [1.0], "rail1": [0.0]}, CABLING_WAIT, 0.2)
            print("lab_lldp: rail_cabling failed for rail1 %.1f s after the recabling"
                  % (time.monotonic() - started))
            self.assertTrue(failed, verdicts(samples))
            # The change itself, naming the port rail1 had, for the change window.
            seen, samples = agent.wait_for(changed_from("leaf-rail1 port sa1"), CABLING_WAIT, 0.2)
            self.assertTrue(seen, reasons(samples))
            # Until the old leaf's announcement expires, rail1 hears both leaves; then only the
            # wrong one, and after the change window no change.
            expected = ["rail1 lands on leaf-rail0 port sa1: its neighbour leaf-rail0 port sa1 "
                        "does not match health.cabling.switches 'leaf-rail1'"]
            settled, samples = agent.wait_for(lambda s: reasons(s) == expected, CABLING_WAIT, 0.5)
            self.assertTrue(settled, reasons(samples))
            self.assertEqual(verdicts(samples), {"rail0": [1.0], "rail1": [0.0]})
        finally:
            self.lab.script("recable", "a", 1, 1)
        # Put back is a change too: reported, naming leaf-rail0, then cleared after the window.
        seen, samples = agent.wait_for(changed_from("leaf-rail0 port sa1"), CABLING_WAIT, 0.2)
        self.assertTrue(seen, reasons(samples))
        cleared, samples = agent.wait_for(lambda s: verdicts(s) == good, CABLING_WAIT, 0.5)
        self.assertTrue(cleared, verdicts(samples))
        self.assertEqual(reasons(samples), [])
        agent.stop()


if __name__ == "__main__":
    harness.main()
