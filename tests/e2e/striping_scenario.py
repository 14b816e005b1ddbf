"""The striping scenario of issue 28, shared by lab_repeatable_verdicts_test.py,
lab_capacity_remeasure_test.py and bench/striping_repeatability.py.

A two-host lab (tests/e2e/lab.py) with rail1 shaped to 1 Gbit/s (tbf on both ends of its veth,
scripts/lab throttle) before any agent starts. Host a's agent probes host b's responder; host b's
agent only answers. One prober, not two agents probing each other: with the default
bulk_concurrency (one bulk transfer per host, as prober and as responder alike) two probers
collide, are told busy and retry after a random stretch, and the order of the runs would differ
from run to run. Host a's probes (PROBES, in this order, each with jitter 0 so that every first
run is due at the agent's start and the scheduler takes them in configuration order, one bulk run
at a time):

  multirail_capacity           both rails at once, one context per rail
  ucx_multirail_throughput     one context over both rails, UCX stripes
  ucx_throughput               each rail alone (the sibling comparison of probe_throughput)
  tcp_rtt                      each rail, the latency probe

every `interval` (120 s in the full scenario; the latency probe every LATENCY_INTERVAL_FRACTION of
it, at least 10 s), each bulk run `duration` long (1 s) with `timeout` (3 s), under lab.BUDGET
(max_bulk_time_fraction_per_rail 0.5: the three bulk jobs on a rail take 3 x (timeout + 1 s) /
interval of it, so the shortest interval at a 3 s timeout is 24 s).

A round is one run of every bulk series (capacity, striped, ucx_throughput on each rail), each
newer (rail_probe_last_run_timestamp_seconds) than the previous round's, and no sooner than
SETTLE_S after the agent's start. At the end of a round the scenario reads one scrape and records
(Round):

  efficiency   rail_multirail_striping_efficiency{peer="b"}, or None with `withheld` the reasons of
               rail_multirail_striping_efficiency_withheld{peer="b"} (issue 28's contract)
  verdicts     every rail_check_ok (ok/fail) and rail_check_held_back (held_back:<reason>) sample,
               by "check/rail/peer"
  spread       per bulk series: rail_probe_throughput_cv and the interval rates' min and max
               (rail_probe_interval_throughput_bytes_per_second{stat}); absent figures are None
               (the agent before issue 28 publishes none of them)
  throughput   per bulk series (rail_probe_throughput_bytes_per_second), the capacity run's
               per-rail throughput, and each rail's share of the striped run's bytes
               (rail_share_ratio)
  remeasures   rail_multirail_capacity_remeasures_total{peer="b"}

Every scrape the scenario takes (one a second while it waits) is handed to on_scrape(text, where)
first, e.g. figure_invariants.assert_invariants.

Needs root (network namespaces). run_scenario() takes the lab up and down itself.
"""

import os
import statistics
import time

import harness
import lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlstripe")
PEER = "b"  # host a's name for its peer
SHAPED_RAIL = "rail1"
SHAPED_RATE = "1gbit"
SHAPED_BYTES_PER_SECOND = 1e9 / 8
FULL_INTERVAL_S = 120
DURATION = "1s"
TIMEOUT = "3s"
LATENCY_INTERVAL_FRACTION = 0.25
CAPACITY = "multirail_capacity"
STRIPED = "ucx_multirail_throughput"
SINGLE = "ucx_throughput"
LATENCY = "tcp_rtt"
MULTI_RAIL = "+".join(lab.RAIL_NAMES)  # the rail label of a multi-rail series
# The bulk series of a round: (kind, rail label).
BULK_SERIES = ((CAPACITY, MULTI_RAIL), (STRIPED, MULTI_RAIL)) + tuple(
    (SINGLE, rail) for rail in lab.RAIL_NAMES)
SCRAPE_INTERVAL_S = 1.0
ROUND_SLACK_S = 60.0  # a round may end this long after its interval before the scenario gives up
# No round is read sooner than this after the agent's start: the windowed checks (link_flaps, ...)
# judge only from the second reading of the counters (the fabric sampler's baseline at start, then
# the scrapes' own), and a first round read before that would lack them in one run and not in
# another; 12 s leaves a loaded machine ample time.
SETTLE_S = 12.0


class ScenarioError(AssertionError):
    pass


def series_name(kind, rail):
    return kind if rail == MULTI_RAIL else "%s %s" % (kind, rail)


def probes_yaml(interval_s, duration=DURATION, timeout=TIMEOUT, latency_interval_s=None,
                kinds=None):
    """The probes: lines of host a, in the order the scheduler must take them (jitter 0).
    kinds: a subset of (CAPACITY, STRIPED, SINGLE, LATENCY), default all."""
    if latency_interval_s is None:
        latency_interval_s = max(10, int(interval_s * LATENCY_INTERVAL_FRACTION))
    bulk = "duration: %s, timeout: %s, interval: %ds, jitter: 0" % (duration, timeout, interval_s)
    lines = {
        CAPACITY: "  - {kind: %s, %s}\n" % (CAPACITY, bulk),
        STRIPED: "  - {kind: %s, %s}\n" % (STRIPED, bulk),
        SINGLE: "  - {kind: %s, %s}\n" % (SINGLE, bulk),
        LATENCY: "  - {kind: %s, duration: 1s, timeout: 3s, interval: %ds, jitter: 0}\n" % (
            LATENCY, latency_interval_s),
    }
    return "".join(lines[kind] for kind in (CAPACITY, STRIPED, SINGLE, LATENCY)
                   if kinds is None or kind in kinds)


# -- reading a scrape -------------------------------------------------------------------------

def parse(text):
    """[(name, labels, value)] of an exposition text."""
    return [(name, dict(labels), value)
            for name, series in harness.parse_samples(text).items()
            for labels, value in series.items()]


def values(samples, name, **labels):
    return lab.find(samples, name, **labels)


def one(samples, name, **labels):
    """The value of the one sample of name with these labels (summed over the labels not named,
    which for a series of one size is one sample); None when there is none."""
    found = values(samples, name, **labels)
    return sum(found) if found else None


def last_run(samples, kind, rail, peer=PEER):
    """rail_probe_last_run_timestamp_seconds of a series; None before its first run."""
    found = values(samples, "rail_probe_last_run_timestamp_seconds", kind=kind, rail=rail,
                   peer=peer)
    return max(found) if found else None


def verdicts(samples):
    """{"check/rail/peer": "ok" | "fail" | "held_back:<reason>"} of a scrape."""
    result = {}
    for name, labels, value in samples:
        key = "%s/%s/%s" % (labels.get("check"), labels.get("rail", ""), labels.get("peer", ""))
        if name == "rail_check_ok":
            result[key] = "ok" if value == 1.0 else "fail"
        elif name == "rail_check_held_back" and value == 1.0:
            result[key] = "held_back:" + labels.get("reason", "")
    return result


def check_ok_and_held_back_overlap(samples):
    """(check, rail, peer) keys with both a rail_check_ok and a rail_check_held_back sample."""
    ok = {(l.get("check"), l.get("rail", ""), l.get("peer", "")) for n, l, _ in samples
          if n == "rail_check_ok"}
    held = {(l.get("check"), l.get("rail", ""), l.get("peer", "")) for n, l, v in samples
            if n == "rail_check_held_back" and v == 1.0}
    return sorted(ok & held)


def efficiency(samples, peer=PEER):
    """(efficiency or None, sorted withheld reasons) of a peer."""
    value = one(samples, "rail_multirail_striping_efficiency", peer=peer)
    withheld = sorted(labels["reason"] for name, labels, v in samples
                      if name == "rail_multirail_striping_efficiency_withheld"
                      and labels.get("peer") == peer and v == 1.0)
    return value, withheld


def spread(samples, kind, rail, peer=PEER):
    """{"cv", "min", "max"} of a series' last run (None where not published)."""
    labels = {"kind": kind, "rail": rail, "peer": peer}
    return {
        "cv": one(samples, "rail_probe_throughput_cv", **labels),
        "min": one(samples, "rail_probe_interval_throughput_bytes_per_second", stat="min",
                   **labels),
        "max": one(samples, "rail_probe_interval_throughput_bytes_per_second", stat="max",
                   **labels),
    }


def round_record(samples, number, elapsed_s, peer=PEER):
    """The Round of a scrape (a dict; see the module's docstring)."""
    value, withheld = efficiency(samples, peer)
    record = {
        "round": number,
        "elapsed_s": elapsed_s,
        "efficiency": value,
        "withheld": withheld,
        "verdicts": verdicts(samples),
        "spread": {},
        "throughput": {},
        "success": {},
        "capacity_per_rail": {
            rail: one(samples, "rail_probe_rail_throughput_bytes_per_second", kind=CAPACITY,
                      rail=rail, peer=peer)
            for rail in lab.RAIL_NAMES},
        "striped_shares": {
            rail: one(samples, "rail_share_ratio", kind=STRIPED, rail=rail, peer=peer)
            for rail in lab.RAIL_NAMES},
        "remeasures": one(samples, "rail_multirail_capacity_remeasures_total", peer=peer),
        "figures_withheld": sorted(
            "%s %s: %s" % (labels.get("kind"), labels.get("rail"), labels.get("invariant"))
            for name, labels, v in samples
            if name == "rail_probe_figures_withheld" and v == 1.0),
    }
    for kind, rail in BULK_SERIES:
        name = series_name(kind, rail)
        record["spread"][name] = spread(samples, kind, rail, peer)
        record["throughput"][name] = one(samples, "rail_probe_throughput_bytes_per_second",
                                         kind=kind, rail=rail, peer=peer)
        record["success"][name] = one(samples, "rail_probe_success", kind=kind, rail=rail,
                                      peer=peer)
    return record


# -- the lab ----------------------------------------------------------------------------------

def start(prefix, interval_s, duration=DURATION, timeout=TIMEOUT, binary=None, shape=True,
          probes=None, tmp_prefix="rail-lab-stripe-"):
    """The lab up, rail1 shaped (with shape), host b's responder and host a's prober started;
    (lab, prober agent). The caller takes the lab down (lab.down())."""
    the_lab = lab.Lab(prefix, tmp_prefix=tmp_prefix)
    the_lab.up()
    try:
        if shape:
            the_lab.throttle(lab.rail_index(SHAPED_RAIL), SHAPED_RATE)
        secret = the_lab.secret("secret", "lab-striping-scenario-secret\n")
        config_b = the_lab.config("b.yaml", "b", secret=secret)
        config_a = the_lab.config("a.yaml", "a", secret=secret,
                                  peers={PEER: lab.peer_address("b")},
                                  probes=probes or probes_yaml(interval_s, duration, timeout))
        kwargs = {"binary": binary} if binary else {}
        the_lab.start_agent("b", ["--config.file=" + config_b], **kwargs)
        agent = the_lab.start_agent("a", ["--config.file=" + config_a], **kwargs)
    except BaseException:
        the_lab.down()
        raise
    return the_lab, agent


class Watcher:
    """Scrapes an agent, handing every scrape to on_scrape(text, where) first."""

    def __init__(self, agent, on_scrape=None, label=""):
        self.agent = agent
        self.on_scrape = on_scrape
        self.label = label
        self.started = time.monotonic()
        self.scrapes = 0

    def elapsed(self):
        return time.monotonic() - self.started

    def samples(self):
        text = self.agent.scrape()
        self.scrapes += 1
        if self.on_scrape:
            self.on_scrape(text, "%sscrape %d at %.1f s" % (
                self.label + ", " if self.label else "", self.scrapes, self.elapsed()))
        return parse(text)

    def wait(self, predicate, timeout, interval=SCRAPE_INTERVAL_S):
        """Scrapes until predicate(samples) is truthy or timeout passes: (value, samples)."""
        last = []

        def check():
            last[:] = self.samples()
            return predicate(last)
        return lab.wait_until(check, timeout, interval), last


def wait_rounds(watcher, rounds, interval_s, log=None):
    """Waits for `rounds` rounds of every bulk series; [Round]."""
    seen = {series: None for series in BULK_SERIES}
    records = []
    for number in range(1, rounds + 1):
        round_started = watcher.elapsed()

        def complete(samples):
            stamps = {series: last_run(samples, *series) for series in BULK_SERIES}
            if watcher.elapsed() >= SETTLE_S and all(
                    stamps[s] is not None and (seen[s] is None or stamps[s] > seen[s])
                    for s in BULK_SERIES):
                return stamps
            return None
        # The first round starts at once; each later one an interval after the previous.
        limit = (interval_s if number > 1 else 0) + ROUND_SLACK_S
        stamps, samples = watcher.wait(complete, limit)
        if not stamps:
            missing = [series_name(*s) for s in BULK_SERIES
                       if last_run(samples, *s) is None or
                       (seen[s] is not None and last_run(samples, *s) <= seen[s])]
            raise ScenarioError("round %d: no new run of %s within %.0f s" % (
                number, ", ".join(missing), limit))
        seen.update(stamps)
        record = round_record(samples, number, watcher.elapsed())
        record["wait_s"] = watcher.elapsed() - round_started
        # From the first bulk run's end to the last one's, by the agent's own stamps.
        record["round_span_s"] = max(stamps.values()) - min(stamps.values())
        records.append(record)
        if log:
            log(describe(record))
    return records


def run_scenario(prefix=PREFIX, interval_s=FULL_INTERVAL_S, rounds=2, duration=DURATION,
                 timeout=TIMEOUT, binary=None, on_scrape=None, label="", log=None):
    """One run of the scenario in a fresh lab: {"rounds": [Round], "scrapes", "seconds",
    "status"} (status: scripts/lab status, with the qdiscs, taken while the lab was up)."""
    started = time.monotonic()
    the_lab, agent = start(prefix, interval_s, duration, timeout, binary)
    try:
        status = the_lab.status()
        watcher = Watcher(agent, on_scrape, label)
        records = wait_rounds(watcher, rounds, interval_s, log)
        return {"rounds": records, "scrapes": watcher.scrapes,
                "seconds": time.monotonic() - started, "status": status}
    except BaseException:
        if log:
            log("agent a's log:\n" + agent.stderr_text()[-4000:])
        raise
    finally:
        the_lab.down()


# -- reporting ---------------------------------------------------------------------------------

def gbits(value):
    return "-" if value is None else "%.2f" % (value * 8 / 1e9)


def efficiency_text(record):
    if record["efficiency"] is not None:
        text = "%.3f" % record["efficiency"]
        return text + (" (and withheld: %s!)" % ",".join(record["withheld"])
                       if record["withheld"] else "")
    return "withheld: " + ",".join(record["withheld"]) if record["withheld"] else "none"


def describe(record):
    """One line of a Round, for a log."""
    return "round %d at %.1f s (waited %.1f s, bulk runs within %.1f s): efficiency %s; " \
           "Gbit/s %s; cv %s; remeasures %s" % (
               record["round"], record["elapsed_s"], record["wait_s"], record["round_span_s"],
               efficiency_text(record),
               ", ".join("%s %s" % (name, gbits(value))
                         for name, value in record["throughput"].items()),
               ", ".join("%s %s" % (name, "-" if s["cv"] is None else "%.3f" % s["cv"])
                         for name, s in record["spread"].items()),
               record["remeasures"])


def verdict_summary(verdicts_by_key, checks=("probe_throughput", "multirail_striping")):
    """"check rail: verdict" of the probe checks, sorted; the verdicts that decide the
    scenario."""
    out = []
    for key in sorted(verdicts_by_key):
        check, rail, peer = key.split("/")
        if check in checks:
            out.append("%s %s: %s" % (check, rail or peer, verdicts_by_key[key]))
    return out


def median(items):
    items = [item for item in items if item is not None]
    return statistics.median(items) if items else None
