#!/usr/bin/python3
"""What deploy/prometheus/rail_rules.yml costs a real Prometheus at 1,000 and 3,000 hosts.

Series "as the agents export them" (issue 32, part 5). One real rail_exporter runs on the
hgx-8gpu fixture tree (8 InfiniBand rails, named rail0..rail7) with the fleet on (file_sd of its
own responder and three loopback targets nobody answers, k = 3) and the quick start's probes
(ucx_rtt at 8 and 4,096 B, ucx_throughput at 1 MiB, host memory: docs/fleet.md). Its scrape gives
every host-level series (inventory, counters, checks, process, fleet) verbatim and the per-peer
series of probes that fail. Probes that succeed cannot run on a fixture tree, so the per-peer
series of a successful run are built from the label sets of src/collectors/probe.cc and
src/collectors/fleet.cc (AddLastRun, AddCounterFigures, PeerFamilies, AddRailSummaries), which
were checked against a real two-host lab scrape (scripts/lab, TCP rails): the same families and
label names, 42 histogram buckets of rail_probe_rtt_seconds. The script checks that its failing
pairs carry exactly the label names the agent's own failing series carry, and stops otherwise.

Each simulated host is 10.a.b.c, scraped as instance 10.a.b.c:9840 (job rail_exporter), probed
at its responder 10.a.b.c:9841. On each rail the hosts sit on a ring (a seeded shuffle per rail,
as the plan hashes them) and each probes the next k = 3. A share --sick of the (host, rail)
pairs is slow (30% of line rate, as every prober sees it) and as many fail (connection refused);
the same share of hosts has the fixture's faults (mlx5_5 trained at x8, no GPUDirect) and uneven
traffic over its rails; everything else is healthy. Prometheus adds up, scrape_duration_seconds
and the other three series of every target.

Samples are written as OpenMetrics with timestamps every 30 s, ending at T0: for every family
that a rule reads over a range (rate(...[1m]), increase(...[30m]), max_over_time(...[1h]), ...),
over that range plus a minute; for the others the last minute only (an instant selector reads the
latest sample in 5 minutes). promtool tsdb create-blocks-from openmetrics turns each file of
--hosts-per-file hosts into a block; Prometheus merges the overlapping blocks once at start (a
vertical compaction, waited for). Then, for each level of recording rules (a rule that reads
another rule's output is one level above it), promtool tsdb create-blocks-from rules evaluates
that level against the running server at T0 + 10 s x level and its block is added (Prometheus
restarted), so that the next level and the alerts read real recorded series.

Measured per rule (every recording rule at its level's time, every alert at T0 + 10 s x (levels
+ 1)) with GET /api/v1/query?stats=all: one warm-up pass over every rule, then --repeats passes
(so that whatever else runs on the machine spreads over all rules): the median and the minimum of
Prometheus's own evalTotalTime, the median HTTP round trip (JSON included), the series returned
and the samples the query touched. A group's time is the sum of its rules' medians (Prometheus
evaluates the rules of a group one after the other, the groups side by side).
Also measured: the series per host, the total (counted as written and checked with count() of one
host in Prometheus), the blocks' size, Prometheus's RSS and Go heap after it loaded the blocks and
after every query. Backfilled series live in blocks, not in the head, so the head's cost per
active series is measured apart: a fresh Prometheus scrapes --head-hosts simulated hosts (their
current values, served by this script) every 5 s for 25 s, and the growth of its Go heap in use
and of its RSS over the series it holds is divided by them.

Extrapolated to 10,000 hosts by the growth exponent measured between the two sizes (a time t2 at
n2 becomes t2 x (10000 / n2)^b with b = log(t2 / t1) / log(n2 / n1)); a rule whose time grows
clearly faster than the series (b above 1.3 for both the median and the minimum, and a minimum
of at least 10 ms at the larger size) is flagged.

Prints a markdown table, writes the raw figures as JSON to --out and, with --plot, a PNG.
Usage: bench/fleet_rules_scale.py --rail-exporter build/src/rail_exporter [--hosts 1000,3000]
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from scrape_common import free_ports, stop_process  # noqa: E402

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
RULES = os.path.join(ROOT, "deploy", "prometheus", "rail_rules.yml")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "hgx-8gpu")
JOB = "rail_exporter"
RAILS = 8
K = 3
STEP = 30  # seconds between samples, as a 30 s scrape interval writes them
LEVEL_STEP = 10  # seconds between the evaluation times of successive rule levels
LINE_RATE = 5e10  # bytes/s of a 4X NDR port, the fixture's rail_port_rate_bytes_per_second
TRAFFIC = 5e9  # bytes/s each rail of a host moves, each way
# The quick start's probes (docs/fleet.md): (kind, message size, interval in seconds, memory).
PROBES = (("ucx_rtt", 8, 60, None), ("ucx_rtt", 4096, 60, None),
          ("ucx_throughput", 1048576, 600, "host"))
AGENT_VERSION, UCX_VERSION = "0.1.0", "1.13.1"
# Families of the agent's scrape that this script writes per host from the simulated plan
# instead of copying them.
REGENERATED = ("rail_fleet_rail_throughput_median_bytes_per_second",
               "rail_fleet_rail_rtt_worst_seconds", "rail_fleet_rail_peers")


class BenchError(Exception):
    pass


def run(argv, **kwargs):
    """A command that must succeed: its stdout, or BenchError with its output."""
    result = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        raise BenchError("%s failed (exit %d): %s" % (" ".join(argv[:4]), result.returncode,
                                                      (result.stderr or result.stdout)[-3000:]))
    return result.stdout


def http_json(url, timeout=600):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise BenchError("GET %s: HTTP %d %s" % (url[:300], error.code, error.read()[:2000]))


# ---------------------------------------------------------------------------------------------
# The real agent's scrape


def agent_config(work, responder_port):
    """The agent's configuration: 8 named rails, the fleet of itself and three loopback targets
    that refuse every probe, the quick start's probes (first runs within a second)."""
    secret = os.path.join(work, "secret")
    with open(secret, "w", encoding="utf-8") as f:
        f.write("fleet-rules-scale-secret\n")
    os.chmod(secret, 0o600)
    peers = os.path.join(work, "peers.json")
    with open(peers, "w", encoding="utf-8") as f:
        json.dump([{"targets": ["127.0.0.%d:%d" % (i, responder_port) for i in range(1, 5)]}], f)
    config = {
        "rails": [{"name": "rail%d" % i, "device": "mlx5_%d" % i} for i in range(RAILS)],
        "responder": {"listen_address": "127.0.0.1:%d" % responder_port, "secret_file": secret},
        "fleet": {"self": "127.0.0.1:%d" % responder_port, "peers_per_rail": K,
                  "discovery": {"file_sd": [{"files": [peers]}]}},
        # The quick start's probes over 8 rails need more than the default 1 TiB an hour.
        "budget": {"max_bytes_per_hour": 4 * 2**40},
        "probes": [{"kind": "ucx_rtt", "interval": "1m", "jitter": 0.01},
                   {"kind": "ucx_throughput", "duration": "1s", "timeout": "5s",
                    "interval": "10m", "jitter": 0.01}],
    }
    path = os.path.join(work, "agent.yaml")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)  # JSON is YAML
    return path


def agent_scrape(binary, work):
    """The agent's /metrics once every planned series has run (72 with k = 3 on 8 rails)."""
    web_port, responder_port = free_ports(2)
    config = agent_config(work, responder_port)
    log = open(os.path.join(work, "agent.log"), "w", encoding="utf-8")
    agent = subprocess.Popen([binary, "--path.sysfs=" + os.path.join(FIXTURE, "sys"),
                              "--path.procfs=" + os.path.join(FIXTURE, "proc"),
                              "--config.file=" + config, "--log.level=error",
                              "--web.listen-address=127.0.0.1:%d" % web_port],
                             stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if agent.poll() is not None:
                raise BenchError("rail_exporter exited %d: see %s" % (agent.returncode, log.name))
            try:
                text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % web_port,
                                              timeout=10).read().decode()
            except OSError:
                time.sleep(0.2)
                continue
            if text.count("\nrail_probe_runs_total{") == K * RAILS * len(PROBES):
                return text
            time.sleep(0.5)
        raise BenchError("the agent did not run every planned probe within 90 s")
    finally:
        stop_process(agent)
        log.close()


LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")


def parse_exposition(text):
    """[(family, sample name, label text, {label: value}, value)] and {family: type}."""
    types, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        match = SAMPLE.match(line)
        if not match:
            continue
        name, label_text, value = match.group(1), match.group(2) or "", float(match.group(3))
        family = name
        for suffix in ("_bucket", "_count", "_sum"):
            if name.endswith(suffix) and types.get(name[:-len(suffix)]) == "histogram":
                family = name[:-len(suffix)]
        samples.append((family, name, label_text, dict(LABEL.findall(label_text)), value))
    return samples, types


# ---------------------------------------------------------------------------------------------
# The simulated fleet


def address(index):
    return "10.%d.%d.%d" % (index // 62500, index // 250 % 250, index % 250 + 1)


class Fleet:
    """n hosts, a ring per rail (each host probes the next K), the sick (host, rail) pairs and
    the hosts with faults."""

    def __init__(self, n, sick_share, seed):
        self.n = n
        rng = random.Random(seed)
        self.rings = []
        for _ in range(RAILS):
            order = list(range(n))
            rng.shuffle(order)
            self.rings.append(order)
        self.position = [{host: i for i, host in enumerate(ring)} for ring in self.rings]
        pairs = [(h, r) for h in range(n) for r in range(RAILS)]
        count = max(1, round(sick_share * len(pairs)))
        chosen = rng.sample(pairs, 2 * count)
        self.slow, self.failing = set(chosen[:count]), set(chosen[count:])
        self.faulty = set(rng.sample(range(n), max(1, round(sick_share * n))))

    def peers(self, host, rail):
        ring, i = self.rings[rail], self.position[rail][host]
        return [ring[(i + j) % self.n] for j in range(1, K + 1)]

    def probers(self, host, rail):
        ring, i = self.rings[rail], self.position[rail][host]
        return [ring[(i - j) % self.n] for j in range(1, K + 1)]

    def state(self, peer, rail):
        if (peer, rail) in self.failing:
            return "failing"
        return "slow" if (peer, rail) in self.slow else "ok"


# ---------------------------------------------------------------------------------------------
# The series of one simulated host. A series is (family, "name{labels}", mode, value, rate):
# mode "c" a constant, "n" a counter (value + rate x seconds since the first sample), "a" a
# timestamp that many seconds old.


def histogram_bounds():
    """The agent's rail_probe_rtt_seconds bounds (src/probe/stats.cc): 1 us x 1.5^i to 10 s."""
    bounds, i = [], 0
    while 1e-6 * 1.5 ** i < 10 * (1 - 1e-12):
        bounds.append(1e-6 * 1.5 ** i)
        i += 1
    return bounds + [10.0]


BOUNDS = histogram_bounds()


def number(value):
    return "%d" % value if value == int(value) and abs(value) < 1e15 else repr(value)


def labels_text(pairs):
    return ",".join('%s="%s"' % item for item in pairs)


class HostTemplate:
    """The agent's host-level series (every sample without a peer), as (family, name, label
    text, labels, value), their types, and the label names of its per-peer series by name."""

    def __init__(self, text, scraped_at, work):
        samples, self.types = parse_exposition(text.replace(work, "/etc/rail_exporter"))
        self.scraped_at = scraped_at
        self.host = [s for s in samples if not s[3].get("peer") and s[0] not in REGENERATED]
        self.peer_label_names = {}
        for _, name, _, labels, _ in samples:
            if labels.get("peer"):
                self.peer_label_names.setdefault(name, set()).add(tuple(labels))

    def series(self, fleet, host, prefix):
        """This host's copies of the agent's host-level series."""
        faulty = host in fleet.faulty
        for family, name, text, labels, value in self.host:
            if name == "rail_check_info" and not faulty:
                continue  # reasons exist only for failing checks
            if name == "rail_check_ok" and value == 0 and not faulty:
                value = 1
            if name in ("rail_fleet_peers", "rail_fleet_discovery_targets"):
                value = fleet.n
            full = "%s{%s%s}" % (name, prefix, "," + text if text else "")
            yield (family,) + (full,) + self.evolution(family, name, labels, value, host, fleet)

    def evolution(self, family, name, labels, value, host, fleet):
        if "timestamp" in name:
            return ("a", self.scraped_at - value, 0)
        if name == "process_start_time_seconds":
            return ("c", self.scraped_at - 86400, 0)  # started a day ago
        if self.types.get(family) not in ("counter", "histogram"):
            return ("c", value, 0)
        device = labels.get("device", "")
        if device.startswith("mlx5_") and ("_bytes_" in name or "_packets_" in name):
            rate = traffic(fleet, host, int(device[5:]))
            return ("n", value, rate if "_bytes_" in name else rate / 4096)
        return ("n", value, 0)


def traffic(fleet, host, rail):
    """Bytes/s a rail of a host moves each way: even (within 5%), or on a faulty host rail0
    carries a fifth of its share (RailImbalance)."""
    if host in fleet.faulty and rail == 0:
        return TRAFFIC * 0.2
    return TRAFFIC * (0.95 + 0.1 * ((host * 7 + rail * 13) % 11) / 10)


def probe_keys(peer, rail):
    """(kind, interval, label pairs of the series, label pairs of its last run) of each of the
    quick start's probe series of one (peer, rail)."""
    for kind, size, interval, memory in PROBES:
        series = [("kind", kind), ("peer", peer), ("rail", rail), ("size", str(size))]
        last = list(series)
        if memory:
            series.append(("memory", memory))
            last += [("memory", memory), ("memory_path", memory)]
        yield kind, interval, series, last


def rtt_figures(slow):
    """(min, p50, p90, p99, p99.9, max) of a run's round trips, seconds."""
    scale = 3.0 if slow else 1.0
    return [v * scale for v in (2.5e-6, 3e-6, 3.5e-6, 5e-6, 8e-6, 2e-5)]


def throughput(state, host, peer, rail):
    if state == "slow":
        return 0.3 * LINE_RATE
    return 0.9 * LINE_RATE * (0.97 + 0.06 * ((host * 31 + peer * 17 + rail) % 13) / 12)


class Series:
    """Collects one host's series under its target labels."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.items = []

    def add(self, family, name, text, mode="c", value=1.0, rate=0.0):
        self.items.append((family, "%s{%s,%s}" % (name, self.prefix, text), mode, value, rate))


def add_histogram(out, series_text, slow):
    """rail_probe_rtt_seconds of a ucx_rtt series: ~5,000 round trips a second of probing."""
    scale = 3.0 if slow else 1.0
    low, high = math.log(2e-6 * scale), math.log(2e-5 * scale)
    count0, rate = 3e8, 5000.0
    for bound in BOUNDS + [math.inf]:
        share = 1.0 if bound == math.inf else min(1.0, max(0.0, (math.log(bound) - low) /
                                                               (high - low)))
        le = "+Inf" if bound == math.inf else number(bound)
        out.add("rail_probe_rtt_seconds", "rail_probe_rtt_seconds_bucket",
                '%s,le="%s"' % (series_text, le), "n", count0 * share, rate * share)
    out.add("rail_probe_rtt_seconds", "rail_probe_rtt_seconds_count", series_text, "n", count0,
            rate)
    out.add("rail_probe_rtt_seconds", "rail_probe_rtt_seconds_sum", series_text, "n",
            count0 * 3.2e-6 * scale, rate * 3.2e-6 * scale)


def add_last_run(out, kind, last, figures):
    """The gauges of a successful current run (SeriesFamilies::AddLastRun)."""
    seconds, moved, tput, rtt, device = figures
    for name, value in (("rail_probe_duration_seconds", seconds), ("rail_probe_bytes", moved)):
        out.add(name, name, last, "c", value)
    out.add("rail_probe_cpu_seconds", "rail_probe_cpu_seconds", last + ',side="local"', "c", 0.5)
    out.add("rail_probe_cpu_seconds", "rail_probe_cpu_seconds", last + ',side="peer"', "c", 0.4)
    out.add("rail_probe_rail_transmit_bytes", "rail_probe_rail_transmit_bytes", last, "c",
            moved * 1.03)
    out.add("rail_probe_other_rails_transmit_bytes", "rail_probe_other_rails_transmit_bytes",
            last, "c", 0)
    if kind == "ucx_throughput":
        out.add("rail_probe_throughput_bytes_per_second",
                "rail_probe_throughput_bytes_per_second", last, "c", tput)
        for stat, factor in (("min", 0.95), ("max", 1.05)):
            out.add("rail_probe_interval_throughput_bytes_per_second",
                    "rail_probe_interval_throughput_bytes_per_second",
                    last + ',stat="%s"' % stat, "c", tput * factor)
        out.add("rail_probe_throughput_cv", "rail_probe_throughput_cv", last, "c", 0.02)
    else:
        for stat, value in zip(("min", "p50", "p90", "p99", "p99.9", "max"), rtt):
            out.add("rail_probe_rtt_run_seconds", "rail_probe_rtt_run_seconds",
                    last + ',stat="%s"' % stat, "c", value)
    out.add("rail_probe_transport_info", "rail_probe_transport_info",
            last + ',transport="rc_mlx5",device="%s"' % device, "c", 1)


def add_pair(out, fleet, host, rail, peer):
    """Everything the agent exports about probing `peer` on `rail`: the three series of the
    quick start's probes and the pair's checks."""
    state = fleet.state(peer, rail)
    rail_name, target = "rail%d" % rail, address(peer) + ":9841"
    tput = throughput(state, host, peer, rail)
    for kind, interval, series, last in probe_keys(target, rail_name):
        text, last_text = labels_text(series), labels_text(last)
        out.add("rail_probe_runs_total", "rail_probe_runs_total", text, "n", 3e4 / interval,
                1.0 / interval)
        if state == "failing":
            out.add("rail_probe_errors_total", "rail_probe_errors_total",
                    text + ',reason="refused"', "n", 6e3 / interval, 1.0 / interval)
        out.add("rail_probe_last_run_timestamp_seconds", "rail_probe_last_run_timestamp_seconds",
                text, "a", interval / 2)
        out.add("rail_probe_success", "rail_probe_success", last_text, "c",
                0 if state == "failing" else 1)
        if state == "failing":
            continue
        if kind == "ucx_rtt":
            add_histogram(out, text, state == "slow")
        moved = tput if kind == "ucx_throughput" else 4e7
        add_last_run(out, kind, last_text, (1.0 if kind == "ucx_throughput" else 2.0, moved,
                                             tput, rtt_figures(state == "slow"),
                                             "mlx5_%d:1" % rail))
    add_pair_checks(out, state, rail_name, target)


def add_pair_checks(out, state, rail_name, target):
    pair = 'rail="%s",peer="%s"' % (rail_name, target)
    out.add("rail_check_ok", "rail_check_ok", 'check="probe_failing",' + pair, "c",
            0 if state == "failing" else 1)
    if state == "failing":
        out.add("rail_check_info", "rail_check_info", 'check="probe_failing",%s,reason="the last '
                '3 runs failed: refused: connect to %s: Connection refused"' % (pair, target))
        return
    out.add("rail_fallback_tcp", "rail_fallback_tcp", pair, "c", 0)
    out.add("rail_check_ok", "rail_check_ok", 'check="probe_throughput",' + pair, "c",
            0 if state == "slow" else 1)
    out.add("rail_check_ok", "rail_check_ok", 'check="transport_fallback",' + pair, "c", 1)
    if state == "slow":
        out.add("rail_check_info", "rail_check_info", 'check="probe_throughput",%s,reason="'
                'ucx_throughput at 1048576 B: 15 GB/s, below 50%% of the line rate"' % pair)


def add_peers(out, fleet, host):
    """Per peer, not per rail: versions and names of the peers this host reached, and the
    responder's view of the probers that reached it."""
    reached = {p for r in range(RAILS) for p in fleet.peers(host, r)
               if fleet.state(p, r) != "failing"}
    for peer in sorted(reached):
        target = address(peer) + ":9841"
        out.add("rail_peer_info", "rail_peer_info", 'peer="%s",agent_version="%s",ucx_version="%s"'
                % (target, AGENT_VERSION, UCX_VERSION))
        out.add("rail_peer_version_mismatch", "rail_peer_version_mismatch",
                'peer="%s"' % target, "c", 0)
        out.add("rail_check_ok", "rail_check_ok", 'check="peer_version",rail="",peer="%s"' % target)
        out.add("rail_fleet_peer_info", "rail_fleet_peer_info",
                'peer="%s",name="node%05d"' % (target, peer))
    probers = {q for r in range(RAILS) if fleet.state(host, r) != "failing"
               for q in fleet.probers(host, r)}
    for prober in sorted(probers):
        out.add("rail_responder_peer_info", "rail_responder_peer_info",
                'peer="%s",agent_version="%s",ucx_version="%s",authenticated="true"'
                % (address(prober), AGENT_VERSION, UCX_VERSION))
        out.add("rail_responder_peer_version_mismatch", "rail_responder_peer_version_mismatch",
                'peer="%s"' % address(prober), "c", 0)


def add_rail_summaries(out, fleet, host, rail):
    """rail_fleet_rail_*: the rail's planned peers by their latest results (AddRailSummaries)."""
    rail_name = "rail%d" % rail
    states = [(p, fleet.state(p, rail)) for p in fleet.peers(host, rail)]
    good = [(p, s) for p, s in states if s != "failing"]
    if good:
        out.add("rail_fleet_rail_throughput_median_bytes_per_second",
                "rail_fleet_rail_throughput_median_bytes_per_second",
                'kind="ucx_throughput",rail="%s",memory="host"' % rail_name, "c",
                statistics.median(throughput(s, host, p, rail) for p, s in good))
        out.add("rail_fleet_rail_rtt_worst_seconds", "rail_fleet_rail_rtt_worst_seconds",
                'kind="ucx_rtt",rail="%s"' % rail_name, "c",
                max(rtt_figures(s == "slow")[3] for _, s in good))
    for kind in ("ucx_rtt", "ucx_throughput"):
        for state, count in (("ok", len(good)), ("failed", len(states) - len(good))):
            out.add("rail_fleet_rail_peers", "rail_fleet_rail_peers",
                    'kind="%s",rail="%s",state="%s"' % (kind, rail_name, state), "c", count)


def host_series(fleet, template, host):
    """(every series of one host as Prometheus stores it, how many the agent exports)."""
    out = Series('instance="%s:9840",job="%s"' % (address(host), JOB))
    out.items.extend(template.series(fleet, host, out.prefix))
    for rail in range(RAILS):
        for peer in fleet.peers(host, rail):
            add_pair(out, fleet, host, rail, peer)
        add_rail_summaries(out, fleet, host, rail)
    add_peers(out, fleet, host)
    exported = len(out.items)
    for name, value in (("up", 1), ("scrape_duration_seconds", 0.05),
                        ("scrape_samples_scraped", exported),
                        ("scrape_samples_post_metric_relabeling", exported),
                        ("scrape_series_added", 0)):
        out.items.append((name, "%s{%s}" % (name, out.prefix), "c", value, 0))
    return out.items, exported


def check_failing_pair(template):
    """The label names of a failing pair's series must be the agent's own (its scrape has only
    failing pairs); rail_check_info comes only after health.probe_failing_runs failures."""
    fleet = Fleet(K + 1, 0, 1)
    fleet.failing = {(peer, 0) for peer in range(K + 1)}
    out = Series('instance="x"')
    add_pair(out, fleet, 0, 0, fleet.peers(0, 0)[0])
    ours = {}
    for _, text, _, _, _ in out.items:
        name, label_text = text[:-1].split("{", 1)
        names = tuple(n for n, _ in LABEL.findall(label_text) if n != "instance")
        ours.setdefault(name, set()).add(names)
    ours.pop("rail_check_info", None)
    if ours != template.peer_label_names:
        raise BenchError("the simulated failing pair's series differ from the agent's:\n ours %s"
                         "\n agent's %s" % (sorted(ours.items()),
                                            sorted(template.peer_label_names.items())))


# ---------------------------------------------------------------------------------------------
# OpenMetrics files and blocks


DURATION = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{[^}]*\})?\s*\[(\d+)([smhd])\]")


def range_windows(rules):
    """{family: seconds} of the largest range each family is read over in the rules."""
    windows = {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            for name, count, unit in DURATION.findall(rule["expr"]):
                seconds = int(count) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
                windows[name] = max(windows.get(name, 0), seconds)
    return windows


class Grid:
    """Sample times ending at t0: a family read over a range gets that range plus a minute,
    the others the last minute."""

    def __init__(self, t0, windows):
        self.t0 = t0
        self.windows = windows
        self.longest = max(windows.values()) + 60
        self.times = {}

    def times_of(self, family):
        span = self.windows.get(family, 0) + 60
        if span not in self.times:
            times = list(range(self.t0 - span // STEP * STEP, self.t0 + 1, STEP))
            self.times[span] = [(t, " %d\n" % t) for t in times]
        return self.times[span]

    def lines(self, family, text, mode, value, rate):
        times = self.times_of(family)
        if mode == "c":
            head = "%s %s" % (text, number(value))
            return [head + stamp for _, stamp in times]
        if mode == "a":
            return ["%s %s%s" % (text, number(t - value), stamp) for t, stamp in times]
        first = self.t0 - self.longest
        return ["%s %s%s" % (text, number(round(value + rate * (t - first), 3)), stamp)
                for t, stamp in times]


def write_files(directory, fleet, template, grid, hosts_per_file):
    """OpenMetrics files of hosts_per_file hosts each; (paths, agent series per host (list),
    series written, samples written)."""
    paths, per_host, series, samples = [], [], 0, 0
    for first in range(0, fleet.n, hosts_per_file):
        path = os.path.join(directory, "hosts-%05d.om" % first)
        with open(path, "w", encoding="utf-8", buffering=4 << 20) as f:
            for host in range(first, min(fleet.n, first + hosts_per_file)):
                items, exported = host_series(fleet, template, host)
                per_host.append(exported)
                series += len(items)
                for item in items:
                    lines = grid.lines(*item)
                    samples += len(lines)
                    f.writelines(lines)
            f.write("# EOF\n")
        paths.append(path)
    return paths, per_host, series, samples


def backfill(paths, blocks, parallel):
    """promtool tsdb create-blocks-from openmetrics for each file, `parallel` at once, into
    `blocks`; the peak RSS of one promtool (KiB) from GNU time if there, else None."""
    pending, running, peak = list(paths), [], 0
    while pending or running:
        while pending and len(running) < parallel:
            path = pending.pop(0)
            out = tempfile.mkdtemp(prefix="out-", dir=os.path.dirname(path))
            argv = [PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", "-q", path, out]
            if os.access("/usr/bin/time", os.X_OK):
                argv = ["/usr/bin/time", "-f", "maxrss=%M"] + argv
            running.append((subprocess.Popen(argv, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True), path, out))
        proc, path, out = running.pop(0)
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            raise BenchError("promtool create-blocks-from openmetrics %s: %s"
                             % (path, (stderr or stdout)[-3000:]))
        match = re.search(r"maxrss=(\d+)", stderr)
        peak = max(peak, int(match.group(1)) if match else 0)
        for block in os.listdir(out):
            shutil.move(os.path.join(out, block), os.path.join(blocks, block))
        os.rmdir(out)
        os.remove(path)
    return peak or None


# ---------------------------------------------------------------------------------------------
# Prometheus


class Prometheus:
    """Debian's prometheus on a free 127.0.0.1 port with storage `path`; only 2 h blocks (no
    merging of adjacent blocks; overlapping ones are still merged, once)."""

    def __init__(self, path, config):
        self.port = free_ports(1)[0]
        self.url = "http://127.0.0.1:%d" % self.port
        self.log = open(path.rstrip("/") + ".log", "a", encoding="utf-8")
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + config, "--storage.tsdb.path=" + path,
             "--storage.tsdb.retention.time=30d", "--storage.tsdb.min-block-duration=2h",
             "--storage.tsdb.max-block-duration=2h", "--web.listen-address=127.0.0.1:%d"
             % self.port, "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=self.log,
            env=dict(os.environ, GOGC="100"))  # Go's default, stated: live_heap relies on it
        self.wait_ready()
        self.startup_seconds = time.monotonic() - started

    def wait_ready(self, seconds=600):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError("prometheus exited %d (log: %s)" % (self.proc.returncode,
                                                                    self.log.name))
            try:
                urllib.request.urlopen(self.url + "/-/ready", timeout=5).read()
                return
            except OSError:
                time.sleep(0.2)
        raise BenchError("prometheus not ready within %d s (log: %s)" % (seconds, self.log.name))

    def query(self, expr, at):
        """(seconds of the HTTP round trip, the API's data) of an instant query with stats."""
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode(
            {"query": expr, "time": "%d" % at, "stats": "all"})
        started = time.perf_counter()
        reply = http_json(url)
        elapsed = time.perf_counter() - started
        if reply.get("status") != "success":
            raise BenchError("query %s: %s" % (expr[:200], reply))
        return elapsed, reply["data"]

    def own(self, name):
        """A sample of Prometheus's own /metrics (the sum over its label sets)."""
        text = urllib.request.urlopen(self.url + "/metrics", timeout=60).read().decode()
        values = re.findall(r"^%s(?:\{[^}]*\})? (\S+)$" % re.escape(name), text, re.M)
        return sum(float(v) for v in values) if values else None

    def memory(self):
        """VmRSS and VmHWM (bytes) of the process, its Go heap in use (garbage not yet
        collected included) and its live heap: with GOGC=100 the collector aims the next
        collection at twice what the last one left (go_memstats_next_gc_bytes / 2)."""
        with open("/proc/%d/status" % self.proc.pid, encoding="ascii") as f:
            fields = dict(line.split(":", 1) for line in f)
        kib = lambda key: int(fields[key].split()[0]) * 1024  # noqa: E731
        return {"rss": kib("VmRSS"), "hwm": kib("VmHWM"),
                "heap_inuse": self.own("go_memstats_heap_inuse_bytes"),
                "live_heap": self.own("go_memstats_next_gc_bytes") / 2}

    def wait_one_block(self, seconds=1800):
        """Waits until the overlapping blocks are merged (one block loaded); returns seconds."""
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if self.proc.poll() is not None:
                raise BenchError("prometheus exited %d while merging blocks (log: %s)"
                                 % (self.proc.returncode, self.log.name))
            if self.own("prometheus_tsdb_blocks_loaded") == 1:
                return time.monotonic() - started
            time.sleep(2)
        raise BenchError("the blocks were not merged within %d s" % seconds)

    def stop(self):
        stop_process(self.proc, grace=60)
        self.log.close()


def prometheus_config(work, scrape=None):
    """A configuration loading rail_rules.yml (so that Prometheus validates it); `scrape`: a
    scrape config to add."""
    config = {"global": {"scrape_interval": "5s", "evaluation_interval": "1m"},
              "rule_files": [RULES], "scrape_configs": [scrape] if scrape else []}
    path = os.path.join(work, "prometheus-%d.yml" % (1 if scrape else 0))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return path


# ---------------------------------------------------------------------------------------------
# Rules


def rule_levels(rules):
    """[(group, rule, level)] in file order: a recording rule reading no recorded series is
    level 1, one reading level-n outputs level n + 1; alerts are level 0."""
    levels, out = {}, []
    for group in rules["groups"]:
        for rule in group["rules"]:
            reads = [levels[name] for name in levels
                     if re.search(r"(?<![\w:])%s(?![\w:])" % re.escape(name), rule["expr"])]
            level = 1 + max(reads, default=0) if "record" in rule else 0
            if "record" in rule:
                levels[rule["record"]] = max(level, levels.get(rule["record"], 0))
            out.append((group["name"], rule, level))
    return out


def backfill_rule_level(prometheus, rules, level, at, work, blocks):
    """promtool tsdb create-blocks-from rules for the recording rules of one level, evaluated
    once at `at`; the blocks go to `blocks`."""
    chosen = [rule for _, rule, n in rules if n == level]
    path = os.path.join(work, "level-%d.yml" % level)
    # An interval of 1 s: promtool evaluates a group at its own offset (from a hash of its
    # name) after --start, here within the second after `at`, once.
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": [{"name": "level-%d" % level, "interval": "1s",
                                    "rules": [{"record": r["record"], "expr": r["expr"]}
                                              for r in chosen]}]}, f)
    out = os.path.join(work, "rules-out")
    shutil.rmtree(out, ignore_errors=True)
    run([PROMTOOL, "tsdb", "create-blocks-from", "rules", "-q", "--url", prometheus.url,
         "--start", "%d" % at, "--end", "%d" % (at + 1), "--output-dir", out, path])
    for block in os.listdir(out) if os.path.isdir(out) else []:
        shutil.move(os.path.join(out, block), os.path.join(blocks, block))
    shutil.rmtree(out, ignore_errors=True)
    os.remove(path)


def rule_name(rule):
    return rule.get("record") or rule["alert"]


def timed_query(prometheus, expr, at):
    """(evalTotalTime, round trip, data) of one query."""
    trip, data = prometheus.query(expr, at)
    timings = data.get("stats", {}).get("timings", {})
    if "evalTotalTime" not in timings:
        raise BenchError("this Prometheus returns no stats timings (stats=all)")
    return timings["evalTotalTime"], trip, data


def measure_rules(prometheus, rules, t0, repeats):
    """{rule name: figures}: recording rules at their level's time, alerts after the last.
    One warm-up pass over every rule, then `repeats` passes (so that what else runs on the
    machine spreads over all rules rather than one): median and minimum of Prometheus's
    evalTotalTime, median round trip, the series returned, the samples touched."""
    last = max(level for _, _, level in rules)
    at = {rule_name(rule): t0 + LEVEL_STEP * (level if level else last + 1)
          for _, rule, level in rules}
    runs = {name: [] for name in at}
    for attempt in range(repeats + 1):
        for _, rule, _ in rules:
            measured = timed_query(prometheus, rule["expr"], at[rule_name(rule)])
            if attempt:
                runs[rule_name(rule)].append(measured)
    figures = {}
    for group, rule, level in rules:
        measured = runs[rule_name(rule)]
        data = measured[-1][2]
        figures[rule_name(rule)] = {
            "eval_s": statistics.median(m[0] for m in measured),
            "eval_min_s": min(m[0] for m in measured),
            "http_s": statistics.median(m[1] for m in measured),
            "series": len(data["result"]) if isinstance(data["result"], list) else 1,
            "samples": data.get("stats", {}).get("samples", {}).get("totalQueryableSamples"),
            "group": group, "level": level, "kind": "record" if level else "alert"}
        if level:
            check_recorded(prometheus, rule["record"], figures[rule_name(rule)],
                           t0 + LEVEL_STEP * (last + 1))
    return figures


def check_recorded(prometheus, record, row, at):
    """What the backfill recorded, as the alerts read it: the series the rule returns."""
    _, data = prometheus.query('count({__name__="%s"})' % record, at)
    row["recorded"] = int(float(data["result"][0]["value"][1])) if data["result"] else 0
    if row["recorded"] != row["series"]:
        print("warning: %s returns %d series at its level's time, %d were recorded"
              % (record, row["series"], row["recorded"]), file=sys.stderr)


class HeadMemory:
    """Serves the current values of `hosts` simulated hosts (no timestamps) at /metrics/<i>."""

    def __init__(self, fleet, template, hosts):
        self.bodies = {}
        for host in range(hosts):
            items, _ = host_series(fleet, template, host)
            lines = []
            for family, text, mode, value, rate in items:
                if family in ("up",) or family.startswith("scrape_"):
                    continue
                name, labels = text[:-1].split("{", 1)
                labels = labels.split(",", 2)[2] if labels.count(",") >= 2 else ""
                shown = value if mode != "a" else time.time() - value
                lines.append("%s%s %s\n" % (name, "{%s}" % labels if labels else "",
                                             number(shown)))
            self.bodies[host] = "".join(lines).encode()
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = bodies.get(int(self.path.rsplit("/", 1)[1]))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def scrape_config(self):
        port = self.server.server_address[1]
        return {"job_name": JOB, "scrape_interval": "5s", "metrics_path": "/metrics/x",
                "static_configs": [{"targets": ["127.0.0.1:%d" % port],
                                    "labels": {"instance": "%s:9840" % address(h),
                                               "__metrics_path__": "/metrics/%d" % h}}
                                   for h in self.bodies]}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def head_memory(fleet, template, hosts, work):
    """The head's cost per active series: Prometheus's Go heap (in use, and live) and RSS
    before and after it scrapes `hosts` simulated hosts every 5 s for 25 s."""
    storage = os.path.join(work, "head")
    os.makedirs(storage)
    server = HeadMemory(fleet, template, hosts)
    prometheus = None
    try:
        config = prometheus_config(work)
        prometheus = Prometheus(storage, config)
        time.sleep(5)
        before = settled(prometheus)
        with open(config, "w", encoding="utf-8") as f:
            json.dump({"global": {"scrape_interval": "5s"}, "rule_files": [RULES],
                       "scrape_configs": [server.scrape_config()]}, f)
        prometheus.proc.send_signal(1)  # SIGHUP: reload, now with the targets
        time.sleep(25)
        series = prometheus.own("prometheus_tsdb_head_series")
        after = settled(prometheus)
        return {"hosts": hosts, "head_series": series,
                "heap_per_series": (after["heap_inuse"] - before["heap_inuse"]) / series,
                "live_per_series": (after["live_heap"] - before["live_heap"]) / series,
                "rss_per_series": (after["rss"] - before["rss"]) / series,
                "before": before, "after": after}
    finally:
        if prometheus:
            prometheus.stop()
        server.stop()


def settled(prometheus):
    """Medians of 5 readings of memory(), 2 s apart (the Go heap moves with each collection)."""
    readings = []
    for _ in range(5):
        readings.append(prometheus.memory())
        time.sleep(2)
    return {key: statistics.median(r[key] for r in readings) for key in readings[0]}


def directory_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path)
               for f in files)


def size_run(n, args, template, rules, windows):
    """Every figure at n hosts."""
    work = tempfile.mkdtemp(prefix="fleet_rules_%d-" % n, dir=args.tmp)
    result = {"hosts": n}
    try:
        fleet = Fleet(n, args.sick, args.seed)
        t0 = int(time.time()) // 7200 * 7200 - 600  # 10 min before a 2 h boundary: one block
        grid = Grid(t0, windows)
        blocks = os.path.join(work, "data")
        os.makedirs(blocks)
        started = time.monotonic()
        paths, per_host, series, samples = write_files(work, fleet, template, grid,
                                                       args.hosts_per_file)
        result.update(t0=t0, series=series, samples=samples, write_s=time.monotonic() - started,
                      agent_series_per_host=statistics.mean(per_host),
                      agent_series_per_host_min=min(per_host),
                      agent_series_per_host_max=max(per_host), files=len(paths))
        progress(n, "wrote %d series, %d samples in %d files (%.0f s)"
                 % (series, samples, len(paths), result["write_s"]))
        started = time.monotonic()
        result["promtool_peak_rss"] = backfill(paths, blocks, args.parallel)
        result["backfill_s"] = time.monotonic() - started
        progress(n, "blocks written (%.0f s)" % result["backfill_s"])
        result.update(evaluate(n, args, rules, work, blocks, t0, per_host[0]))
        result["blocks_bytes"] = directory_bytes(blocks)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def evaluate(n, args, rules, work, blocks, t0, first_host_series):
    """Merges the blocks, backfills the rule levels, restarts and times every rule."""
    result = {}
    config = prometheus_config(work)
    prometheus = Prometheus(blocks, config)
    try:
        result["merge_s"] = prometheus.wait_one_block()
        progress(n, "blocks merged (%.0f s)" % result["merge_s"])
        for level in range(1, max(level for _, _, level in rules) + 1):
            backfill_rule_level(prometheus, rules, level, t0 + LEVEL_STEP * level, work, blocks)
            prometheus.stop()
            prometheus = Prometheus(blocks, config)
        progress(n, "recording rules backfilled; Prometheus restarted in %.1f s"
                 % prometheus.startup_seconds)
        result["startup_s"] = prometheus.startup_seconds
        result["memory_loaded"] = settled(prometheus)
        _, data = prometheus.query('count({instance="%s:9840"})' % address(0), t0)
        result["stored_series_first_host"] = int(float(data["result"][0]["value"][1]))
        if result["stored_series_first_host"] != first_host_series + 5:
            raise BenchError("Prometheus holds %d series of the first host, %d were written"
                             % (result["stored_series_first_host"], first_host_series + 5))
        result["rules"] = measure_rules(prometheus, rules, t0, args.repeats)
        result["memory_after_rules"] = settled(prometheus)
        progress(n, "rules timed")
    finally:
        prometheus.stop()
    return result


def progress(n, text):
    print("[%s hosts] %s" % (format(n, ","), text), flush=True)


# ---------------------------------------------------------------------------------------------
# Extrapolation and report


TARGET = 10000


def grow(n1, v1, n2, v2, target=TARGET):
    """(exponent b, v2 x (target / n2)^b); b is 1 where a value is too small to tell."""
    if v1 is None or v2 is None or v1 <= 0 or v2 <= 0:
        return None, None
    b = math.log(v2 / v1) / math.log(n2 / n1)
    return b, v2 * (target / n2) ** b


def summary(results):
    """Series, memory and per-rule times at each size, with growth and the value at TARGET."""
    small, large = results[0], results[-1]
    n1, n2 = small["hosts"], large["hosts"]
    out = {"sizes": [r["hosts"] for r in results], "rules": {}, "flagged": []}
    linear = lambda v: v * TARGET / n2  # noqa: E731
    out["series_target"] = linear(large["series"])
    for key in ("rss", "heap_inuse"):
        for when in ("memory_loaded", "memory_after_rules"):
            b, at = grow(n1, small[when][key], n2, large[when][key])
            out["%s_%s" % (when, key)] = {"exponent": b, "target": at}
    for name, row in large["rules"].items():
        t1, t2 = small["rules"][name]["eval_s"], row["eval_s"]
        b, at = grow(n1, t1, n2, t2)
        b_min, _ = grow(n1, small["rules"][name]["eval_min_s"], n2, row["eval_min_s"])
        out["rules"][name] = {"exponent": b, "exponent_min": b_min, "target_s": at,
                              "ratio": t2 / t1 if t1 > 0 else None}
        if b is not None and b_min is not None and min(b, b_min) > 1.3 and \
                row["eval_min_s"] >= 0.010:
            out["flagged"].append(name)
    out["total"] = totals(results, lambda row: True)
    out["groups"] = {group: totals(results, lambda row, g=group: row["group"] == g)
                     for group in dict.fromkeys(r["group"] for r in large["rules"].values())}
    return out


def totals(results, chosen):
    """The summed medians of the chosen rules at each size, their growth and extrapolation."""
    sums = [sum(row["eval_s"] for row in r["rules"].values() if chosen(row)) for r in results]
    b, at = grow(results[0]["hosts"], sums[0], results[-1]["hosts"], sums[-1])
    return {"seconds": sums, "exponent": b, "target_s": at}


def mib(value):
    return "%.0f MiB" % (value / 2**20) if value is not None else "n/a"


def figures_table(results, head):
    sizes = [r["hosts"] for r in results]
    header = "| | " + " | ".join("%s hosts" % format(n, ",") for n in sizes) + " |"
    lines = [header, "|---|" + "---:|" * len(sizes)]
    rows = [("agent series per host", lambda r: "%.0f" % r["agent_series_per_host"]),
            ("series stored (with up and the other 4 per target)",
             lambda r: format(r["series"], ",")),
            ("samples backfilled", lambda r: format(r["samples"], ",")),
            ("blocks on disk", lambda r: mib(r["blocks_bytes"])),
            ("Prometheus RSS, blocks loaded", lambda r: mib(r["memory_loaded"]["rss"])),
            ("Go heap in use, blocks loaded", lambda r: mib(r["memory_loaded"]["heap_inuse"])),
            ("RSS after every rule query", lambda r: mib(r["memory_after_rules"]["rss"])),
            ("peak RSS (VmHWM)", lambda r: mib(r["memory_after_rules"]["hwm"])),
            ("Go heap in use after every rule query",
             lambda r: mib(r["memory_after_rules"]["heap_inuse"])),
            ("Prometheus start on the blocks", lambda r: "%.1f s" % r["startup_s"])]
    for label, cell in rows:
        lines.append("| %s | " % label + " | ".join(cell(r) for r in results) + " |")
    text = "\n".join(lines) + "\n"
    if head:
        text += head_line(head)
    return text


def head_line(head):
    return ("\nHead: %s hosts scraped, %s series in the head; per series %.0f bytes of live Go "
            "heap, %.0f of Go heap in use, %.0f of RSS.\n"
            % (head["hosts"], format(int(head["head_series"]), ","), head["live_per_series"],
               head["heap_per_series"], head["rss_per_series"]))


def rules_table(results, summ, top):
    """Every rule's median evaluation time at each size (the `top` slowest at the largest size
    first when top > 0), growth and the extrapolation."""
    large = results[-1]
    names = sorted(large["rules"], key=lambda name: -large["rules"][name]["eval_s"])
    if top:
        names = names[:top]
    sizes = [r["hosts"] for r in results]
    lines = ["| rule | " + " | ".join("%s hosts" % format(n, ",") for n in sizes) +
             " | ratio | exponent | at %s (extrapolated) | series returned (%s) |"
             % (format(TARGET, ","), format(sizes[-1], ",")),
             "|---|" + "---:|" * (len(sizes) + 4)]
    for name in names:
        s = summ["rules"][name]
        cells = ["%.1f ms" % (r["rules"][name]["eval_s"] * 1e3) for r in results]
        lines.append("| %s%s | %s | %s | %s | %s | %s |" % (
            name, " (flagged)" if name in summ["flagged"] else "", " | ".join(cells),
            "%.2f" % s["ratio"] if s["ratio"] else "n/a",
            "%.2f" % s["exponent"] if s["exponent"] is not None else "n/a",
            "%.1f ms" % (s["target_s"] * 1e3) if s["target_s"] is not None else "n/a",
            format(large["rules"][name]["series"], ",")))
    rows = [("group %s" % group, t) for group, t in summ["groups"].items()]
    for label, t in rows + [("all %d rules, one cycle" % len(large["rules"]), summ["total"])]:
        lines.append("| **%s** | %s | %.2f | %.2f | %.0f ms | |" % (
            label, " | ".join("%.1f ms" % (v * 1e3) for v in t["seconds"]),
            t["seconds"][-1] / t["seconds"][0], t["exponent"], t["target_s"] * 1e3))
    return "\n".join(lines) + "\n"


def plot(results, summ, path):
    """Left: each group's time per evaluation cycle and the total, measured (solid) and
    extrapolated to TARGET (dashed: by the measured exponent; dotted: linearly). Right: the
    eight slowest rules at the largest size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = [r["hosts"] for r in results]
    figure, axes = plt.subplots(1, 2, figsize=(13, 4.4))
    curves = list(summ["groups"].items()) + [("all rules", summ["total"])]
    for (label, t), color in zip(curves, ("C0", "C1", "C2", "black")):
        axes[0].plot(sizes, t["seconds"], marker="o", color=color, label=label)
        axes[0].plot([sizes[-1], TARGET], [t["seconds"][-1], t["target_s"]], "--", color=color)
        axes[0].plot([sizes[-1], TARGET], [t["seconds"][-1], t["seconds"][-1] * TARGET /
                                           sizes[-1]], ":", color=color)
    axes[0].axhline(60, color="grey", linewidth=0.8)
    axes[0].text(sizes[0], 62, "evaluation_interval 1m", fontsize=8, color="grey")
    axes[0].set_title("seconds per evaluation cycle (sum of the rules' medians)")
    axes[0].legend(fontsize=8)
    large = results[-1]["rules"]
    for name in sorted(large, key=lambda name: -large[name]["eval_s"])[:8]:
        axes[1].plot(sizes, [r["rules"][name]["eval_s"] for r in results], marker="o",
                     label=name)
    axes[1].set_title("the slowest rules (seconds, median)")
    axes[1].legend(fontsize=7)
    for axis in axes:
        axis.set_xlabel("hosts")
        axis.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def require_tools(rail_exporter):
    for tool in (PROMETHEUS, PROMTOOL):
        if not os.access(tool, os.X_OK):
            raise BenchError("%s is not installed (Debian package prometheus)" % tool)
    if not os.access(rail_exporter, os.X_OK):
        raise BenchError("%s is not an executable rail_exporter (--rail-exporter)"
                         % rail_exporter)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rail-exporter", required=True)
    parser.add_argument("--hosts", default="1000,3000",
                        help="fleet sizes, comma-separated (empty: the head's cost only)")
    parser.add_argument("--sick", type=float, default=0.005,
                        help="share of (host, rail) pairs slow, as many failing, and of hosts "
                             "with faults")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5, help="timed queries per rule")
    parser.add_argument("--hosts-per-file", type=int, default=200,
                        help="hosts per OpenMetrics file (promtool holds a file's series in "
                             "memory: about 3.4 KB each)")
    parser.add_argument("--parallel", type=int, default=2, help="promtool runs at once")
    parser.add_argument("--head-hosts", type=int, default=50,
                        help="hosts scraped to measure the head's bytes per series (0: skip)")
    parser.add_argument("--tmp", default="/tmp", help="where the temporary data goes")
    parser.add_argument("--out", help="write the raw figures (results.json) and tables here")
    parser.add_argument("--plot", help="write a PNG of times and memory against hosts here")
    parser.add_argument("--top", type=int, default=0,
                        help="print only the N slowest rules (default: all)")
    args = parser.parse_args()
    try:
        return report(args)
    except (BenchError, OSError) as error:
        print("fleet_rules_scale: %s" % error, file=sys.stderr)
        return 1


def report(args):
    require_tools(args.rail_exporter)
    sizes = sorted(int(size) for size in args.hosts.split(",") if size)
    if not sizes and not args.head_hosts:
        raise BenchError("nothing to measure: --hosts is empty and --head-hosts is 0")
    with open(RULES, encoding="utf-8") as f:
        rules_yaml = yaml.safe_load(f)
    run([PROMTOOL, "check", "rules", RULES])
    rules = rule_levels(rules_yaml)
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="fleet_rules_agent-", dir=args.tmp)
    try:
        text = agent_scrape(os.path.abspath(args.rail_exporter), work)
        template = HostTemplate(text, time.time(), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    check_failing_pair(template)
    print("agent: %d host-level series, per-peer families %s" % (
        len(template.host), ", ".join(sorted(template.peer_label_names))), flush=True)
    head = None
    if args.head_hosts:
        work = tempfile.mkdtemp(prefix="fleet_rules_head-", dir=args.tmp)
        try:
            fleet = Fleet(max(sizes + [args.head_hosts]), args.sick, args.seed)
            head = head_memory(fleet, template, args.head_hosts, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(head_line(head).strip(), flush=True)
    results = [size_run(n, args, template, rules, range_windows(rules_yaml)) for n in sizes]
    return write_report(args, results, head, rules, time.monotonic() - started)


def write_report(args, results, head, rules, seconds):
    summ = summary(results) if len(results) > 1 else None
    text = figures_table(results, head) + "\n" if results else head_line(head)
    if summ:
        text += rules_table(results, summ, args.top)
        text += ("\nFlagged (median and minimum both grow with an exponent above 1.3, "
                 "at least 10 ms): %s\n"
                 % (", ".join(summ["flagged"]) or "none"))
    text += "\nRun time: %.0f s, %d rules\n" % (seconds, len(rules))
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
            json.dump({"results": results, "summary": summ, "head": head,
                       "seconds": seconds, "args": vars(args)}, f, indent=1)
        with open(os.path.join(args.out, "tables.md"), "w", encoding="utf-8") as f:
            f.write(text)
    if args.plot and summ:
        plot(results, summ, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
