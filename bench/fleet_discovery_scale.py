#!/usr/bin/python3
"""What discovery costs an agent at 1,000 to 50,000 targets, against real servers on loopback.

For each source and fleet size, one rail_exporter (fleet collector and its own process metrics
only, the Spark fixture's two rails) discovers the fleet from:

* dns         a real dnsmasq (Debian's dnsmasq-base) on a free 127.0.0.1 port, answering A
              records from an extra hosts file: the fleet sharded into names of 2,000 records
              (rack-NNN.fleet.test), well under the 4,093 a 64 KiB TCP answer holds, unioned by
              the agent's one `dns` entry naming them all, asked over TCP;
* kubernetes  the API server stand-in (tests/support/https_fixture_server.py) over HTTPS with a
              CA made for the run, serving the Service as EndpointSlices of 100 endpoints, in
              pages of 100 slices (the source's limit), a bearer token checked on every request;
* file_sd     one file_sd JSON file of every target.

Every target is in 127.0.0.0/8 and none is contacted: the agent's one probe entry runs every 24 h,
so no probe comes within a run. The agent refreshes the source every --interval seconds; after
--refreshes refreshes the script reads, from the agent's own metrics,
rail_fleet_discovery_last_fetch_seconds (wall time of the fetch: for kubernetes the stand-in's
Python page generation is in it), rail_fleet_discovery_last_fetch_cpu_seconds (the agent's fleet
thread only) and process_resident_memory_bytes, takes the median of the per-refresh samples, and
checks rail_fleet_discovery_targets and rail_fleet_discovery_errors_total.

RSS growth per target is the slope of RSS over the sizes (least squares), per source.

Writes a markdown table (--table) and a plot of fetch time, CPU and RSS against targets (--plot).
Usage: bench/fleet_discovery_scale.py --rail-exporter build/src/rail_exporter
"""

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from scrape_common import free_ports, stop_process  # noqa: E402

DNSMASQ = "/usr/sbin/dnsmasq"
STAND_IN = os.path.join(ROOT, "tests", "support", "https_fixture_server.py")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "spark-dual-rail", "sys")
PER_NAME = 2000  # A records per DNS name: a TCP answer holds at most 4,093
SOURCES = ("dns", "kubernetes", "file_sd")
TOKEN = "fleet-scale-bench-token"


def target(index):
    """The index-th target's address in 127.0.0.0/8 (127.0.0.x is left alone)."""
    return "127.%d.%d.%d" % (1 + index // 62500, index // 250 % 250, index % 250 + 1)


class Server:
    """A child process, ended (SIGTERM, then SIGKILL) when the run is over."""

    def __init__(self, argv, **kwargs):
        self.process = subprocess.Popen(argv, **kwargs)

    def stop(self):
        stop_process(self.process)


def start_dnsmasq(work, size):
    """dnsmasq answering the fleet's A records; the names and the server's address."""
    names = ["rack-%03d.fleet.test" % rack for rack in range(-(-size // PER_NAME))]
    hosts = os.path.join(work, "fleet.hosts")
    with open(hosts, "w", encoding="utf-8") as f:
        for index in range(size):
            f.write("%s %s\n" % (target(index).split(":")[0], names[index // PER_NAME]))
    port = free_ports(1)[0]
    argv = [DNSMASQ, "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
            "--port=%d" % port, "--listen-address=127.0.0.1", "--bind-interfaces",
            "--local=/test/", "--pid-file=", "--addn-hosts=" + hosts]
    if os.geteuid() == 0:
        argv.append("--user=root")
    server = Server(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_tcp(port, 120)  # loading 50,000 records takes dnsmasq a while
    entry = {"names": names, "type": "A", "port": 9841, "server": "127.0.0.1:%d" % port,
             "timeout": "30s"}
    return server, {"dns": [entry]}


def start_stand_in(work, size):
    """The API server stand-in serving the fleet as EndpointSlices over HTTPS."""
    run = lambda *argv: subprocess.run(argv, cwd=work, check=True, capture_output=True)  # noqa
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("openssl", "req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
        "-subj", "/CN=fleet-bench-ca")
    run("openssl", "req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj",
        "/CN=localhost")
    with open(os.path.join(work, "san.ext"), "w", encoding="utf-8") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.ext")
    for name in ("token", "expected-token"):
        with open(os.path.join(work, name), "w", encoding="utf-8") as f:
            f.write(TOKEN + "\n")
    routes = [{"path": "/apis/discovery.k8s.io/v1/namespaces/fleet/endpointslices",
               "query": {"labelSelector": "kubernetes.io/service-name=rail-exporter",
                         "limit": "100"},
               "generate": {"endpoints": size, "per_slice": 100, "port": 9841,
                            "first_octet": 127}}]
    with open(os.path.join(work, "routes.json"), "w", encoding="utf-8") as f:
        json.dump(routes, f)
    server = Server([sys.executable, STAND_IN, "--cert", "server.crt", "--key", "server.key",
                     "--routes", "routes.json", "--fixtures", work, "--token-file",
                     "expected-token"], cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    port = int(server.process.stdout.readline())
    entry = {"service": "rail-exporter", "namespace": "fleet", "port_name": "responder",
             "api_server": "https://127.0.0.1:%d" % port,
             "token_file": os.path.join(work, "token"),
             "ca_file": os.path.join(work, "ca.crt"), "timeout": "60s"}
    return server, {"kubernetes": [entry]}


def write_file_sd(work, size):
    path = os.path.join(work, "fleet.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump([{"targets": ["%s:9841" % target(i) for i in range(size)]}], f)
    return None, {"file_sd": [{"files": [path]}]}


def wait_for_tcp(port, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("nothing accepts on 127.0.0.1:%d after %d s" % (port, seconds))


def agent_config(work, discovery, interval, responder_port):
    """The agent's configuration: the source refreshed every `interval`, self the first target."""
    for entries in discovery.values():
        for entry in entries:
            entry["refresh_interval"] = "%ds" % interval
    secret = os.path.join(work, "secret")
    with open(secret, "w", encoding="utf-8") as f:
        f.write("fleet-scale-bench-secret\n")
    os.chmod(secret, 0o600)
    config = {
        "responder": {"listen_address": "127.0.0.1:%d" % responder_port, "secret_file": secret},
        "fleet": {"self": "%s:9841" % target(0), "discovery": discovery},
        "probes": [{"kind": "tcp_rtt", "interval": "24h"}],
    }
    path = os.path.join(work, "agent.yaml")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)  # JSON is YAML
    return path


def samples(text, family):
    """{labels text: value} of one family in an exposition."""
    found = {}
    for match in re.finditer(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(family), text, re.M):
        found[match.group(1) or ""] = float(match.group(2))
    return found


def one(text, family):
    values = list(samples(text, family).values())
    if len(values) != 1:
        raise RuntimeError("%s: expected one sample, found %d" % (family, len(values)))
    return values[0]


def measure(binary, source, size, refreshes, interval):
    """Median fetch seconds, fetch CPU seconds and RSS bytes over `refreshes` refreshes."""
    work = tempfile.mkdtemp(prefix="rail-fleet-scale-")
    server = None
    agent = None
    try:
        start = {"dns": start_dnsmasq, "kubernetes": start_stand_in, "file_sd": write_file_sd}
        server, discovery = start[source](work, size)
        web_port, responder_port = free_ports(2)
        config = agent_config(work, discovery, interval, responder_port)
        agent = Server([binary, "--path.sysfs=" + FIXTURE, "--config.file=" + config,
                        "--web.listen-address=127.0.0.1:%d" % web_port,
                        "--collector.disable-defaults", "--collector.fleet",
                        "--collector.exporter", "--log.level=warn"],
                       stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"),
                                                              "w"))
        wait_for_tcp(web_port, 30)
        seen = 0
        fetch, cpu, rss = [], [], []
        deadline = time.monotonic() + (refreshes + 2) * interval + 180
        while len(fetch) < refreshes:
            if time.monotonic() > deadline:
                raise RuntimeError("%s at %d: %d refreshes in time" % (source, size, len(fetch)))
            text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % web_port,
                                          timeout=30).read().decode()
            count = one(text, "rail_fleet_discovery_refreshes_total")
            if count > seen:
                seen = count
                targets = one(text, "rail_fleet_discovery_targets")
                errors = one(text, "rail_fleet_discovery_errors_total")
                if errors or targets != size:
                    raise RuntimeError("%s at %d: %d targets, %d errors (see %s)"
                                       % (source, size, targets, errors, work))
                fetch.append(one(text, "rail_fleet_discovery_last_fetch_seconds"))
                cpu.append(one(text, "rail_fleet_discovery_last_fetch_cpu_seconds"))
                rss.append(one(text, "process_resident_memory_bytes"))
            time.sleep(0.2)
        return statistics.median(fetch), statistics.median(cpu), statistics.median(rss)
    finally:
        for process in (agent, server):
            if process:
                process.stop()
        shutil.rmtree(work, ignore_errors=True)


def slope(xs, ys):
    mean_x, mean_y = statistics.mean(xs), statistics.mean(ys)
    return (sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) /
            sum((x - mean_x) ** 2 for x in xs))


def table(results, sizes):
    lines = ["| source | targets | fetch (median) | CPU per fetch | agent RSS |",
             "|---|---:|---:|---:|---:|"]
    for source, rows in results.items():
        for size, (fetch, cpu, rss) in zip(sizes, rows):
            lines.append("| %s | %s | %.3f s | %.3f s | %.1f MiB |"
                         % (source, format(size, ","), fetch, cpu, rss / 2**20))
    if len(set(sizes)) < 2:
        return "\n".join(lines) + "\n"  # one size: no slope
    lines += ["", "| source | RSS growth per target (slope over the sizes) |", "|---|---:|"]
    for source, rows in results.items():
        lines.append("| %s | %.0f bytes |" % (source, slope(sizes, [r[2] for r in rows])))
    return "\n".join(lines) + "\n"


def plot(results, sizes, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for source, rows in results.items():
        axes[0].plot(sizes, [r[0] for r in rows], marker="o", label=source)
        axes[1].plot(sizes, [r[1] for r in rows], marker="o", label=source)
        axes[2].plot(sizes, [r[2] / 2**20 for r in rows], marker="o", label=source)
    for axis, title in zip(axes, ("fetch time (s)", "agent CPU per fetch (s)", "agent RSS (MiB)")):
        axis.set_title(title)
        axis.set_xlabel("targets")
        axis.grid(True, alpha=0.3)
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rail-exporter", required=True)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--refreshes", type=int, default=5)
    parser.add_argument("--interval", type=int, default=5, help="refresh interval, seconds")
    parser.add_argument("--table", help="write the markdown table here")
    parser.add_argument("--plot", help="write the plot (PNG) here")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results = {}
    for source in args.sources.split(","):
        results[source] = []
        for size in sizes:
            row = measure(os.path.abspath(args.rail_exporter), source, size, args.refreshes,
                          args.interval)
            print("%s %d: fetch %.3f s, CPU %.3f s, RSS %.1f MiB"
                  % (source, size, row[0], row[1], row[2] / 2**20), flush=True)
            results[source].append(row)
    text = table(results, sizes)
    print(text)
    if args.table:
        with open(args.table, "w", encoding="utf-8") as f:
            f.write(text)
    if args.plot:
        plot(results, sizes, args.plot)


if __name__ == "__main__":
    sys.exit(main())
