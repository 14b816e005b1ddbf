#!/usr/bin/python3
"""Issue 28's striping scenario run N times: the efficiency, the verdicts and the figures' spread.

Needs root (network namespaces). Each run is the scenario of tests/e2e/striping_scenario.py in a
fresh lab (scripts/lab, prefix --prefix, default "rlbench-stripe"; one left by an earlier run is
removed first): two hosts, rail1 shaped to 1 Gbit/s with tbf on both ends, host a probing host b
with multirail_capacity, ucx_multirail_throughput, ucx_throughput on each rail (1 s each, timeout
3 s) and tcp_rtt, every --interval (default 120 s; tcp_rtt every quarter of it), jitter 0, budget
0.5 (max_bulk_time_fraction_per_rail). A round is one run of each bulk series; each run waits for
--rounds rounds (default 2: the first at the agent's start, the second an interval later) and
reads one scrape at the end of each:

  efficiency   rail_multirail_striping_efficiency{peer="b"}, or the reasons it is withheld
               (rail_multirail_striping_efficiency_withheld, issue 28)
  verdicts     rail_check_ok / rail_check_held_back of every check, rail and peer; the table shows
               the probe checks (probe_throughput per rail, multirail_striping, probe_failing) and
               says whether all of them, every other check included, were the same in every run
  spread       rail_probe_throughput_cv and the interval rates' min and max
               (rail_probe_interval_throughput_bytes_per_second{stat}) of the capacity and the
               striped run; "-" where the agent publishes none (before issue 28)
  throughput   of the capacity run (and its rails), the striped run (and each rail's share), and
               ucx_throughput on each rail

Prints one markdown row per run and round, then the medians (and min–max) over the runs of each
round, and whether the verdicts of round k were the same in every run; progress goes to stderr.
--json writes every round's record. No figure is checked: it exits non-zero only when something
cannot be set up or a round does not come (an agent that dies, a probe that never runs).

  bench/striping_repeatability.py [--binary PATH] [--runs 10] [--interval 120] [--rounds 2]
                                  [--prefix NAME] [--json FILE]

A run takes about (rounds - 1) x interval + 15 s: 10 runs of the defaults, about 23 minutes.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

import harness  # noqa: E402  (tests/e2e, after the path above)
import lab  # noqa: E402
import striping_scenario as scenario  # noqa: E402


def log(line):
    print(line, file=sys.stderr, flush=True)


def fmt(value, pattern="%.3f"):
    return "-" if value is None else pattern % value


def interval_spread(spread):
    """"min–max Gbit/s" of a run's interval rates, or "-"."""
    if spread["min"] is None or spread["max"] is None:
        return "-"
    return "%s–%s" % (scenario.gbits(spread["min"]), scenario.gbits(spread["max"]))


def spread_over_runs(items):
    """"median (min–max)" of the numbers among items; "-" when there are none."""
    items = [item for item in items if item is not None]
    if not items:
        return "-"
    return "%.3f (%.3f–%.3f)" % (statistics.median(items), min(items), max(items))


def gbits_over_runs(items):
    items = [item * 8 / 1e9 for item in items if item is not None]
    if not items:
        return "-"
    return "%.2f (%.2f–%.2f)" % (statistics.median(items), min(items), max(items))


def row(run, record):
    capacity = record["spread"][scenario.CAPACITY]
    striped = record["spread"][scenario.STRIPED]
    shares = record["striped_shares"]
    return "| %s | %d | %s | %s | %s | %s | %s | %s | %s (%s, %s) | %s (%s) | %s, %s |" % (
        run, record["round"], scenario.efficiency_text(record),
        "; ".join(scenario.verdict_summary(record["verdicts"])),
        fmt(capacity["cv"]), interval_spread(capacity), fmt(striped["cv"]),
        interval_spread(striped),
        scenario.gbits(record["throughput"][scenario.CAPACITY]),
        scenario.gbits(record["capacity_per_rail"]["rail0"]),
        scenario.gbits(record["capacity_per_rail"]["rail1"]),
        scenario.gbits(record["throughput"][scenario.STRIPED]),
        "/".join(fmt(shares[rail], "%.2f") for rail in lab.RAIL_NAMES),
        scenario.gbits(record["throughput"]["ucx_throughput rail0"]),
        scenario.gbits(record["throughput"]["ucx_throughput rail1"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.environ.get(
        "RAIL_EXPORTER_BINARY", os.path.join(REPO, "build", "src", "rail_exporter")))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--interval", type=int, default=scenario.FULL_INTERVAL_S,
                        help="seconds between two runs of a bulk probe (at least 24)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--prefix", default="rlbench-stripe")
    parser.add_argument("--json")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/striping_repeatability.py: needs root (network namespaces)")
    if not os.access(args.binary, os.X_OK):
        sys.exit("bench/striping_repeatability.py: no agent at %s (--binary)" % args.binary)
    if args.runs < 1 or args.rounds < 1:
        sys.exit("bench/striping_repeatability.py: --runs and --rounds must be at least 1")
    harness.BINARY = os.path.abspath(args.binary)

    runs = []
    for index in range(args.runs):
        log("run %d of %d (interval %d s, %d rounds):" % (index + 1, args.runs, args.interval,
                                                          args.rounds))
        try:
            result = scenario.run_scenario(prefix=args.prefix, interval_s=args.interval,
                                           rounds=args.rounds, log=lambda l: log("  " + l))
        except (AssertionError, OSError, subprocess.SubprocessError) as error:
            sys.exit("bench/striping_repeatability.py: run %d: %s" % (index + 1, error))
        log("  %.1f s, %d scrapes" % (result["seconds"], result["scrapes"]))
        result.pop("status")
        runs.append(result)

    print()
    print("Striping scenario (issue 28): rail1 shaped to %s, %d runs of %d rounds, interval "
          "%d s, bulk runs %s (timeout %s), jitter 0, budget 0.5; efficiency = "
          "ucx_multirail_throughput / multirail_capacity; cv and min–max: the run's interval "
          "rates (Gbit/s); throughput in Gbit/s." % (
              scenario.SHAPED_RATE, args.runs, args.rounds, args.interval, scenario.DURATION,
              scenario.TIMEOUT))
    print()
    print("| run | round | efficiency | probe checks | cv capacity | capacity min–max | "
          "cv striped | striped min–max | capacity (rail0, rail1) | striped (shares) | "
          "ucx_throughput rail0, rail1 |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for index, result in enumerate(runs, 1):
        for record in result["rounds"]:
            print(row(index, record))

    print()
    print("Over the %d runs, median (min–max):" % args.runs)
    print()
    print("| round | efficiency | withheld (runs) | cv capacity | cv striped | capacity | "
          "striped | ucx_throughput rail0 | ucx_throughput rail1 | verdicts the same in every "
          "run |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for number in range(args.rounds):
        records = [result["rounds"][number] for result in runs]
        withheld = {}
        for record in records:
            for reason in record["withheld"]:
                withheld[reason] = withheld.get(reason, 0) + 1
        first = records[0]["verdicts"]
        differing = sorted({key for record in records[1:] for key in
                            set(first) | set(record["verdicts"])
                            if first.get(key) != record["verdicts"].get(key)})
        print("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            number + 1, spread_over_runs([r["efficiency"] for r in records]),
            ", ".join("%s (%d)" % item for item in sorted(withheld.items())) or "none",
            spread_over_runs([r["spread"][scenario.CAPACITY]["cv"] for r in records]),
            spread_over_runs([r["spread"][scenario.STRIPED]["cv"] for r in records]),
            gbits_over_runs([r["throughput"][scenario.CAPACITY] for r in records]),
            gbits_over_runs([r["throughput"][scenario.STRIPED] for r in records]),
            gbits_over_runs([r["throughput"]["ucx_throughput rail0"] for r in records]),
            gbits_over_runs([r["throughput"]["ucx_throughput rail1"] for r in records]),
            "yes (%d verdicts)" % len(first) if not differing else
            "no: " + ", ".join(differing)))
    durations = [record["round_span_s"] for result in runs for record in result["rounds"]]
    print()
    print("A round's bulk runs ended within %.1f s of each other (median; max %.1f s); a run "
          "took %.0f s (median)." % (statistics.median(durations), max(durations),
                                     statistics.median([r["seconds"] for r in runs])))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"args": vars(args), "runs": runs}, handle, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
