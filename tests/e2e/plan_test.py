#!/usr/bin/python3
"""`rail_exporter plan` for every host of a 300-host fleet, checked by plan_check.py.

A file_sd peers file of 300 hosts over 3 rails (most on every rail, some with a rails label of
their own: one rail, two rails, a rail only a few hosts share); the binary prints every host's
plan; plan_check.py, which reads only the peers file and the printed plans, checks that they fit
together (out- and in-degrees, peers on the rail, no self-probe, one ring per rail). Also: the
same plan twice, from a YAML copy of the peers file, and after a new epoch; a plan the checker
must refuse; the one-line errors of the command.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan_check.py")
RAILS = ["rail0", "rail1", "rail2"]
HOSTS = 300
PEERS_PER_RAIL = 3
EPOCH = 41
SEED = 13
KINDS = "ucx_rtt,ucx_throughput,multirail_capacity"


def fleet():
    """[(address, rails label or None)]: one host in 10 on rail1 only, one in 25 on rail0 and
    rail2 only, the others on every rail (no label)."""
    hosts = []
    for i in range(HOSTS):
        address = "10.%d.%d.%d:9841" % (i // 62500, i // 250 % 250, i % 250 + 1)
        label = None
        if i % 10 == 3:
            label = "rail1"
        elif i % 25 == 7:
            label = "rail0,rail2"
        hosts.append((address, label))
    return hosts


def file_sd(hosts):
    """Groups as file_sd has them: the unlabelled hosts in one, each labelled one in its own."""
    groups = [{"targets": [a for a, label in hosts if label is None], "labels": {"zone": "a"}}]
    for address, label in hosts:
        if label is not None:
            groups.append({"targets": [address], "labels": {"rails": label}})
    return groups


def host_rails(label):
    """The rails a host plans over: those its label lists, else the fleet's."""
    return label.split(",") if label else RAILS


class PlanTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        self.tmp = tempfile.mkdtemp(prefix="rail-plan-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.hosts = fleet()
        self.peers = self.write("peers.json", json.dumps(file_sd(self.hosts), indent=1))

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def plan(self, address, label, peers=None, epoch=EPOCH, output="json"):
        args = ["plan", "--peers-file", peers or self.peers, "--self", address,
                "--rails", ",".join(host_rails(label)), "--epoch", str(epoch), "--seed",
                str(SEED), "--peers-per-rail", str(PEERS_PER_RAIL), "--kinds", KINDS,
                "--output", output]
        result = harness.run_to_exit(args, timeout=30)
        self.assertEqual(result.returncode, 0, "%s: %s" % (address, result.stderr))
        return result.stdout

    def plan_all(self, directory):
        os.makedirs(directory)
        for address, label in self.hosts:
            with open(os.path.join(directory, address + ".json"), "w") as f:
                f.write(self.plan(address, label))
        return directory

    def check(self, *plans, peers=None, rails=RAILS):
        return subprocess.run(
            [sys.executable, CHECKER, "--peers-file", peers or self.peers, "--rails",
             ",".join(rails), "--peers-per-rail", str(PEERS_PER_RAIL)] + list(plans),
            capture_output=True, text=True, timeout=120)

    def test_every_hosts_plan_fits_everyone_elses(self):
        plans = self.plan_all(os.path.join(self.tmp, "plans"))
        result = self.check(plans)
        print(result.stdout, end="")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("300 plans", result.stdout)
        self.assertIn("consistent", result.stdout)
        # A host on one rail plans over it alone.
        with open(os.path.join(plans, self.hosts[3][0] + ".json")) as f:
            one_rail = json.load(f)
        self.assertEqual({p["rail"] for p in one_rail["probes"]}, {"rail1"})

    def test_rail_of_k_plus_one_hosts_probes_all_of_them(self):
        # Every host labelled: a host without a label would be on rail9 too.
        self.hosts = [("10.1.0.%d:9841" % i, "rail0,rail9" if i <= 4 else "rail0")
                      for i in range(1, 9)]
        self.peers = self.write("small.json", json.dumps(
            [{"targets": [a], "labels": {"rails": label}} for a, label in self.hosts]))
        plans = self.plan_all(os.path.join(self.tmp, "small-plans"))
        result = self.check(plans, rails=["rail0", "rail9"])
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(os.path.join(plans, self.hosts[0][0] + ".json")) as f:
            probes = json.load(f)["probes"]
        self.assertEqual({p["peer"] for p in probes if p["rail"] == "rail9"},
                         {a for a, _ in self.hosts[1:4]})

    def test_checker_refuses_a_plan_that_does_not_fit(self):
        plans = self.plan_all(os.path.join(self.tmp, "plans"))
        victim = os.path.join(plans, self.hosts[20][0] + ".json")
        with open(victim) as f:
            plan = json.load(f)
        # One probe redirected to a host on the rail that the ring does not put there.
        planned = {p["peer"] for p in plan["probes"]}
        stranger = next(a for a, label in self.hosts
                        if label is None and a not in planned and a != plan["self"])
        for probe in plan["probes"]:
            if probe["rail"] == "rail0":
                probe["peer"] = stranger
        with open(victim, "w") as f:
            json.dump(plan, f)
        result = self.check(plans)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("INCONSISTENT", result.stdout)

    def test_checker_refuses_two_rings_with_the_right_degrees(self):
        # 10 hosts, k = 3: two rings of 5 give every host 3 peers and 3 probers, yet no agent
        # computing one ring per rail could have planned them.
        hosts = ["10.2.0.%d:9841" % i for i in range(1, 11)]
        peers = self.write("two-rings.json", json.dumps([{"targets": hosts}]))
        plans = os.path.join(self.tmp, "two-rings")
        os.makedirs(plans)
        for ring in (hosts[:5], hosts[5:]):
            for i, address in enumerate(ring):
                probes = [{"peer": ring[(i + step) % 5], "rail": "rail0", "kind": "ucx_rtt"}
                          for step in (1, 2, 3)]
                self.write(os.path.join(plans, address + ".json"),
                           json.dumps({"self": address, "epoch": 1, "probes": probes}))
        result = self.check(plans, peers=peers, rails=["rail0"])
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("fit no single ring", result.stdout)

    def test_same_plan_twice_and_from_yaml(self):
        import yaml  # Debian's python3-yaml
        yaml_peers = self.write("peers.yml", yaml.safe_dump(file_sd(self.hosts)))
        for address, label in self.hosts[:6]:
            first = self.plan(address, label)
            self.assertEqual(self.plan(address, label), first, address)
            self.assertEqual(self.plan(address, label, peers=yaml_peers), first, address)
            self.assertNotEqual(self.plan(address, label, epoch=EPOCH + 1), first,
                                address)

    def test_text_output_lists_the_json_probes(self):
        address, label = self.hosts[1]
        probes = json.loads(self.plan(address, label))["probes"]
        text = self.plan(address, label, output="text")
        self.assertEqual(text.splitlines(),
                         ["%s %s %s" % (p["peer"], p["rail"], p["kind"]) for p in probes])

    def test_errors_are_one_line_and_exit_2(self):
        broken = self.write("broken.json", '[{"targets": ["10.0.0.1"]}]')
        cases = [
            (["--peers-file", broken, "--self", "10.0.0.1:9841", "--rails", "rail0"], "broken"),
            (["--peers-file", self.peers, "--self", "10.9.9.9:9841", "--rails", "rail0"],
             "10.9.9.9:9841"),
            (["--peers-file", self.peers, "--self", self.hosts[3][0], "--rails", "rail0"],
             "unknown rail rail0"),
            (["--peers-file", os.path.join(self.tmp, "missing.json"), "--self", "a:1",
              "--rails", "rail0"], "missing.json"),
        ]
        for args, message in cases:
            result = harness.run_to_exit(["plan"] + args, timeout=30)
            self.assertEqual(result.returncode, 2, args)
            self.assertEqual(result.stdout, "", args)
            self.assertIn(message, result.stderr, args)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


if __name__ == "__main__":
    harness.main()
