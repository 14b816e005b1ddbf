#!/usr/bin/python3
"""The checker of figure_invariants.py itself (issue 28): a clean exposition with every family of
the contract passes, each invariant broken on its own is reported (and only that text is
reported), the fixture trees' golden scrapes pass, a scrape without the new families (an agent
older than issue 28) passes, and assert_invariants lists every problem and counts the scrape.

No binary, no root: exposition texts only.
"""

import glob
import os
import re
import unittest

import figure_invariants
from figure_invariants import assert_invariants, check_exposition

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")

RUN = 'kind="%s",peer="b",rail="%s",size="1048576",memory="host",memory_path="host"'
UCX = RUN % ("ucx_throughput", "rail0")
CAPACITY = RUN % ("multirail_capacity", "rail0+rail1")
CAPACITY_RAIL = {rail: RUN % ("multirail_capacity", rail) for rail in ("rail0", "rail1")}
STRIPED = RUN % ("ucx_multirail_throughput", "rail0+rail1")
# Series labels (of counters and timestamps): the last-run labels but memory_path.
SERIES = 'kind="%s",peer="b",rail="%s",size="1048576",memory="host"'
CAPACITY_SERIES = SERIES % ("multirail_capacity", "rail0+rail1")
STRIPED_SERIES = SERIES % ("ucx_multirail_throughput", "rail0+rail1")
UCX_SERIES = SERIES % ("ucx_throughput", "rail0")
RTT = 'kind="ucx_rtt",peer="b",rail="rail0",size="8",memory="host",memory_path="host"'
TCP = 'kind="tcp_throughput",peer="b",rail="rail1",size="131072",streams="4"'
# A series whose figures are withheld (counter_bytes): it keeps rail_probe_bytes only.
WITHHELD_TCP = 'kind="tcp_throughput",peer="b",rail="rail0",size="131072",streams="4"'

# Every family of the contract, every invariant obeyed. Rail 0 has a configured and a port rate
# (12.5 GB/s), rail 1 a port rate only (found through rail_info's device and port).
CLEAN = """\
# TYPE rail_info gauge
rail_info{rail="rail0",device="mlx5_0",port="1",netdev="eth0"} 1
rail_info{rail="rail1",device="mlx5_1",port="1",netdev="eth1"} 1
# TYPE rail_port_rate_bytes_per_second gauge
rail_port_rate_bytes_per_second{device="mlx5_0",port="1"} 12500000000
rail_port_rate_bytes_per_second{device="mlx5_1",port="1"} 12500000000
# TYPE rail_expected_rate_bytes_per_second gauge
rail_expected_rate_bytes_per_second{rail="rail0"} 12500000000
# TYPE rail_probe_throughput_bytes_per_second gauge
rail_probe_throughput_bytes_per_second{UCX} 11000000000
rail_probe_throughput_bytes_per_second{CAPACITY} 22000000000
rail_probe_throughput_bytes_per_second{STRIPED} 20900000000
rail_probe_throughput_bytes_per_second{TCP} 9000000000
# TYPE rail_probe_last_run_timestamp_seconds gauge
rail_probe_last_run_timestamp_seconds{CAPACITY_SERIES} 1764300000
rail_probe_last_run_timestamp_seconds{STRIPED_SERIES} 1764300030
# TYPE rail_probe_rail_throughput_bytes_per_second gauge
rail_probe_rail_throughput_bytes_per_second{CAPACITY_RAIL0} 11500000000
rail_probe_rail_throughput_bytes_per_second{CAPACITY_RAIL1} 10500000000
# TYPE rail_probe_bytes gauge
rail_probe_bytes{UCX} 5500000000
rail_probe_bytes{CAPACITY} 22000000000
rail_probe_bytes{TCP} 4500000000
rail_probe_bytes{RTT} 16000
rail_probe_bytes{WITHHELD_TCP} 4400000000
# TYPE rail_probe_rail_bytes gauge
rail_probe_rail_bytes{CAPACITY_RAIL0} 11500000000
rail_probe_rail_bytes{CAPACITY_RAIL1} 10500000000
# TYPE rail_probe_rtt_run_seconds gauge
rail_probe_rtt_run_seconds{RTT,stat="min"} 1.1e-05
rail_probe_rtt_run_seconds{RTT,stat="p50"} 1.4e-05
rail_probe_rtt_run_seconds{RTT,stat="p90"} 1.9e-05
rail_probe_rtt_run_seconds{RTT,stat="p99"} 3e-05
rail_probe_rtt_run_seconds{RTT,stat="p99.9"} 3e-05
rail_probe_rtt_run_seconds{RTT,stat="max"} 0.0002
# TYPE rail_probe_interval_throughput_bytes_per_second gauge
rail_probe_interval_throughput_bytes_per_second{UCX,stat="min"} 10000000000
rail_probe_interval_throughput_bytes_per_second{UCX,stat="max"} 12000000000
rail_probe_interval_throughput_bytes_per_second{TCP,stat="min"} 9000000000
rail_probe_interval_throughput_bytes_per_second{TCP,stat="max"} 9000000000
# TYPE rail_probe_throughput_cv gauge
rail_probe_throughput_cv{UCX} 0.05
rail_probe_throughput_cv{TCP} 0
# TYPE rail_probe_figures_withheld gauge
rail_probe_figures_withheld{WITHHELD_TCP,invariant="counter_bytes"} 1
# TYPE rail_probe_figure_violations_total counter
rail_probe_figure_violations_total{WITHHELD_TCP,invariant="counter_bytes"} 2
rail_probe_figure_violations_total{UCX_SERIES,invariant="line_rate"} 1
# TYPE rail_multirail_striping_efficiency gauge
rail_multirail_striping_efficiency{peer="b"} 0.95
# TYPE rail_multirail_striping_efficiency_withheld gauge
rail_multirail_striping_efficiency_withheld{peer="c",reason="runs_apart"} 1
# TYPE rail_multirail_capacity_remeasures_total counter
rail_multirail_capacity_remeasures_total{peer="b"} 1
# TYPE rail_check_ok gauge
rail_check_ok{check="probe_throughput",rail="rail0",peer="b"} 1
rail_check_ok{check="multirail_striping",rail="",peer="b"} 1
# TYPE rail_check_held_back gauge
rail_check_held_back{check="probe_throughput",rail="rail1",peer="b",reason="noisy"} 1
"""
for name, labels in (("{UCX", UCX), ("{CAPACITY_RAIL0", CAPACITY_RAIL["rail0"]),
                     ("{CAPACITY_RAIL1", CAPACITY_RAIL["rail1"]), ("{CAPACITY", CAPACITY),
                     ("{CAPACITY_SERIES", CAPACITY_SERIES), ("{STRIPED_SERIES", STRIPED_SERIES),
                     ("{UCX_SERIES", UCX_SERIES), ("{STRIPED", STRIPED),
                     ("{RTT", RTT), ("{WITHHELD_TCP", WITHHELD_TCP), ("{TCP", TCP)):
    CLEAN = CLEAN.replace(name + ",", "{" + labels + ",").replace(name + "}",
                                                                  "{" + labels + "}")


def sample_line(text, name, labels_fragment):
    """The one line of text that is a sample of name whose labels contain labels_fragment."""
    lines = [line for line in text.splitlines()
             if line.startswith(name + "{") and labels_fragment in line]
    assert len(lines) == 1, (name, labels_fragment, lines)
    return lines[0]


def set_value(text, name, labels_fragment, value):
    """text with that sample's value replaced."""
    line = sample_line(text, name, labels_fragment)
    return text.replace(line + "\n", line.rsplit(" ", 1)[0] + " " + value + "\n")


def drop(text, name, labels_fragment):
    return text.replace(sample_line(text, name, labels_fragment) + "\n", "")


def add(text, *lines):
    return text + "".join(line + "\n" for line in lines)


def with_efficiency(text, value):
    """text with peer b's efficiency `value` and its ucx_multirail_throughput run's throughput
    value x the capacity run's (22 GB/s), as the agent divides them."""
    text = set_value(text, "rail_multirail_striping_efficiency", 'peer="b"', repr(value))
    return set_value(text, "rail_probe_throughput_bytes_per_second", STRIPED,
                     repr(value * 22000000000))


def golden_text(path):
    """A fixture tree's golden scrape with its masked durations given a value."""
    with open(path, encoding="utf-8") as handle:
        return re.sub(r" <duration>$", " 0.001", handle.read(), flags=re.MULTILINE)


class FigureInvariantsTest(unittest.TestCase):
    def assertProblem(self, text, *fragments, tolerances=None):
        """check_exposition reports text, each fragment in one of its problems."""
        problems = check_exposition(text, tolerances)
        self.assertTrue(problems, "not reported:\n" + text)
        for fragment in fragments:
            self.assertTrue(any(fragment in problem for problem in problems),
                            "no problem mentions %r: %s" % (fragment, problems))
        return problems

    # -- what passes --------------------------------------------------------------------------

    def test_clean_text_with_every_family_passes(self):
        self.assertEqual(check_exposition(CLEAN), [])
        # The parser the tests use reads every family of it.
        names = {name for name, _, _ in figure_invariants.parse(CLEAN)}
        for family in figure_invariants.PROBE_FIGURE_FAMILIES + (
                figure_invariants.VIOLATIONS, figure_invariants.HELD_BACK):
            self.assertIn(family, names)

    def test_golden_scrapes_of_the_fixture_trees_pass(self):
        paths = sorted(glob.glob(os.path.join(GOLDEN, "*.prom")))
        self.assertTrue(paths, "no golden file under " + GOLDEN)
        for path in paths:
            with self.subTest(golden=os.path.basename(path)):
                self.assertEqual(check_exposition(golden_text(path)), [])

    def test_golden_port_rates_are_found_by_rail(self):
        # rail_port_rate_bytes_per_second has device and port, no rail: rail_info maps them.
        text = golden_text(os.path.join(GOLDEN, "spark-dual-rail.prom"))
        by_name = {}
        for name, labels, value in figure_invariants.parse(text):
            by_name.setdefault(name, []).append((labels, value))
        self.assertEqual(figure_invariants.line_rates(by_name)["rocep1s0f0:1"], 12.5e9)
        probe = ('rail_probe_throughput_bytes_per_second{kind="tcp_throughput",peer="b",'
                 'rail="rocep1s0f0:1",size="131072",streams="4"} %s')
        self.assertEqual(check_exposition(add(text, probe % "12000000000")), [])
        self.assertProblem(add(text, probe % "14000000000"), "line rate", "rocep1s0f0:1")

    def test_a_scrape_without_the_new_families_passes(self):
        # An agent older than issue 28: throughput and bytes, no per-rail bytes, no spread, no
        # withheld gauges, no line rate.
        old = "\n".join(line for line in CLEAN.splitlines()
                        if line.startswith(("rail_probe_throughput_bytes_per_second",
                                            "rail_probe_bytes", "rail_probe_rtt_run_seconds",
                                            "rail_check_ok"))) + "\n"
        self.assertEqual(check_exposition(old), [])
        self.assertEqual(check_exposition(""), [])

    def test_tolerances_may_be_given(self):
        text = with_efficiency(CLEAN, 1.3)
        self.assertProblem(text, "outside [0, 1.1]")
        self.assertEqual(check_exposition(text, {"striping_efficiency": 0.5}), [])

    # -- striping efficiency ------------------------------------------------------------------

    def test_efficiency_out_of_range(self):
        for value in ("1.2", "-0.01", "NaN", "+Inf"):
            with self.subTest(value=value):
                self.assertProblem(set_value(CLEAN, "rail_multirail_striping_efficiency",
                                             'peer="b"', value),
                                   "rail_multirail_striping_efficiency{peer=\"b\"}", "outside")
        self.assertProblem(with_efficiency(CLEAN, 1.2), "outside [0, 1.1]")
        # 1 + tolerance itself is in range.
        self.assertEqual(check_exposition(with_efficiency(CLEAN, 1.1)), [])

    def test_efficiency_and_withheld_for_one_peer(self):
        self.assertProblem(add(CLEAN, 'rail_multirail_striping_efficiency_withheld{peer="b",'
                                      'reason="above_capacity"} 1'), "both published")

    def test_efficiency_is_the_ratio_of_its_two_runs(self):
        self.assertProblem(set_value(CLEAN, "rail_multirail_striping_efficiency", 'peer="b"',
                                     "0.9"), "ucx_multirail_throughput / multirail_capacity")
        # Two capacity series (two sizes): which run it divides is not plain, nothing is said.
        ambiguous = add(set_value(CLEAN, "rail_multirail_striping_efficiency", 'peer="b"', "0.9"),
                        "rail_probe_last_run_timestamp_seconds{%s} 1764300000"
                        % CAPACITY_SERIES.replace("1048576", "65536"))
        self.assertEqual(check_exposition(ambiguous), [])

    def test_efficiency_of_runs_apart(self):
        apart = set_value(CLEAN, "rail_probe_last_run_timestamp_seconds", STRIPED_SERIES,
                          "1764300601")
        self.assertProblem(apart, "finished 601 s apart")
        self.assertEqual(check_exposition(apart, {"ratio_max_age": 900}), [])
        self.assertEqual(check_exposition(set_value(
            CLEAN, "rail_probe_last_run_timestamp_seconds", STRIPED_SERIES, "1764300599")), [])

    def test_efficiency_of_a_withheld_run(self):
        withheld = add(drop(CLEAN, "rail_probe_throughput_bytes_per_second", STRIPED),
                       'rail_probe_figures_withheld{%s,invariant="counter_bytes"} 1' % STRIPED,
                       'rail_probe_figure_violations_total{%s,invariant="counter_bytes"} 1'
                       % STRIPED_SERIES)
        self.assertProblem(withheld, "published, yet the figures of", "are withheld")
        self.assertEqual(check_exposition(drop(withheld, "rail_multirail_striping_efficiency",
                                               'peer="b"')), [])

    def test_efficiency_withheld_reason_and_value(self):
        self.assertProblem(set_value(CLEAN, "rail_multirail_striping_efficiency_withheld",
                                     'peer="c"', "0"), "not 1")
        self.assertProblem(CLEAN.replace('reason="runs_apart"', 'reason="bored"'), "'bored'")

    # -- per-rail bytes -----------------------------------------------------------------------

    def test_rail_bytes_not_summing_to_the_run_bytes(self):
        self.assertProblem(set_value(CLEAN, "rail_probe_rail_bytes", 'rail="rail1"',
                                     "10400000000"), "sum to", 'rail="rail0+rail1"')
        self.assertProblem(set_value(CLEAN, "rail_probe_bytes", "multirail_capacity",
                                     "21000000000"), "sum to")

    def test_rail_bytes_missing_for_a_rail_of_the_run(self):
        self.assertProblem(drop(CLEAN, "rail_probe_rail_bytes", 'rail="rail1"'),
                           "for its rail(s) ['rail1']")

    def test_a_striped_runs_attributed_bytes_sum_too_and_an_idle_rail_has_none(self):
        striped_rail0 = RUN % ("ucx_multirail_throughput", "rail0")
        striped = add(CLEAN, "rail_probe_bytes{%s} 41800000000" % STRIPED,
                      "rail_probe_rail_bytes{%s} 41800000000" % striped_rail0)
        self.assertEqual(check_exposition(striped), [])
        self.assertProblem(set_value(striped, "rail_probe_rail_bytes", striped_rail0,
                                     "41700000000"), "sum to")

    def test_rail_bytes_without_their_run(self):
        self.assertProblem(drop(CLEAN, "rail_probe_bytes", "multirail_capacity"),
                           "no rail_probe_bytes")

    # -- RTT order, spread, signs -------------------------------------------------------------

    def test_rtt_stats_out_of_order(self):
        self.assertProblem(set_value(CLEAN, "rail_probe_rtt_run_seconds", 'stat="p90"', "4e-05"),
                           "p90 4e-05 above p99 3e-05")
        self.assertProblem(set_value(CLEAN, "rail_probe_rtt_run_seconds", 'stat="min"',
                                     "0.001"), "min 0.001 above p50")
        self.assertProblem(set_value(CLEAN, "rail_probe_rtt_run_seconds", 'stat="max"', "1e-05"),
                           "above max")
        self.assertProblem(set_value(CLEAN, "rail_probe_rtt_run_seconds", 'stat="min"', "-1"),
                           "negative or not finite")
        self.assertProblem(set_value(CLEAN, "rail_probe_rtt_run_seconds", 'stat="p99"', "NaN"),
                           "negative or not finite")

    def test_interval_min_above_max(self):
        self.assertProblem(set_value(CLEAN, "rail_probe_interval_throughput_bytes_per_second",
                                     'kind="ucx_throughput",peer="b",rail="rail0",size="1048576",'
                                     'memory="host",memory_path="host",stat="min"', "13000000000"),
                           "min 13000000000.0 above max 12000000000.0")

    def test_cv_negative_or_not_finite(self):
        for value in ("-0.1", "NaN", "+Inf"):
            with self.subTest(value=value):
                self.assertProblem(set_value(CLEAN, "rail_probe_throughput_cv", "ucx_throughput",
                                             value), "rail_probe_throughput_cv", "negative")

    def test_throughput_negative_or_not_finite(self):
        for name, fragment in (("rail_probe_throughput_bytes_per_second", TCP),
                               ("rail_probe_rail_throughput_bytes_per_second", 'rail="rail1"'),
                               ("rail_probe_interval_throughput_bytes_per_second",
                                TCP + ',stat="max"'),
                               ("rail_probe_bytes", TCP),
                               ("rail_probe_rail_bytes", 'rail="rail0"')):
            for value in ("-1", "NaN", "+Inf"):
                with self.subTest(name=name, value=value):
                    self.assertProblem(set_value(CLEAN, name, fragment, value), name,
                                       "negative or not finite")

    # -- withheld figures ---------------------------------------------------------------------

    def test_withheld_series_with_its_figures(self):
        published = {
            "rail_probe_throughput_bytes_per_second{%s} 1" % WITHHELD_TCP: "throughput",
            "rail_probe_throughput_cv{%s} 0.1" % WITHHELD_TCP: "cv",
            'rail_probe_interval_throughput_bytes_per_second{%s,stat="min"} 1' % WITHHELD_TCP:
                "interval",
            "rail_probe_rail_throughput_bytes_per_second{%s} 1" % WITHHELD_TCP: "rail",
        }
        for line in published:
            with self.subTest(published=line):
                self.assertProblem(add(CLEAN, line), "withheld, yet " + line.split("{")[0])
        # RTT stats of a withheld ucx_rtt run (rtt_order), and a withheld multi-rail run's
        # per-rail figures (rail_bytes_sum): the rail label of those is one of the run's rails.
        rtt = add(CLEAN, "rail_probe_figures_withheld{%s,invariant=\"rtt_order\"} 1" % RTT,
                  'rail_probe_figure_violations_total{kind="ucx_rtt",peer="b",rail="rail0",'
                  'size="8",memory="host",invariant="rtt_order"} 1')
        self.assertProblem(rtt, "withheld, yet rail_probe_rtt_run_seconds")
        capacity = add(CLEAN, "rail_probe_figures_withheld{%s,invariant=\"rail_bytes_sum\"} 1"
                       % CAPACITY,
                       'rail_probe_figure_violations_total{kind="multirail_capacity",peer="b",'
                       'rail="rail0+rail1",size="1048576",memory="host",'
                       'invariant="rail_bytes_sum"} 1')
        problems = self.assertProblem(capacity, "withheld, yet rail_probe_rail_bytes",
                                      "withheld, yet rail_probe_rail_throughput_bytes_per_second",
                                      "withheld, yet rail_probe_throughput_bytes_per_second",
                                      "rail_multirail_striping_efficiency{peer=\"b\"} = 0.95 "
                                      "published, yet the figures of")
        # Throughput, 2 x rail throughput, 2 x bytes, and the efficiency that divides it.
        self.assertEqual(len(problems), 6, problems)

    def test_withheld_series_keeps_its_other_samples(self):
        # rail_probe_bytes is not withheld; another series of the same kind and peer (rail1) and
        # a series of another size on the same rail keep their figures.
        text = add(CLEAN, 'rail_probe_throughput_bytes_per_second{kind="tcp_throughput",peer="b",'
                          'rail="rail0",size="65536",streams="4"} 1000')
        self.assertEqual(check_exposition(text), [])

    def test_withheld_without_its_violation_count(self):
        self.assertProblem(drop(CLEAN, "rail_probe_figure_violations_total",
                                'invariant="counter_bytes"'),
                           "no rail_probe_figure_violations_total")
        self.assertProblem(set_value(CLEAN, "rail_probe_figure_violations_total",
                                     'invariant="counter_bytes"', "0"),
                           "no rail_probe_figure_violations_total")

    def test_withheld_token_and_value(self):
        self.assertProblem(CLEAN.replace('invariant="counter_bytes"', 'invariant="vibes"'),
                           "invariant 'vibes'")
        self.assertProblem(set_value(CLEAN, "rail_probe_figures_withheld", "counter_bytes", "2"),
                           "not 1")

    def test_counters_negative(self):
        self.assertProblem(set_value(CLEAN, "rail_multirail_capacity_remeasures_total",
                                     'peer="b"', "-1"), "negative")

    # -- line rate ----------------------------------------------------------------------------

    def test_throughput_above_the_line_rate(self):
        # rail1: its port rate only, found through rail_info.
        self.assertProblem(set_value(CLEAN, "rail_probe_throughput_bytes_per_second", TCP,
                                     "13200000000"), "above rail rail1's line rate")
        self.assertEqual(check_exposition(set_value(
            CLEAN, "rail_probe_throughput_bytes_per_second", TCP, "13100000000")), [])
        self.assertProblem(set_value(CLEAN, "rail_probe_rail_throughput_bytes_per_second",
                                     CAPACITY_RAIL["rail0"], "14000000000"),
                           "rail_probe_rail_throughput_bytes_per_second", "line rate")
        # Configured rate only (no RDMA port).
        configured = ('rail_expected_rate_bytes_per_second{rail="rail9"} 1000000000\n'
                      'rail_probe_throughput_bytes_per_second{kind="tcp_throughput",peer="b",'
                      'rail="rail9",size="131072",streams="4"} %s\n')
        self.assertEqual(check_exposition(configured % "1040000000"), [])
        self.assertProblem(configured % "1060000000", "above rail rail9's line rate")
        self.assertEqual(check_exposition(configured % "1060000000", {"line_rate": 0.1}), [])

    def test_line_rate_not_applied_without_one_or_to_a_multirail_total(self):
        no_rate = "\n".join(line for line in CLEAN.splitlines()
                            if not line.startswith(("rail_port_rate", "rail_expected_rate")))
        self.assertEqual(check_exposition(set_value(
            no_rate + "\n", "rail_probe_throughput_bytes_per_second", TCP, "1e12")), [])
        # The multi-rail run's 22 GB/s is above one rail's 12.5 GB/s, and is not a rail's figure.
        self.assertEqual(check_exposition(CLEAN), [])

    def test_the_higher_of_two_rates_is_the_line_rate(self):
        lower = CLEAN.replace('rail_expected_rate_bytes_per_second{rail="rail0"} 12500000000',
                              'rail_expected_rate_bytes_per_second{rail="rail0"} 5000000000')
        self.assertEqual(check_exposition(lower), [])

    # -- held-back checks ---------------------------------------------------------------------

    def test_held_back_and_ok_for_one_check(self):
        self.assertProblem(add(CLEAN, 'rail_check_ok{check="probe_throughput",rail="rail1",'
                                      'peer="b"} 1'), "rail_check_held_back", "is published")
        self.assertProblem(add(CLEAN, 'rail_check_ok{check="probe_throughput",rail="rail1",'
                                      'peer="b"} 0'), "is published")
        self.assertProblem(set_value(CLEAN, "rail_check_held_back", 'rail="rail1"', "0"),
                           "not 1")
        # Another peer's verdict on the same check and rail is no conflict.
        self.assertEqual(check_exposition(add(CLEAN, 'rail_check_ok{check="probe_throughput",'
                                                     'rail="rail1",peer="c"} 1')), [])

    # -- the assertion, the count -------------------------------------------------------------

    def test_unparseable_text(self):
        self.assertProblem("rail_probe_bytes{kind=\"x\" 12\n", "does not parse")

    def test_assert_invariants_lists_every_problem_and_counts(self):
        before = figure_invariants.counts()
        self.assertEqual(assert_invariants(CLEAN, "the clean text"), CLEAN)
        broken = set_value(set_value(CLEAN, "rail_multirail_striping_efficiency", 'peer="b"',
                                     "2"), "rail_probe_rtt_run_seconds", 'stat="p90"', "4e-05")
        with self.assertRaises(AssertionError) as raised:
            assert_invariants(broken, "host a's scrape")
        message = str(raised.exception)
        self.assertIn("host a's scrape", message)
        self.assertIn("rail_multirail_striping_efficiency{peer=\"b\"} = 2.0", message)
        self.assertIn("p90 4e-05 above p99", message)
        after = figure_invariants.counts()
        self.assertEqual((after[0] - before[0], after[1] - before[1], after[2] - before[2]),
                         (2, 2, 1))


if __name__ == "__main__":
    unittest.main(verbosity=2)
