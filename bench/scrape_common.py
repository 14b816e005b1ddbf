"""Shared helpers of bench/scrape_compare.py and bench/scrape_scaling.py.

Both start node_exporter and rail_exporter on the same sysfs tree, scrape them in turn (the order
rotating every round, so that all see the same machine noise) and measure each one from outside:

* wall latency of each scrape: time.perf_counter() around a urllib GET of /metrics on a new
  connection, with "Accept-Encoding: identity" (no gzip for anybody). Nothing else of the HTTP
  server is used, so these scripts do not depend on which server the agent embeds;
* CPU per scrape: utime+stime of the process (/proc/<pid>/stat, every thread, dead ones too)
  over the measured rounds, divided by their number (idle background work such as Go's GC is
  included; the resolution is one clock tick, 10 ms, over the whole run);
* threads: "Threads:" of /proc/<pid>/status at idle, after the warm-up and a pause, and again
  after the measured rounds;
* memory: VmRSS of /proc/<pid>/status at idle after the warm-up and after the measured rounds,
  and VmHWM (peak RSS) after them;
* series: the non-comment lines of the last body.

Each exporter listens on a port this script chose (the ports are reserved together, then
released just before the exporters start), so nothing depends on what an exporter logs.
"""

import math
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from proc_status import status as status_fields  # noqa: E402

NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
CLK_TCK = os.sysconf("SC_CLK_TCK")

# node_exporter's collectors in every comparison, and rail_exporter's namesakes ("same").
SAME_COLLECTORS = ("infiniband", "netclass", "bonding")
COUNTER_COLLECTORS = ("hw_counters", "netdev")


class BenchError(Exception):
    pass


def free_ports(count):
    """count distinct free TCP ports on 127.0.0.1 (all held open while choosing)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def stop_process(proc, grace=10):
    """SIGTERM, then SIGKILL after `grace` seconds; reaped either way."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def scrape(url, timeout=60.0):
    """One GET without gzip; returns (seconds, body bytes)."""
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
        status = response.status
        encoding = response.headers.get("Content-Encoding", "identity")
    elapsed = time.perf_counter() - start
    if status != 200:
        raise BenchError(f"GET {url}: HTTP {status}")
    if encoding not in ("", "identity"):
        raise BenchError(f"GET {url}: Content-Encoding {encoding} although identity was asked")
    return elapsed, body


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def cpu_ns(pid):
    """CPU time of the process's live threads in ns (/proc/<pid>/task/*/schedstat): finer than
    stat's 10 ms ticks, for the background work of a minute. Threads that ended are not in it;
    neither exporter starts or ends threads while it is not scraped."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as f:
                total += int(f.read().split()[0])
        except OSError:
            continue
    return total


def proc_status(pid):
    """The numeric fields of /proc/<pid>/status we use: Threads, VmRSS and VmHWM (KiB)."""
    try:
        return status_fields(pid, ("Threads", "VmRSS", "VmHWM"))
    except LookupError as error:
        raise BenchError(str(error))


def loadavg():
    with open("/proc/loadavg", encoding="ascii") as f:
        return " ".join(f.read().split()[:3])


def percentile(values, q):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def series_count(body):
    return sum(1 for line in body.split(b"\n") if line and not line.startswith(b"#"))


def collector_durations(body):
    """Per-collector durations the exporter reports about its own last scrape, in ms."""
    durations = {}
    pattern = re.compile(
        rb'^(?:node|rail_exporter)_scrape_collector_duration_seconds\{collector="([^"]+)"\} (\S+)$',
        re.M)
    for name, value in pattern.findall(body):
        durations[name.decode()] = float(value) * 1e3
    return durations


def known_collectors(binary):
    """Collector names from `rail_exporter --help` (its --no-collector.<name> flags)."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=False).stdout
    names = re.findall(r"--no-collector\.([A-Za-z0-9_]+)", text)
    if not names:
        raise BenchError(f"{binary} --help lists no --no-collector.<name> flag")
    return list(dict.fromkeys(names))


class Exporter:
    """One exporter process; argv gets --web.listen-address=127.0.0.1:<port> appended."""

    def __init__(self, short, label, kind, argv):
        self.short = short
        self.label = label
        self.kind = kind  # "node_exporter" or "rail_exporter"
        self.argv = list(argv)
        self.port = None
        self.log = tempfile.TemporaryFile(mode="w+", prefix=f"bench-{kind}-")
        self.proc = None
        self.latencies = []
        self.last_body = b""

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/metrics"

    @property
    def pid(self):
        return self.proc.pid

    def start(self, port):
        self.port = port
        self.argv.append(f"--web.listen-address=127.0.0.1:{port}")
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=self.log)

    def wait_ready(self, deadline):
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.label} exited with {self.proc.returncode}: "
                                 f"{self.log_text()[-2000:]}")
            try:
                scrape(self.url, timeout=5)
                return
            except (OSError, BenchError):
                time.sleep(0.05)
        raise BenchError(f"{self.label} did not become ready: {self.log_text()[-2000:]}")

    def log_text(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc:
            stop_process(self.proc)


def node_exporter(binary, sysfs, procfs):
    return Exporter("node", "node_exporter 1.5.0 (infiniband, netclass, bonding)", "node_exporter",
                    [binary, f"--path.sysfs={sysfs}", f"--path.procfs={procfs}",
                     "--collector.disable-defaults"]
                    + [f"--collector.{c}" for c in SAME_COLLECTORS] + ["--log.level=error"])


# rail_exporter's configurations, by name: (short, label, argv after the paths). Built from the
# collectors its --help lists, so a collector added later is switched off in "same" too.
RAIL_CONFIG_NAMES = ("same", "counters", "all", "defaults")


def rail_exporter(binary, sysfs, procfs, config, collectors):
    base = [binary, f"--path.sysfs={sysfs}", f"--path.procfs={procfs}"]
    others = [c for c in collectors if c not in SAME_COLLECTORS]
    if config == "same":
        return Exporter("rail same", "rail_exporter (a) same collectors ("
                        + ", ".join(SAME_COLLECTORS) + ")", "rail_exporter",
                        base + [f"--no-collector.{c}" for c in others])
    if config == "counters":
        return Exporter("rail counters",
                        "rail_exporter (c) (a) + hw_counters, netdev",
                        "rail_exporter",
                        base + [f"--no-collector.{c}" for c in others
                                if c not in COUNTER_COLLECTORS])
    if config == "all":
        return Exporter("rail all", "rail_exporter (b) all collectors switched on", "rail_exporter",
                        base + [f"--collector.{c}" for c in collectors])
    if config == "defaults":
        return Exporter("rail defaults", "rail_exporter (d) defaults (no collector flag)",
                        "rail_exporter", base)
    raise BenchError(f"unknown rail_exporter config {config!r} (known: "
                     f"{', '.join(RAIL_CONFIG_NAMES)})")


def measure(exporters, scrapes, warmup, idle_s=1.0, ready_timeout=30.0, background_s=0.0,
            paced=0, pace_s=1.5, cadence_rounds=0):
    """Starts the exporters, warms them up, reads their idle threads and RSS, scrapes them in
    turn `scrapes` times each and stops them. Returns one dict per exporter (same order) and
    the load averages before and after the measured rounds. exporters[0] is the reference for
    the ratios (node_exporter).

    With background_s, each process's CPU is then read over that many seconds without a scrape
    (what it spends on its own: Go's GC, the agent's fabric sampler and GID table refresh), and
    with paced, that many more rounds are scraped pace_s apart: later than the agent's 1 s
    sysfs caches last, as a Prometheus scraping every 15 s finds them. The paced CPU per scrape
    is the CPU over those rounds less the background rate over their span.

    With cadence_rounds, that many rounds 15 s apart follow, each exporter scraped once a round:
    the CPU per 15 s of a Prometheus scraping every 15 s, measured rather than modelled from the
    paced and background figures (the agent's scrapes then record the fabric counters they read,
    and its sampler reads none)."""
    try:
        for exporter, port in zip(exporters, free_ports(len(exporters))):
            exporter.start(port)
        deadline = time.monotonic() + ready_timeout
        for exporter in exporters:
            exporter.wait_ready(deadline)
        for i in range(warmup):
            for k in range(len(exporters)):
                scrape(exporters[(i + k) % len(exporters)].url)
        time.sleep(idle_s)  # let background work (Go's GC, thread pools) settle
        idle = [proc_status(e.pid) for e in exporters]

        load_before = loadavg()
        cpu_before = [cpu_ticks(e.pid) for e in exporters]
        for i in range(scrapes):
            # Rotate who goes first so no exporter always follows the same neighbour.
            for k in range(len(exporters)):
                exporter = exporters[(i + k) % len(exporters)]
                elapsed, body = scrape(exporter.url)
                exporter.latencies.append(elapsed)
                exporter.last_body = body
        cpu_after = [cpu_ticks(e.pid) for e in exporters]
        load_after = loadavg()
        after = [proc_status(e.pid) for e in exporters]
        background = measure_background(exporters, background_s)
        paced_cpu = measure_paced(exporters, paced, pace_s)
        cadence_cpu = measure_cadence(exporters, cadence_rounds, CADENCE_S)
    finally:
        for exporter in exporters:
            exporter.stop()

    results = []
    for exporter, before_t, after_t, st_idle, st_after, bg, pc, cc in zip(
            exporters, cpu_before, cpu_after, idle, after, background, paced_cpu, cadence_cpu):
        paced_cpu_ms = paced_per_scrape(pc, bg, paced)
        modelled = per_cadence(paced_cpu_ms, bg, CADENCE_S)
        results.append({
            "background_cpu_ms_per_min": bg,
            "paced_cpu_ms_per_scrape": paced_cpu_ms,
            "cpu_ms_per_15s_cadence_modelled": modelled,
            "cpu_ms_per_15s_cadence_measured": cc,
            "cadence_rounds": cadence_rounds,
            "cpu_ms_per_15s_cadence": cc if cc is not None else modelled,
            "exporter": exporter.label,
            "short": exporter.short,
            "kind": exporter.kind,
            "argv": exporter.argv,
            "scrapes": scrapes,
            "median_ms": statistics.median(exporter.latencies) * 1e3,
            "p90_ms": percentile(exporter.latencies, 90) * 1e3,
            "min_ms": min(exporter.latencies) * 1e3,
            "max_ms": max(exporter.latencies) * 1e3,
            "cpu_ms_per_scrape": (after_t - before_t) / CLK_TCK * 1e3 / scrapes,
            "threads_idle": st_idle["Threads"],
            "threads_after": st_after["Threads"],
            "rss_idle_mib": st_idle["VmRSS"] / 1024,
            "rss_after_mib": st_after["VmRSS"] / 1024,
            "peak_rss_mib": st_after["VmHWM"] / 1024,
            "body_bytes": len(exporter.last_body),
            "series": series_count(exporter.last_body),
            "self_reported_collector_ms": collector_durations(exporter.last_body),
            "latencies_ms": [x * 1e3 for x in exporter.latencies],
        })
    reference = results[0]
    for r in results:
        r["ratio_to_node_exporter"] = {key: (r[key] / reference[key] if reference[key] else None)
                                       for key in RATIO_KEYS}
    return results, load_before, load_after


def add_cadence_arguments(parser):
    """The options of measure()'s background and paced figures."""
    parser.add_argument("--background", type=float, default=0.0,
                        help="seconds without scrapes over which each process's own CPU is read "
                             "(default 0: not measured)")
    parser.add_argument("--paced", type=int, default=0,
                        help="rounds scraped --pace seconds apart after the others (default 0)")
    parser.add_argument("--pace", type=float, default=1.5, help="seconds between paced rounds")
    parser.add_argument("--cadence-rounds", type=int, default=0,
                        help="rounds 15 s apart, each exporter scraped once a round, after the "
                             "others: the CPU per 15 s at a 15 s cadence measured (default 0: "
                             "modelled from --paced and --background)")


def measure_background(exporters, seconds):
    """CPU ms per minute of each process over `seconds` without a scrape (None when 0)."""
    if seconds <= 0:
        return [None] * len(exporters)
    before = [cpu_ns(e.pid) for e in exporters]
    time.sleep(seconds)
    after = [cpu_ns(e.pid) for e in exporters]
    return [(a - b) / 1e6 * 60.0 / seconds for a, b in zip(after, before)]


def measure_paced(exporters, rounds, pace_s):
    """(CPU ms, seconds) of each process over `rounds` rounds pace_s apart (None when 0). Read
    from the threads' schedstat (cpu_ns) as the background is: stat's 10 ms ticks over 20 rounds
    of a few ms each were +-0.5 ms a scrape, as much as the differences measured."""
    if rounds <= 0:
        return [None] * len(exporters)
    start = time.monotonic()
    before = [cpu_ns(e.pid) for e in exporters]
    for i in range(rounds):
        time.sleep(pace_s)
        for k in range(len(exporters)):
            scrape(exporters[(i + k) % len(exporters)].url)
    after = [cpu_ns(e.pid) for e in exporters]
    span = time.monotonic() - start
    return [((a - b) / 1e6, span) for a, b in zip(after, before)]


# The scrape interval the cadence figures stand for (Prometheus' example configuration's).
CADENCE_S = 15.0


def measure_cadence(exporters, rounds, cadence_s):
    """CPU ms of each process per round over `rounds` rounds cadence_s apart, each exporter
    scraped once a round (None when 0): scrape and background work together."""
    if rounds <= 0:
        return [None] * len(exporters)
    start = time.monotonic()
    before = [cpu_ns(e.pid) for e in exporters]
    for i in range(rounds):
        for k in range(len(exporters)):
            scrape(exporters[(i + k) % len(exporters)].url)
        time.sleep(max(0.0, start + (i + 1) * cadence_s - time.monotonic()))
    after = [cpu_ns(e.pid) for e in exporters]
    return [(a - b) / 1e6 / rounds for a, b in zip(after, before)]


def paced_per_scrape(paced, background_per_min, rounds):
    if paced is None or background_per_min is None:
        return None
    cpu_ms, span_s = paced
    return max(0.0, (cpu_ms - background_per_min * span_s / 60.0) / rounds)


def per_cadence(per_scrape, background_per_min, cadence_s):
    """CPU ms a process spends per `cadence_s` when scraped that often: one paced scrape and
    the background work of that span."""
    if per_scrape is None or background_per_min is None:
        return None
    return per_scrape + background_per_min * cadence_s / 60.0


# The figures compared as ratios rail/node, in table order, with their column titles.
RATIO_KEYS = ("threads_idle", "rss_after_mib", "peak_rss_mib", "median_ms", "p90_ms",
              "cpu_ms_per_scrape", "series")
RATIO_TITLES = ("threads idle", "RSS after", "peak RSS", "median", "p90", "CPU/scrape", "series")


def print_tables(title, results):
    """Two markdown tables: the figures, then each rail_exporter config's ratios to node's."""
    print(title + "\n")
    print("| exporter config | threads idle → after | RSS MiB idle → after | peak RSS MiB "
          "| median scrape ms | p90 ms | CPU ms/scrape | series | body KiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['exporter']} | {r['threads_idle']} → {r['threads_after']} "
              f"| {r['rss_idle_mib']:.1f} → {r['rss_after_mib']:.1f} | {r['peak_rss_mib']:.1f} "
              f"| {r['median_ms']:.2f} | {r['p90_ms']:.2f} | {r['cpu_ms_per_scrape']:.2f} "
              f"| {r['series']} | {r['body_bytes'] / 1024:.0f} |")
    print()
    print("Ratios rail_exporter / node_exporter (below 1: leaner than node_exporter):\n")
    print("| exporter config | " + " | ".join(RATIO_TITLES) + " |")
    print("|---|" + "---:|" * len(RATIO_TITLES))
    for r in results:
        if r["kind"] == "node_exporter":
            continue
        cells = [fmt_or_dash(r["ratio_to_node_exporter"][k], 2) for k in RATIO_KEYS]
        print(f"| {r['exporter']} | " + " | ".join(cells) + " |")
    print()
    print_background_table(results)


def print_background_table(results):
    """With background and paced figures: what each process costs per 15 s of a Prometheus
    scraping every 15 s (one paced scrape and 15 s of its own work), and the ratio."""
    reference = results[0].get("cpu_ms_per_15s_cadence")
    if reference is None:
        return
    rounds = results[0].get("cadence_rounds") or 0
    how = (f"measured over {rounds} rounds 15 s apart" if rounds else
           "one paced scrape and 15 s of background")
    print(f"Between scrapes and at a 15 s cadence (paced scrapes: the 1 s caches expired; CPU per "
          f"15 s {how}):\n")
    print("| exporter config | background CPU ms/min | paced CPU ms/scrape "
          "| CPU ms per 15 s | ratio |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        ratio = r["cpu_ms_per_15s_cadence"] / reference if reference else None
        print(f"| {r['exporter']} | {fmt_or_dash(r['background_cpu_ms_per_min'], 1)} "
              f"| {fmt_or_dash(r['paced_cpu_ms_per_scrape'], 2)} "
              f"| {r['cpu_ms_per_15s_cadence']:.2f} | {fmt_or_dash(ratio, 2)} |")
    print()


def fmt_or_dash(value, digits):
    """A figure with `digits` decimals, or a dash where there is none."""
    return "—" if value is None else f"{value:.{digits}f}"

