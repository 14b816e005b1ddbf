"""Invariants of the probe figures that one scrape can show (issue 28: "probe figures that obey
their own arithmetic"), checked on EVERY scrape the lab and RDMA lab tests make.

check_exposition(text) returns the problems of one exposition text (a list of strings, empty when
it obeys every invariant); assert_invariants(text, where) raises AssertionError listing them all
and counts the scrape. The scrape helpers call assert_invariants: harness.RailExporter.scrape,
lab.LabAgent.scrape (and so samples() and wait_for()), rdma_lab.RdmaLab.scrape, and the few tests
that read /metrics with a client of their own. At exit the process prints how many scrapes it
checked ("figure invariants: N scrapes checked ...").

A family the scrape does not have is not checked: an agent older than issue 28 passes, as does a
scrape taken before any probe ran. The invariants (from the issue's contract):

* rail_multirail_striping_efficiency{peer} is finite, in [0, 1 + striping tolerance]; never both it
  and rail_multirail_striping_efficiency_withheld{peer, reason} for one peer; the withheld gauge is
  1 with a known reason;
* where a peer has one multirail_capacity series and one ucx_multirail_throughput series (which
  two runs an efficiency divides is plain then), a published efficiency is the second's
  throughput over the first's, the two runs finished at most ratio_max_age apart
  (rail_probe_last_run_timestamp_seconds), and neither run's figures are withheld;
* rail_probe_rail_bytes of a multi-rail run sum to that run's rail_probe_bytes (the series whose
  rail label is the run's rails joined with "+", every other label the same); every one of a
  multirail_capacity run's rails has its sample (a ucx_multirail_throughput run attributes its
  bytes by the rails' counters: a rail that carried none has none);
* rail_probe_rtt_run_seconds of a series: min <= p50 <= p90 <= p99 <= p99.9 <= max, finite, >= 0;
* rail_probe_interval_throughput_bytes_per_second min <= max; rail_probe_throughput_cv finite and
  >= 0; no throughput (nor byte count) negative or non-finite;
* a series with rail_probe_figures_withheld{<its last-run labels>, invariant} has none of the
  withheld figures (throughput, per-rail throughput, per-rail bytes, RTT stats, interval rates,
  cv), its invariant is a known token, and rail_probe_figure_violations_total of its series and
  invariant is at least 1;
* no throughput of one rail (single-rail rail_probe_throughput_bytes_per_second, or
  rail_probe_rail_throughput_bytes_per_second) above that rail's line rate x (1 + line-rate
  tolerance), where the scrape has one: rail_expected_rate_bytes_per_second{rail} (collector
  rails) or rail_port_rate_bytes_per_second{device, port} (collector infiniband; it has no rail
  label: the rail is the one whose rail_info has that device and port). Where a rail has both, the
  higher is its line rate, so that only a throughput above every rate the agent knows is reported;
* never both rail_check_held_back{check, rail, peer, reason} and rail_check_ok{check, rail, peer};
  held back is 1.

The tolerances are the agent's defaults (TOLERANCES); a test that configures other ones
(figures.striping_efficiency_tolerance, figures.line_rate_tolerance, figures.ratio_max_age)
passes them to assert_invariants or changes TOLERANCES.
"""

import atexit
import math
import sys
import threading

from prometheus_client.parser import text_string_to_metric_families

# The agent's defaults (figures.striping_efficiency_tolerance, figures.line_rate_tolerance,
# figures.ratio_max_age in seconds).
TOLERANCES = {"striping_efficiency": 0.1, "line_rate": 0.05, "ratio_max_age": 600.0}

# Tokens of rail_probe_figures_withheld{invariant} and of
# rail_multirail_striping_efficiency_withheld{reason}.
WITHHELD_INVARIANTS = {"rail_bytes_sum", "counter_bytes", "line_rate", "rtt_order",
                       "interval_spread"}
STRIPING_WITHHELD_REASONS = {"above_capacity", "awaiting_capacity", "runs_apart",
                             "figures_withheld"}

RTT_ORDER = ("min", "p50", "p90", "p99", "p99.9", "max")

THROUGHPUT = "rail_probe_throughput_bytes_per_second"
RAIL_THROUGHPUT = "rail_probe_rail_throughput_bytes_per_second"
RAIL_BYTES = "rail_probe_rail_bytes"
RUN_BYTES = "rail_probe_bytes"
RTT_RUN = "rail_probe_rtt_run_seconds"
INTERVAL = "rail_probe_interval_throughput_bytes_per_second"
CV = "rail_probe_throughput_cv"
FIGURES_WITHHELD = "rail_probe_figures_withheld"
VIOLATIONS = "rail_probe_figure_violations_total"
EFFICIENCY = "rail_multirail_striping_efficiency"
EFFICIENCY_WITHHELD = "rail_multirail_striping_efficiency_withheld"
REMEASURES = "rail_multirail_capacity_remeasures_total"
MULTI_RAIL_KINDS = ("multirail_capacity", "ucx_multirail_throughput")
LAST_RUN = "rail_probe_last_run_timestamp_seconds"
HELD_BACK = "rail_check_held_back"
CHECK_OK = "rail_check_ok"
PORT_RATE = "rail_port_rate_bytes_per_second"
EXPECTED_RATE = "rail_expected_rate_bytes_per_second"

# The families a withheld series must not have: labelled with its last-run labels (and stat), or
# with one of its rails in place of its rail label.
WITHHELD_SERIES_FAMILIES = (THROUGHPUT, RTT_RUN, INTERVAL, CV)
WITHHELD_RAIL_FAMILIES = (RAIL_THROUGHPUT, RAIL_BYTES)

# Families whose presence makes a scrape one "with probe figures", for the count printed at exit.
PROBE_FIGURE_FAMILIES = (THROUGHPUT, RAIL_THROUGHPUT, RAIL_BYTES, RUN_BYTES, RTT_RUN, INTERVAL, CV,
                         FIGURES_WITHHELD, EFFICIENCY, EFFICIENCY_WITHHELD)


def _key(labels, *without):
    """The labels but `without`, hashable."""
    return frozenset((k, v) for k, v in labels.items() if k not in without)


def _show(labels):
    return "{%s}" % ",".join('%s="%s"' % item for item in sorted(labels.items()))


def _finite(value):
    return not (math.isnan(value) or math.isinf(value))


def parse(text):
    """[(name, labels dict, value)] of an exposition text (prometheus_client's parser, the one the
    tests use)."""
    return [(sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(text) for sample in family.samples]


def check_samples(samples, tolerances=None):
    """The problems of one scrape's samples ([(name, labels, value)]): a list of strings."""
    tol = dict(TOLERANCES, **(tolerances or {}))
    by_name = {}
    for name, labels, value in samples:
        by_name.setdefault(name, []).append((labels, value))
    problems = []
    _check_values(by_name, problems)
    _check_striping(by_name, tol, problems)
    _check_efficiency_runs(by_name, tol, problems)
    _check_rail_bytes(by_name, problems)
    _check_rtt_order(by_name, problems)
    _check_interval(by_name, problems)
    _check_withheld(by_name, problems)
    _check_line_rate(by_name, tol, problems)
    _check_held_back(by_name, problems)
    return problems


def _parse_and_check(text, tolerances):
    """(samples or None, problems) of an exposition text."""
    try:
        samples = parse(text)
    except Exception as error:  # the parser raises ValueError and others on malformed text
        return None, ["the exposition does not parse: %s: %s" % (type(error).__name__, error)]
    return samples, check_samples(samples, tolerances)


def check_exposition(text, tolerances=None):
    """The problems of one exposition text; an empty list when it obeys every invariant."""
    return _parse_and_check(text, tolerances)[1]


def _check_values(by_name, problems):
    """No throughput, byte count, cv or counter of these families negative or non-finite."""
    for name in (THROUGHPUT, RAIL_THROUGHPUT, INTERVAL, RAIL_BYTES, RUN_BYTES, CV, VIOLATIONS,
                 REMEASURES):
        for labels, value in by_name.get(name, ()):
            if not _finite(value) or value < 0:
                problems.append("%s%s = %r: negative or not finite" % (name, _show(labels), value))


def _check_striping(by_name, tol, problems):
    limit = 1 + tol["striping_efficiency"]
    published = set()
    for labels, value in by_name.get(EFFICIENCY, ()):
        published.add(labels.get("peer"))
        if not _finite(value) or not 0 <= value <= limit:
            problems.append("%s%s = %r: outside [0, %g]" % (EFFICIENCY, _show(labels), value,
                                                           limit))
    for labels, value in by_name.get(EFFICIENCY_WITHHELD, ()):
        if labels.get("peer") in published:
            problems.append("%s%s and %s{peer=\"%s\"} both published" % (
                EFFICIENCY_WITHHELD, _show(labels), EFFICIENCY, labels.get("peer")))
        if value != 1:
            problems.append("%s%s = %r, not 1" % (EFFICIENCY_WITHHELD, _show(labels), value))
        if labels.get("reason") not in STRIPING_WITHHELD_REASONS:
            problems.append("%s%s: reason %r is none of %s" % (
                EFFICIENCY_WITHHELD, _show(labels), labels.get("reason"),
                sorted(STRIPING_WITHHELD_REASONS)))


def _check_efficiency_runs(by_name, tol, problems):
    """A published efficiency against the two runs it divides, where they are plain: the peer's
    one multirail_capacity series and one ucx_multirail_throughput series."""
    published = {labels.get("peer"): value for labels, value in by_name.get(EFFICIENCY, ())}
    if not published:
        return
    series = {}  # (kind, peer) -> [series labels], from the series' last-run timestamps
    stamps = {}
    for labels, value in by_name.get(LAST_RUN, ()):
        stamps[_key(labels)] = value
        if labels.get("kind") in ("multirail_capacity", "ucx_multirail_throughput"):
            series.setdefault((labels["kind"], labels.get("peer")), []).append(labels)
    throughput = {_key(labels, "memory_path"): value
                  for labels, value in by_name.get(THROUGHPUT, ())}
    withheld = {_key(labels, "memory_path", "invariant")
                for labels, _ in by_name.get(FIGURES_WITHHELD, ())}
    for peer, efficiency in published.items():
        capacity = series.get(("multirail_capacity", peer), [])
        striped = series.get(("ucx_multirail_throughput", peer), [])
        if len(capacity) != 1 or len(striped) != 1:
            continue  # which two runs it divides is not plain
        where = "%s{peer=\"%s\"} = %r" % (EFFICIENCY, peer, efficiency)
        capacity, striped = _key(capacity[0]), _key(striped[0])
        for run in (capacity, striped):
            if run in withheld:
                problems.append("%s published, yet the figures of %s are withheld" % (
                    where, _show(dict(run))))
        if capacity not in throughput or striped not in throughput:
            continue
        if throughput[capacity] > 0:
            ratio = throughput[striped] / throughput[capacity]
            if abs(ratio - efficiency) > 1e-6 * max(1.0, abs(ratio)):
                problems.append("%s, but ucx_multirail_throughput / multirail_capacity = %r / %r"
                                " = %r" % (where, throughput[striped], throughput[capacity],
                                           ratio))
        apart = abs(stamps[capacity] - stamps[striped])
        if apart > tol["ratio_max_age"]:
            problems.append("%s published, yet its two runs finished %.0f s apart (more than "
                            "ratio_max_age %g s)" % (where, apart, tol["ratio_max_age"]))


def _check_rail_bytes(by_name, problems):
    """Each multi-rail run's per-rail bytes sum to its bytes. A multirail_capacity run has every
    rail's; a ucx_multirail_throughput run attributes its bytes by the rails' counters, and a rail
    that carried none of them has no sample."""
    parts = {}  # labels but rail -> {rail: bytes}
    for labels, value in by_name.get(RAIL_BYTES, ()):
        if labels.get("kind") in MULTI_RAIL_KINDS:
            parts.setdefault(_key(labels, "rail"), {})[labels.get("rail")] = value
    claimed = set()
    for labels, total in by_name.get(RUN_BYTES, ()):
        if labels.get("kind") not in MULTI_RAIL_KINDS:
            continue
        key = _key(labels, "rail")
        rails = labels.get("rail", "").split("+")
        mine = {rail: value for rail, value in parts.get(key, {}).items() if rail in rails}
        if not mine:
            continue  # withheld, or an agent without rail_probe_rail_bytes
        claimed.update((key, rail) for rail in mine)
        missing = [rail for rail in rails if rail not in mine]
        if missing and labels.get("kind") == "multirail_capacity":
            problems.append("%s%s: no %s for its rail(s) %s" % (RUN_BYTES, _show(labels),
                                                               RAIL_BYTES, missing))
            continue
        parts_sum = sum(mine.values())
        if not _finite(parts_sum) or abs(parts_sum - total) > max(1.0, 1e-9 * abs(total)):
            problems.append("%s%s = %r, but its rails' %s sum to %r (%s)" % (
                RUN_BYTES, _show(labels), total, RAIL_BYTES, parts_sum,
                ", ".join("%s %r" % item for item in sorted(mine.items()))))
    for key, rails in parts.items():
        for rail in rails:
            if (key, rail) not in claimed:
                labels = dict(key, rail=rail)
                problems.append("%s%s: no %s of a multi-rail run over rail %s with the same "
                                "labels" % (RAIL_BYTES, _show(labels), RUN_BYTES, rail))


def _check_rtt_order(by_name, problems):
    runs = {}
    for labels, value in by_name.get(RTT_RUN, ()):
        runs.setdefault(_key(labels, "stat"), {})[labels.get("stat")] = value
    for key, stats in runs.items():
        where = RTT_RUN + _show(dict(key))
        for stat, value in stats.items():
            if stat not in RTT_ORDER:
                problems.append("%s: unknown stat %r" % (where, stat))
            elif not _finite(value) or value < 0:
                problems.append("%s: %s = %r, negative or not finite" % (where, stat, value))
        present = [(stat, stats[stat]) for stat in RTT_ORDER if stat in stats]
        for (low, low_value), (high, high_value) in zip(present, present[1:]):
            if low_value > high_value:
                problems.append("%s: %s %r above %s %r (order %s)" % (
                    where, low, low_value, high, high_value, " <= ".join(RTT_ORDER)))


def _check_interval(by_name, problems):
    runs = {}
    for labels, value in by_name.get(INTERVAL, ()):
        runs.setdefault(_key(labels, "stat"), {})[labels.get("stat")] = value
    for key, stats in runs.items():
        where = INTERVAL + _show(dict(key))
        unknown = set(stats) - {"min", "max"}
        if unknown:
            problems.append("%s: unknown stat(s) %s" % (where, sorted(unknown)))
        if "min" in stats and "max" in stats and stats["min"] > stats["max"]:
            problems.append("%s: min %r above max %r" % (where, stats["min"], stats["max"]))


def _check_withheld(by_name, problems):
    violations = {}
    for labels, value in by_name.get(VIOLATIONS, ()):
        violations[_key(labels)] = value
    for labels, value in by_name.get(FIGURES_WITHHELD, ()):
        where = FIGURES_WITHHELD + _show(labels)
        if value != 1:
            problems.append("%s = %r, not 1" % (where, value))
        invariant = labels.get("invariant")
        if invariant not in WITHHELD_INVARIANTS:
            problems.append("%s: invariant %r is none of %s" % (where, invariant,
                                                               sorted(WITHHELD_INVARIANTS)))
        run = {k: v for k, v in labels.items() if k != "invariant"}
        series = _key(run, "memory_path")
        if violations.get(series | {("invariant", invariant)}, 0) < 1:
            problems.append("%s: no %s%s >= 1 for its series and invariant" % (
                where, VIOLATIONS, _show(dict(series | {("invariant", invariant)}))))
        run_key = _key(run)
        for name in WITHHELD_SERIES_FAMILIES:
            for other, _ in by_name.get(name, ()):
                if _key(other, "stat") == run_key:
                    problems.append("%s: withheld, yet %s%s is published" % (where, name,
                                                                              _show(other)))
        rails = run.get("rail", "").split("+")
        run_but_rail = _key(run, "rail")
        for name in WITHHELD_RAIL_FAMILIES:
            for other, _ in by_name.get(name, ()):
                if other.get("rail") in rails and _key(other, "rail") == run_but_rail:
                    problems.append("%s: withheld, yet %s%s is published" % (where, name,
                                                                              _show(other)))


def line_rates(by_name):
    """{rail: the highest line rate the scrape gives for it, bytes per second}."""
    ports = {}  # (device, port) -> rail
    for labels, _ in by_name.get("rail_info", ()):
        if labels.get("device") and labels.get("rail"):
            ports[(labels["device"], labels.get("port", ""))] = labels["rail"]
    rates = {}

    def add(rail, value):
        if rail and _finite(value) and value > 0:
            rates[rail] = max(rates.get(rail, 0.0), value)
    for labels, value in by_name.get(EXPECTED_RATE, ()):
        add(labels.get("rail"), value)
    for labels, value in by_name.get(PORT_RATE, ()):
        add(labels.get("rail") or ports.get((labels.get("device"), labels.get("port"))), value)
    return rates


def _check_line_rate(by_name, tol, problems):
    rates = line_rates(by_name)
    if not rates:
        return
    factor = 1 + tol["line_rate"]
    for name in (THROUGHPUT, RAIL_THROUGHPUT):
        for labels, value in by_name.get(name, ()):
            rail = labels.get("rail", "")
            if "+" in rail or rail not in rates:
                continue  # a multi-rail run's total, or a rail without a known rate
            if value > rates[rail] * factor:
                problems.append("%s%s = %r: above rail %s's line rate %r x %g" % (
                    name, _show(labels), value, rail, rates[rail], factor))


def _check_held_back(by_name, problems):
    judged = {(labels.get("check"), labels.get("rail"), labels.get("peer"))
              for labels, _ in by_name.get(CHECK_OK, ())}
    for labels, value in by_name.get(HELD_BACK, ()):
        where = HELD_BACK + _show(labels)
        if value != 1:
            problems.append("%s = %r, not 1" % (where, value))
        if (labels.get("check"), labels.get("rail"), labels.get("peer")) in judged:
            problems.append("%s, yet %s{check=\"%s\",rail=\"%s\",peer=\"%s\"} is published" % (
                where, CHECK_OK, labels.get("check"), labels.get("rail"), labels.get("peer")))


# -- counting, for the line printed at exit ---------------------------------------------------

_lock = threading.Lock()
_counts = {"checked": 0, "with_figures": 0, "failed": 0}


def counts():
    """(scrapes checked, of them with probe figures, of them failed) in this process."""
    with _lock:
        return _counts["checked"], _counts["with_figures"], _counts["failed"]


def assert_invariants(text, where="a scrape", tolerances=None):
    """Raises AssertionError naming every problem of the exposition text; counts the scrape."""
    samples, problems = _parse_and_check(text, tolerances)
    with_figures = any(name in PROBE_FIGURE_FAMILIES for name, _, _ in samples or ())
    with _lock:
        _counts["checked"] += 1
        _counts["with_figures"] += with_figures
        _counts["failed"] += bool(problems)
    if problems:
        raise AssertionError("figure invariants (issue 28) broken in %s:\n  %s" % (
            where, "\n  ".join(problems)))
    return text


def _report():
    checked, with_figures, failed = counts()
    print("figure invariants: %d scrapes checked, %d with probe figures, %d failed" % (
        checked, with_figures, failed), file=sys.stderr, flush=True)


atexit.register(_report)
