#!/usr/bin/python3
"""The Prometheus rules, their unit tests, the scrape config example and the runbook agree.

* `promtool check rules`, `promtool test rules` and `promtool check config` (Debian's prometheus
  package) accept deploy/prometheus/;
* every alert of rail_rules.yml has an alert_rule_test where it fires (non-empty exp_alerts) and
  one where it stays silent (exp_alerts: []), and no test names an alert that does not exist
  (promtool would accept a silent test of a misspelt alert);
* every recording rule's value is checked by a promql_expr_test;
* every alert has `for`, a severity label, summary, description and a runbook_url whose anchor
  (its lower-case name) is a heading of docs/runbook.md.

The rule files are read with Debian's python3-yaml (scripts/install-deps installs it).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROMTOOL = os.environ.get("RAIL_PROMTOOL", "/usr/bin/promtool")
RUN_TIMEOUT = 60.0  # seconds for one promtool run

DEPLOY = os.path.join(REPO, "deploy", "prometheus")
RULES = os.path.join(DEPLOY, "rail_rules.yml")
RULES_TEST = os.path.join(DEPLOY, "rail_rules_test.yml")
CONFIG = os.path.join(DEPLOY, "prometheus.example.yml")
RUNBOOK = os.path.join(REPO, "docs", "runbook.md")
RUNBOOK_URL = re.compile(r"^docs/runbook\.md#([a-z0-9_-]+)$")


def load_yaml(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def run_promtool(*args, cwd=None):
    if not (os.path.isfile(PROMTOOL) and os.access(PROMTOOL, os.X_OK)):
        raise AssertionError("%s is not installed (Debian package prometheus; scripts/install-deps "
                             "installs it)" % PROMTOOL)
    result = subprocess.run([PROMTOOL] + list(args), capture_output=True, text=True,
                            timeout=RUN_TIMEOUT, cwd=cwd)
    return result.returncode, (result.stdout + result.stderr).strip()


def github_anchor(heading):
    """The anchor GitHub gives a Markdown heading."""
    slug = heading.strip().lower()
    slug = re.sub(r"[^\w\- ]", "", slug)
    return slug.replace(" ", "-")


def alerting_rules(rules):
    return [rule for group in rules["groups"] for rule in group["rules"] if "alert" in rule]


def recording_rules(rules):
    return [rule for group in rules["groups"] for rule in group["rules"] if "record" in rule]


class PromtoolRulesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rules = load_yaml(RULES)
        cls.tests = load_yaml(RULES_TEST)

    def assert_promtool_ok(self, *args, cwd=None):
        code, output = run_promtool(*args, cwd=cwd)
        print("promtool %s: exit %d\n%s" % (" ".join(args), code, output))
        self.assertEqual(code, 0, "promtool %s failed:\n%s" % (" ".join(args), output))
        self.assertIn("SUCCESS", output)
        return output

    def test_check_rules(self):
        output = self.assert_promtool_ok("check", "rules", RULES)
        count = len(alerting_rules(self.rules)) + len(recording_rules(self.rules))
        self.assertIn("SUCCESS: %d rules found" % count, output)

    def test_unit_tests_pass(self):
        # Run from another directory: rule_files are found relative to the test file.
        with tempfile.TemporaryDirectory() as elsewhere:
            self.assert_promtool_ok("test", "rules", RULES_TEST, cwd=elsewhere)

    def test_check_config(self):
        # rule_files in the config are relative to the config's own directory.
        self.assertEqual(self.example_rule_files(), ["rail_rules.yml"])
        with tempfile.TemporaryDirectory() as elsewhere:
            output = self.assert_promtool_ok("check", "config", CONFIG, cwd=elsewhere)
        self.assertIn("1 rule files found", output)
        self.assertIn("rail_rules.yml", output)

    def example_rule_files(self):
        config = load_yaml(CONFIG)
        jobs = [job["job_name"] for job in config["scrape_configs"]]
        self.assertIn("rail_exporter", jobs)
        return config["rule_files"]

    def test_promtool_can_fail(self):
        # The checks above must be able to fail, or they prove nothing.
        with tempfile.TemporaryDirectory() as tmp:
            bad_rules = os.path.join(tmp, "bad_rules.yml")
            with open(bad_rules, "w") as handle:
                handle.write("groups:\n  - name: g\n    rules:\n      - alert: A\n"
                             "        expr: rate(x[1m]) > on(\n")
            code, _ = run_promtool("check", "rules", bad_rules)
            self.assertNotEqual(code, 0, "promtool check rules accepted a broken expression")
            rules = os.path.join(tmp, "rules.yml")
            with open(rules, "w") as handle:
                handle.write("groups:\n  - name: g\n    rules:\n      - alert: A\n"
                             "        expr: x > 1\n")
            test = os.path.join(tmp, "test.yml")
            with open(test, "w") as handle:
                handle.write("rule_files: [rules.yml]\ntests:\n  - interval: 1m\n"
                             "    input_series:\n      - {series: 'x', values: '0x5'}\n"
                             "    alert_rule_test:\n      - eval_time: 2m\n        alertname: A\n"
                             "        exp_alerts:\n          - exp_labels: {}\n")
            code, _ = run_promtool("test", "rules", test)
            self.assertNotEqual(code, 0, "promtool test rules passed an alert that cannot fire")

    def test_every_alert_fires_and_stays_silent(self):
        alerts = [rule["alert"] for rule in alerting_rules(self.rules)]
        self.assertEqual(len(alerts), len(set(alerts)), "an alert is defined twice")
        firing, silent = {}, {}
        for case in self.tests["tests"]:
            for check in case.get("alert_rule_test") or []:
                name = check["alertname"]
                self.assertIn(name, alerts, "test %r checks alert %r, which rail_rules.yml does "
                              "not define" % (case.get("name"), name))
                target = firing if check.get("exp_alerts") else silent
                target.setdefault(name, []).append("%s @ %s" % (case.get("name"),
                                                                check["eval_time"]))
        for name in alerts:
            print("%-24s fires in %d check(s), stays silent in %d" % (
                name, len(firing.get(name, [])), len(silent.get(name, []))))
        self.assertEqual([name for name in alerts if name not in firing], [],
                         "alerts without a test where they fire")
        self.assertEqual([name for name in alerts if name not in silent], [],
                         "alerts without a test where they stay silent")

    def test_every_recording_rule_is_checked(self):
        records = [rule["record"] for rule in recording_rules(self.rules)]
        checked = set()
        for case in self.tests["tests"]:
            for check in case.get("promql_expr_test") or []:
                if check.get("exp_samples"):
                    checked.update(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", check["expr"]))
        print("recording rules: %d, checked by value: %d" % (
            len(records), len([name for name in records if name in checked])))
        self.assertEqual([name for name in records if name not in checked], [],
                         "recording rules without a promql_expr_test")

    def test_alerts_are_complete_and_their_runbook_sections_exist(self):
        with open(RUNBOOK, encoding="utf-8") as handle:
            text = re.sub(r"^```.*?^```", "", handle.read(), flags=re.MULTILINE | re.DOTALL)
        headings = {github_anchor(match) for match in
                    re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.MULTILINE)}
        for rule in alerting_rules(self.rules):
            name = rule["alert"]
            with self.subTest(alert=name):
                self.assertTrue(rule.get("for"), "%s has no for:" % name)
                self.assertIn((rule.get("labels") or {}).get("severity"),
                              ("critical", "warning", "info"))
                annotations = rule.get("annotations") or {}
                for key in ("summary", "description", "runbook_url"):
                    self.assertTrue(annotations.get(key), "%s has no %s" % (name, key))
                match = RUNBOOK_URL.match(annotations["runbook_url"])
                self.assertIsNotNone(match, "%s: runbook_url %r is not docs/runbook.md#<anchor>"
                                     % (name, annotations["runbook_url"]))
                self.assertEqual(match.group(1), name.lower())
                self.assertIn(match.group(1), headings,
                              "docs/runbook.md has no heading for #%s" % match.group(1))


def main():
    global PROMTOOL
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--promtool", default=PROMTOOL)
    args, rest = parser.parse_known_args(sys.argv[1:])
    PROMTOOL = shutil.which(args.promtool) or args.promtool
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
