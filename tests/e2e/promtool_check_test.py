#!/usr/bin/python3
"""`promtool check metrics` (Debian's prometheus) finds nothing to complain about in a scrape of
rail_exporter on every fixture tree, with every collector enabled."""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ALL_COLLECTORS = ["--collector.%s" % name for name in
                  ("infiniband", "hw_counters", "gid", "rails", "netclass", "netdev", "bonding",
                   "ethtool", "pcie", "qos", "exporter")]


class PromtoolCheckTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        harness.require_executable(self, harness.PROMTOOL)

    def check(self, body):
        result = subprocess.run([harness.PROMTOOL, "check", "metrics"], input=body,
                                capture_output=True, text=True, timeout=harness.RUN_TIMEOUT)
        return result.returncode, (result.stdout + result.stderr).strip()

    def test_promtool_accepts_a_broken_exposition(self):
        # The check itself must be able to fail, or the test below proves nothing.
        code, output = self.check("# TYPE x_total counter\nx_total{a=\"1\"} 1\n"
                                  "# TYPE my_counter_total counter\nmy_counter_total 1\n")
        self.assertNotEqual((code, output), (0, ""))

    def test_every_fixture_tree(self):
        trees = harness.fixture_trees()
        self.assertTrue(trees, "no fixture tree under " + harness.FIXTURES)
        for tree_name, tree in trees:
            with self.subTest(tree=tree_name):
                with harness.RailExporter(harness.agent_tree_flags(tree) + ALL_COLLECTORS) as agent:
                    body = agent.scrape()
                self.assertIn("rail_exporter_build_info", body)
                code, output = self.check(body)
                print("%s: promtool exit %d, %d lines of output, %d bytes scraped" % (
                    tree_name, code, len(output.splitlines()) if output else 0, len(body)))
                if output:
                    self.fail("%s: promtool check metrics said:\n%s" % (tree_name, output))
                self.assertEqual(code, 0)


if __name__ == "__main__":
    harness.main()
