#!/usr/bin/python3
"""The striping scenario three times: the same verdicts every time, every scrape consistent.

Needs root (network namespaces, scripts/lab); skips with a message otherwise.

Issue 28, item 3 (repeatable verdicts), shortened: the scenario of striping_scenario.py (two
hosts, rail1 shaped to 1 Gbit/s on both ends, host a probing host b with multirail_capacity,
ucx_multirail_throughput, ucx_throughput on each rail and tcp_rtt, jitter 0, budget 0.5) with a
RUN_INTERVAL_S interval instead of 120 s, ROUNDS rounds, RUNS times, each in a fresh lab. It
asserts:

* every scrape of every run passes figure_invariants.assert_invariants (the figures' invariants
  of docs/metrics.md), never publishes a striping efficiency above 1 + the default tolerance (0.1)
  or an efficiency and its withholding together, and never a check both judged (rail_check_ok)
  and held back;
* the verdicts (rail_check_ok and rail_check_held_back of every check, rail and peer) at the end of
  round k are the same in every run;
* the shaping shows where it must: probe_throughput fails on rail1 (ucx_throughput on rail1 below
  half its sibling's) and does not fail on rail0, in every round of every run, with rail1's
  ucx_throughput at most 1.2 Gbit/s and rail0's more than twice it.

Each run's rounds (efficiency or the reason it is withheld, the probe checks' verdicts, the runs'
spread) are printed as a table; bench/striping_repeatability.py runs the full scenario.
"""

import os
import unittest

import harness
import lab
import striping_scenario as scenario
from figure_invariants import assert_invariants

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlrepeat")
RUNS = 3
ROUNDS = 2
# The shortest interval the budget allows at the scenario's 3 s timeout is 24 s (three bulk jobs
# per rail, (3 + 1) s each, within 0.5 of it). A round's bulk runs take about 5 s; a run, ROUNDS
# rounds, about RUN_INTERVAL_S * (ROUNDS - 1) + 10 s and the lab's set-up.
RUN_INTERVAL_S = 25
EFFICIENCY_TOLERANCE = 0.1  # figures.striping_efficiency_tolerance's default
SHAPED_LIMIT_BYTES_PER_SECOND = 1.2 * scenario.SHAPED_BYTES_PER_SECOND


def assert_scrape(text, where):
    """The invariants of one scrape: figure_invariants' and the striping efficiency's."""
    assert_invariants(text, where)
    samples = scenario.parse(text)
    value, withheld = scenario.efficiency(samples)
    if value is not None:
        assert 0 <= value <= 1 + EFFICIENCY_TOLERANCE, "%s: efficiency %r published" % (where,
                                                                                       value)
        assert not withheld, "%s: efficiency %r and withheld %s" % (where, value, withheld)
    both = scenario.check_ok_and_held_back_overlap(samples)
    assert not both, "%s: checks both judged and held back: %s" % (where, both)


@lab.needs_root
class LabRepeatableVerdictsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        lab.require_tools("ip", "curl", "tc")

    def test_three_runs_give_the_same_verdicts(self):
        runs = []
        for index in range(RUNS):
            label = "run %d" % (index + 1)
            print("%s (interval %d s, %d rounds):" % (label, RUN_INTERVAL_S, ROUNDS), flush=True)
            runs.append(scenario.run_scenario(
                prefix=PREFIX, interval_s=RUN_INTERVAL_S, rounds=ROUNDS,
                on_scrape=assert_scrape, label=label,
                log=lambda line: print("  " + line, flush=True)))
            print("  %d scrapes in %.1f s" % (runs[-1]["scrapes"], runs[-1]["seconds"]),
                  flush=True)
        self.print_table(runs)

        for number in range(ROUNDS):
            first = runs[0]["rounds"][number]["verdicts"]
            for index, run in enumerate(runs[1:], 2):
                other = run["rounds"][number]["verdicts"]
                differing = sorted(key for key in set(first) | set(other)
                                   if first.get(key) != other.get(key))
                self.assertEqual(differing, [], "round %d: run %d's verdicts differ from run "
                                 "1's: %s" % (number + 1, index, ", ".join(
                                     "%s %s vs %s" % (key, first.get(key), other.get(key))
                                     for key in differing)))

        for index, run in enumerate(runs, 1):
            for record in run["rounds"]:
                where = "run %d, round %d" % (index, record["round"])
                verdicts = record["verdicts"]
                self.assertEqual(verdicts.get("probe_throughput/rail1/b"), "fail",
                                 "%s: rail1, shaped to %s, %s" % (where, scenario.SHAPED_RATE,
                                                                   verdicts))
                # Rail 0 is not slowed: it passes, or is held back as noise (its spread on a busy
                # machine), never fails.
                rail0_verdict = verdicts.get("probe_throughput/rail0/b", "none")
                self.assertTrue(rail0_verdict == "ok" or rail0_verdict.startswith("held_back:"),
                                "%s: probe_throughput on rail0: %s" % (where, rail0_verdict))
                rail1 = record["throughput"]["ucx_throughput rail1"]
                rail0 = record["throughput"]["ucx_throughput rail0"]
                self.assertIsNotNone(rail1, where)
                self.assertLessEqual(rail1, SHAPED_LIMIT_BYTES_PER_SECOND, where)
                self.assertGreater(rail0, 2 * rail1, where)

    @staticmethod
    def print_table(runs):
        print()
        print("| run | round | efficiency | probe checks | cv capacity | cv striped | "
              "Gbit/s capacity (rail0, rail1) | Gbit/s striped (shares) | "
              "Gbit/s ucx_throughput rail0, rail1 |")
        print("|---:|---:|---|---|---:|---:|---:|---:|---:|")
        for index, run in enumerate(runs, 1):
            for record in run["rounds"]:
                def cv(name):
                    value = record["spread"][name]["cv"]
                    return "-" if value is None else "%.3f" % value
                shares = record["striped_shares"]
                print("| %d | %d | %s | %s | %s | %s | %s (%s, %s) | %s (%s) | %s, %s |" % (
                    index, record["round"], scenario.efficiency_text(record),
                    "; ".join(scenario.verdict_summary(record["verdicts"])),
                    cv(scenario.CAPACITY), cv(scenario.STRIPED),
                    scenario.gbits(record["throughput"][scenario.CAPACITY]),
                    scenario.gbits(record["capacity_per_rail"]["rail0"]),
                    scenario.gbits(record["capacity_per_rail"]["rail1"]),
                    scenario.gbits(record["throughput"][scenario.STRIPED]),
                    ", ".join("-" if shares[r] is None else "%.2f" % shares[r]
                              for r in lab.RAIL_NAMES),
                    scenario.gbits(record["throughput"]["ucx_throughput rail0"]),
                    scenario.gbits(record["throughput"]["ucx_throughput rail1"])))
        print(flush=True)


if __name__ == "__main__":
    harness.main()
