#!/usr/bin/python3
"""Scrape cost of rail_exporter vs Debian's prometheus-node-exporter on the same sysfs tree.

Starts node_exporter (infiniband, netclass, bonding) and rail_exporter in two configurations:
  (a) "same collectors": infiniband, netclass, bonding (--no-collector.<name> for every other
      collector `rail_exporter --help` lists: hw_counters, netdev, gid, rails, exporter, and any
      added later), which read the kinds of files node_exporter's three read;
  (c) (a) + hw_counters + netdev: also every hw_counters/ and netdev statistics/ file, which
      node_exporter does not read (its netdev collector reads /proc/net/dev instead);
  (b) "all collectors": every collector switched on, including gid and rails, which read every
      port's GID table (gids/, gid_attrs/types, gid_attrs/ndevs). node_exporter reads no GID.
After a warm-up, it scrapes the exporters in turn N times (interleaved, the order rotating
every round, so that all of them see the same machine noise) and measures:
  * wall latency of each scrape: time.perf_counter() around a urllib GET of /metrics, on a new
    connection, with "Accept-Encoding: identity" (no gzip for anybody);
  * CPU per scrape: utime+stime of the exporter process (/proc/<pid>/stat) over the measured
    run, divided by N (idle background work such as Go's GC is included);
  * peak RSS: VmHWM of /proc/<pid>/status after the run.
Prints a markdown table (medians, p90, ratio of our median to node_exporter's, all from this
one run) and writes the raw figures as JSON with --json. It asserts no performance target:
it exits non-zero only when an exporter cannot be started or a scrape fails.
"""

import argparse
import json
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

NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, timeout=60.0):
    """One GET; returns (seconds, body bytes)."""
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
        status = response.status
    elapsed = time.perf_counter() - start
    if status != 200:
        raise BenchError(f"GET {url}: HTTP {status}")
    return elapsed, body


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def status_kib(pid, key):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise BenchError(f"/proc/{pid}/status has no {key}")


class Exporter:
    def __init__(self, short, label, kind, argv, port=None):
        self.short = short
        self.label = label
        self.kind = kind  # "node_exporter" or "rail_exporter"
        self.argv = argv
        self.port = port
        self.log = tempfile.TemporaryFile(mode="w+", prefix=f"bench-{kind}-")
        self.proc = None
        self.latencies = []
        self.body_bytes = 0
        self.last_body = b""

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/metrics"

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=self.log)

    def wait_ready(self, deadline):
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.label} exited with {self.proc.returncode}: "
                                 f"{self.log_text()[-2000:]}")
            if self.port is None:
                match = re.search(r"listening on port\(s\) (\d+)", self.log_text())
                if match:
                    self.port = int(match.group(1))
            if self.port is not None:
                try:
                    scrape(self.url, timeout=5)
                    return
                except (OSError, BenchError):
                    pass
            time.sleep(0.05)
        raise BenchError(f"{self.label} did not become ready: {self.log_text()[-2000:]}")

    def log_text(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def known_collectors(binary):
    """Collector names from `rail_exporter --help` (its --no-collector.<name> flags)."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=False).stdout
    names = re.findall(r"--no-collector\.([A-Za-z0-9_]+)", text)
    if not names:
        raise BenchError(f"{binary} --help lists no --no-collector.<name> flag")
    return list(dict.fromkeys(names))


def loadavg():
    with open("/proc/loadavg", encoding="ascii") as f:
        return " ".join(f.read().split()[:3])


def percentile(values, q):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def collector_durations(body):
    """Per-collector durations the exporter reports about its own last scrape, in ms."""
    durations = {}
    pattern = re.compile(
        rb'^(?:node|rail_exporter)_scrape_collector_duration_seconds\{collector="([^"]+)"\} (\S+)$',
        re.M)
    for name, value in pattern.findall(body):
        durations[name.decode()] = float(value) * 1e3
    return durations


def series_count(body):
    return sum(1 for line in body.split(b"\n") if line and not line.startswith(b"#"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, help="tree holding sys/ (and proc/)")
    parser.add_argument("--tree-name", help="name in the table (default: the tree's basename)")
    parser.add_argument("--rail-exporter",
                        default=os.path.join(here, "..", "build-bench", "src", "rail_exporter"))
    parser.add_argument("--node-exporter", default=NODE_EXPORTER)
    parser.add_argument("--scrapes", type=int, default=None,
                        help="measured scrapes per exporter (default 200; 50 with --large)")
    parser.add_argument("--large", action="store_true",
                        help="the tree is the generated large one (default scrapes 50)")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured scrapes per exporter")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args()
    scrapes = args.scrapes or (50 if args.large else 200)
    tree = os.path.abspath(args.tree)
    tree_name = args.tree_name or os.path.basename(tree.rstrip("/"))
    sysfs, procfs = os.path.join(tree, "sys"), os.path.join(tree, "proc")
    if not os.path.isdir(sysfs):
        raise BenchError(f"{sysfs} is not a directory")
    for binary in (args.rail_exporter, args.node_exporter):
        if not os.access(binary, os.X_OK):
            raise BenchError(f"{binary} is not executable")

    # "Same collectors" means node_exporter's three: every other collector rail_exporter knows
    # (gid, rails, exporter, and whatever later issues add) is switched off.
    same = {"infiniband", "netclass", "bonding"}
    ours_collectors = known_collectors(args.rail_exporter)
    others = [c for c in ours_collectors if c not in same]
    counter_files = {"hw_counters", "netdev"}
    node_port = free_port()
    ours = [args.rail_exporter, f"--path.sysfs={sysfs}", f"--path.procfs={procfs}",
            "--web.listen-address=127.0.0.1:0"]  # logs "listening on port(s) N" at info
    exporters = [
        Exporter("node_exporter", "node_exporter 1.5.0 (infiniband, netclass, bonding)", "node_exporter",
                 [args.node_exporter, f"--path.sysfs={sysfs}", f"--path.procfs={procfs}",
                  "--collector.disable-defaults", "--collector.infiniband",
                  "--collector.netclass", "--collector.bonding", "--log.level=error",
                  f"--web.listen-address=127.0.0.1:{node_port}"],
                 port=node_port),
        Exporter("rail_exporter (a)", "rail_exporter (a) same collectors: infiniband, netclass, bonding",
                 "rail_exporter",
                 ours + [f"--no-collector.{c}" for c in others]),
        Exporter("rail_exporter (c)",
                 "rail_exporter (c) (a) + hw_counters, netdev (every counter file, no GID)",
                 "rail_exporter",
                 ours + [f"--no-collector.{c}" for c in others if c not in counter_files]),
        Exporter("rail_exporter (b)",
                 f"rail_exporter (b) all collectors (+ {', '.join(others)}: reads GID tables)",
                 "rail_exporter", ours + [f"--collector.{c}" for c in ours_collectors]),
    ]
    try:
        for exporter in exporters:
            exporter.start()
        deadline = time.monotonic() + 30
        for exporter in exporters:
            exporter.wait_ready(deadline)
        for _ in range(args.warmup):
            for exporter in exporters:
                scrape(exporter.url)

        load_before = loadavg()
        cpu_before = [cpu_ticks(e.proc.pid) for e in exporters]
        for i in range(scrapes):
            # Rotate who goes first so no exporter always follows the same neighbour.
            for k in range(len(exporters)):
                exporter = exporters[(i + k) % len(exporters)]
                elapsed, body = scrape(exporter.url)
                exporter.latencies.append(elapsed)
                exporter.body_bytes = len(body)
                exporter.last_body = body
        cpu_after = [cpu_ticks(e.proc.pid) for e in exporters]
        load_after = loadavg()
        peaks = [status_kib(e.proc.pid, "VmHWM") for e in exporters]
        rss_now = [status_kib(e.proc.pid, "VmRSS") for e in exporters]
    finally:
        for exporter in exporters:
            exporter.stop()

    node_median = statistics.median(exporters[0].latencies)
    results = []
    for exporter, before, after, peak, rss in zip(exporters, cpu_before, cpu_after, peaks, rss_now):
        median = statistics.median(exporter.latencies)
        results.append({
            "tree": tree_name,
            "exporter": exporter.label,
            "short": exporter.short,
            "kind": exporter.kind,
            "argv": exporter.argv,
            "scrapes": scrapes,
            "median_ms": median * 1e3,
            "p90_ms": percentile(exporter.latencies, 90) * 1e3,
            "min_ms": min(exporter.latencies) * 1e3,
            "max_ms": max(exporter.latencies) * 1e3,
            "cpu_ms_per_scrape": (after - before) / CLK_TCK * 1e3 / scrapes,
            "peak_rss_mib": peak / 1024,
            "rss_after_mib": rss / 1024,
            "body_bytes": exporter.body_bytes,
            "series": series_count(exporter.last_body),
            "median_ratio_to_node_exporter": median / node_median,
            "self_reported_collector_ms": collector_durations(exporter.last_body),
            "latencies_ms": [x * 1e3 for x in exporter.latencies],
        })

    print(f"### {tree_name}: {scrapes} interleaved scrapes per exporter "
          f"(after {args.warmup} warm-up), {os.cpu_count()} CPUs, load average "
          f"{load_before} before, {load_after} after\n")
    print("| tree | exporter config | median scrape ms | p90 ms | CPU ms/scrape | peak RSS MiB "
          "| body KiB | series | median ratio ours/node_exporter |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        ratio = "—" if r["kind"] == "node_exporter" else f"{r['median_ratio_to_node_exporter']:.2f}"
        print(f"| {r['tree']} | {r['exporter']} | {r['median_ms']:.2f} | {r['p90_ms']:.2f} "
              f"| {r['cpu_ms_per_scrape']:.2f} | {r['peak_rss_mib']:.1f} "
              f"| {r['body_bytes'] / 1024:.0f} | {r['series']} | {ratio} |")
    print()
    print("Notes: node_exporter reads no GID table; (b) reads every non-empty GID slot's three "
          "files (gids, gid_attrs/types, gid_attrs/ndevs). Timings are wall time seen by the "
          "client (connection, collection, serialisation, transfer); CPU is the exporter "
          "process only. No target is checked here.")
    for r in results:
        if r["self_reported_collector_ms"]:
            parts = ", ".join(f"{k} {v:.2f}" for k, v in r["self_reported_collector_ms"].items())
            print(f"  self-reported collector ms in its last scrape, {r['short']}: {parts}")
    print()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"tree": tree, "tree_name": tree_name, "scrapes": scrapes,
                       "warmup": args.warmup, "cpus": os.cpu_count(),
                       "loadavg_before": load_before, "loadavg_after": load_after,
                       "results": results},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        print(f"scrape_compare.py: {error}", file=sys.stderr)
        sys.exit(1)
