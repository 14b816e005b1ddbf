#!/usr/bin/python3
"""CPU cost of the agent's own fabric sampling (health.fabric_sample_interval), per rail, on veths.

Needs root: for each N of --rails (default 2, 8, 32) it makes a scratch network namespace
(--netns, default "rlfsbench"; one left by an earlier run is removed first) holding N veths
fs0a .. fs<N-1>a and, with --other-netdevs M, M more (o<i>a) that are no rail, whose peers are
in a second namespace (<netns>-peer), so that the agent's namespace holds exactly those and lo;
both are removed on exit. For each run (default 3) it starts two agents in turn inside the
namespace, each with a configuration listing fs0a .. fs<N-1>a as rails:

  sampled   health: {fabric_sample_interval: --interval (default 100ms)}
  off       health: {fabric_sample_interval: 0s}, the baseline (the counters are then sampled
            only at a scrape, and nothing scrapes)

Each agent is waited for on /-/ready (never /metrics), left to settle (--settle seconds), then its
CPU time is read from /proc/<pid>/stat (utime + stime, all its threads; CLK_TCK ticks) and from
the sum of /proc/<pid>/task/*/schedstat (nanoseconds, the same threads) at the start and end of
--seconds (default 20) with no scraping at all. The sample count of the window is
rail_fabric_samples_total read by a scrape just before and just after it (outside the CPU
readings) where the agent exports it, else --seconds / --interval (the table says which).

  cost per sample = (CPU of sampled - CPU of off, same N, same run) / samples in the window

Without the counter, samples = (window - that extra CPU) / interval: the sampler waits the
interval after each sample, and a sample's wall time is taken to be its CPU time (one thread on
an otherwise idle machine).

Without RDMA devices the agent's inventory holds every netdev of its namespace but lo, and each
sample reads them all: --other-netdevs shows what netdevs that are no rail cost.

The figures are medians over the runs, of the schedstat reading (the /proc/<pid>/stat one is
shown beside it: at 10 ms a tick it is coarse for the small N). The last column is what that
costs at the default interval: one sample every 10 s, as % of one core per rail. The runs
alternate which agent goes first, so that both see the same machine noise.

Prints a markdown table and writes the raw figures as JSON with --json. No performance target is
checked; it exits non-zero only when something cannot be set up or an agent fails.

  bench/fabric_sampling.py [--binary PATH] [--rails 2,8,32] [--runs 3] [--seconds 20]
                           [--interval 100ms] [--settle 2] [--other-netdevs M]
                           [--netns NAME] [--json FILE]
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")
LISTENING = re.compile(r"listening on port\(s\) (\d+)")
STARTUP_TIMEOUT = 15.0  # seconds for an agent to log its port and answer /-/ready
STOP_TIMEOUT = 5.0  # seconds between SIGTERM and SIGKILL
DEFAULT_INTERVAL_SECONDS = 10.0  # health.fabric_sample_interval's default
SAMPLES_METRIC = "rail_fabric_samples_total"


class BenchError(Exception):
    pass


def run(argv, check=True, timeout=30):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL)
    if check and result.returncode != 0:
        raise BenchError("%s: exit %d\n%s" % (" ".join(argv), result.returncode, result.stderr))
    return result


def duration_seconds(text):
    """"100ms", "2s", "1m" as seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", text)
    if not match:
        raise argparse.ArgumentTypeError("a duration such as 100ms, 2s or 1m, not %r" % text)
    return float(match.group(1)) * {"ms": 1e-3, "s": 1.0, "m": 60.0}[match.group(2)]


# -- the scratch namespace ----------------------------------------------------------------------

def netns_exists(ns):
    return ns in run(["ip", "netns", "list"]).stdout.split()


def netns_down(ns):
    if netns_exists(ns):
        run(["ip", "netns", "delete", ns])


def batch(ns, commands):
    subprocess.run(["ip", "-n", ns, "-batch", "-"], input="\n".join(commands) + "\n", text=True,
                   capture_output=True, check=True, timeout=60)


def netns_up(ns, peer_ns, rails, others):
    """Namespace ns with loopback up, `rails` veths fs<i>a and `others` veths o<i>a, all up, their
    peers (fs<i>b, o<i>b, up) in peer_ns; returns the rails' netdevs (fs<i>a)."""
    for name in (ns, peer_ns):
        netns_down(name)
        run(["ip", "netns", "add", name])
        run(["ip", "-n", name, "link", "set", "lo", "up"])
    names = ["fs%d" % i for i in range(rails)] + ["o%d" % i for i in range(others)]
    batch(ns, ["link add %sa type veth peer name %sb netns %s" % (n, n, peer_ns) for n in names] +
          ["link set %sa up" % n for n in names])
    batch(peer_ns, ["link set %sb up" % n for n in names])
    netdevs = ["fs%da" % i for i in range(rails)]
    deadline = time.monotonic() + 10
    for netdev in ["%sa" % n for n in names]:  # a veth's carrier comes up asynchronously
        while run(["ip", "netns", "exec", ns, "cat",
                   "/sys/class/net/%s/operstate" % netdev]).stdout.strip() != "up":
            if time.monotonic() > deadline:
                raise BenchError("%s in %s did not come up within 10 s" % (netdev, ns))
            time.sleep(0.05)
    return netdevs


# -- one agent ------------------------------------------------------------------------------------

def cpu_ticks(pid):
    """utime + stime of the process (all threads), in CLK_TCK ticks."""
    with open("/proc/%d/stat" % pid, encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def schedstat_ns(pid):
    """Time on CPU of every thread of the process now, in nanoseconds (first field of each
    /proc/<pid>/task/<tid>/schedstat); None where the kernel has no schedstat."""
    total = 0
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError as error:
        raise BenchError("pid %d is gone: %s" % (pid, error))
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid), encoding="ascii") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            if not os.path.exists("/proc/%d/task/%s" % (pid, tid)):
                continue  # a thread that ended in between
            return None
    return total


class Agent:
    """rail_exporter in namespace ns on 127.0.0.1, port 0; stderr in a log file."""

    def __init__(self, binary, ns, config, log_path):
        self.ns = ns
        self.log_path = log_path
        self.log = open(log_path, "w", encoding="utf-8")
        # ip netns exec execs the agent: the child's pid is the agent's.
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, binary, "--config.file=" + config,
             "--web.listen-address=127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        self.pid = self.proc.pid
        self.port = self._wait_port()
        self._wait_ready()

    def log_text(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def _wait_port(self):
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            match = LISTENING.search(self.log_text())
            if match:
                return int(match.group(1))
            if self.proc.poll() is not None:
                raise BenchError("agent exited (rc %s):\n%s" % (self.proc.returncode,
                                                                 self.log_text()))
            if time.monotonic() > deadline:
                raise BenchError("agent logged no port within %.0f s:\n%s" % (
                    STARTUP_TIMEOUT, self.log_text()))
            time.sleep(0.05)

    def get(self, path):
        result = run(["ip", "netns", "exec", self.ns, "curl", "-s", "--max-time", "10",
                      "-H", "Accept-Encoding: identity", "-w", "\n%{http_code}",
                      "http://127.0.0.1:%d%s" % (self.port, path)], check=False)
        body, _, code = result.stdout.rpartition("\n")
        return (int(code) if code.isdigit() else 0), body

    def _wait_ready(self):
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while self.get("/-/ready")[0] != 200:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise BenchError("agent did not answer /-/ready:\n" + self.log_text())
            time.sleep(0.05)

    def samples_taken(self):
        """rail_fabric_samples_total from a scrape, or None where it is not exported."""
        code, body = self.get("/metrics")
        if code != 200:
            raise BenchError("scrape: HTTP %d" % code)
        match = re.search(r"^%s(?:\{[^}]*\})? (\S+)$" % SAMPLES_METRIC, body, re.M)
        return float(match.group(1)) if match else None

    def cpu(self):
        return cpu_ticks(self.pid), schedstat_ns(self.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT)
        self.log.close()
        return self.proc.returncode


def measure(binary, ns, tmp, netdevs, interval, seconds, settle, tag):
    """One agent on netdevs with fabric_sample_interval `interval` ("0s": off), idle for
    `seconds`: {"stat_s", "sched_s", "samples", "wall_s"}."""
    config = os.path.join(tmp, tag + ".yaml")
    with open(config, "w", encoding="utf-8") as f:
        f.write("rails:\n")
        for i, netdev in enumerate(netdevs):
            f.write("  - {name: rail%d, netdev: %s}\n" % (i, netdev))
        f.write("health: {fabric_sample_interval: %s}\n" % interval)
    agent = Agent(binary, ns, config, os.path.join(tmp, tag + ".log"))
    try:
        time.sleep(settle)  # start-up work (the probe worker, the baseline) out of the window
        samples_before = agent.samples_taken()
        time.sleep(0.5)  # the scrape's own work out of the window
        ticks0, sched0 = agent.cpu()
        wall0 = time.monotonic()
        time.sleep(seconds)  # the measured window: nothing talks to the agent
        ticks1, sched1 = agent.cpu()
        wall = time.monotonic() - wall0
        samples_after = agent.samples_taken()
        if agent.proc.poll() is not None:
            raise BenchError("agent exited during the run:\n" + agent.log_text())
    finally:
        rc = agent.stop()
    if rc not in (0, None):
        raise BenchError("agent %s exited %s on SIGTERM:\n%s" % (tag, rc, agent.log_text()))
    samples = None
    if samples_before is not None and samples_after is not None:
        samples = samples_after - samples_before
    return {"stat_s": (ticks1 - ticks0) / CLK_TCK,
            "sched_s": None if sched0 is None or sched1 is None else (sched1 - sched0) / 1e9,
            "samples": samples, "wall_s": wall}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, pattern):
    return "n/a" if value is None else pattern % value


def interrupted(*_):
    raise KeyboardInterrupt()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "src", "rail_exporter"))
    parser.add_argument("--rails", default="2,8,32")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval", default="100ms")
    parser.add_argument("--settle", type=float, default=2.0)
    parser.add_argument("--other-netdevs", type=int, default=0)
    parser.add_argument("--netns", default="rlfsbench")
    parser.add_argument("--json")
    args = parser.parse_args()
    interval_s = duration_seconds(args.interval)
    if interval_s <= 0:
        parser.error("--interval must be positive (0s is the baseline, run anyway)")
    counts = sorted({int(n) for n in args.rails.split(",")})
    if os.geteuid() != 0:
        sys.exit("bench/fabric_sampling.py: must run as root (network namespaces)")
    if not os.access(args.binary, os.X_OK):
        sys.exit("bench/fabric_sampling.py: no agent at %s (--binary)" % args.binary)

    # SIGTERM ends the run as Ctrl-C does, through the finally below.
    signal.signal(signal.SIGTERM, interrupted)
    raw = {n: {"sampled": [], "off": []} for n in counts}
    tmp = tempfile.mkdtemp(prefix="rail-fabric-bench-")
    peer_ns = args.netns + "-peer"
    try:
        for n in counts:
            netdevs = netns_up(args.netns, peer_ns, n, args.other_netdevs)
            for run_index in range(args.runs):
                order = ("sampled", "off") if run_index % 2 == 0 else ("off", "sampled")
                for mode in order:
                    interval = args.interval if mode == "sampled" else "0s"
                    tag = "n%d-%s-%d" % (n, mode, run_index)
                    result = measure(args.binary, args.netns, tmp, netdevs[:n], interval,
                                     args.seconds, args.settle, tag)
                    raw[n][mode].append(result)
                    print("run %d, %2d rails, %-7s: %.3f s CPU (stat), %s s (schedstat), "
                          "samples %s" % (run_index + 1, n, mode, result["stat_s"],
                                          fmt(result["sched_s"], "%.4f"),
                                          fmt(result["samples"], "%.0f")),
                          file=sys.stderr, flush=True)
    except subprocess.CalledProcessError as error:
        sys.exit("bench/fabric_sampling.py: %s: %s" % (" ".join(error.cmd), error.stderr))
    except BenchError as error:
        sys.exit("bench/fabric_sampling.py: %s" % error)
    finally:
        netns_down(args.netns)
        netns_down(peer_ns)
        if not os.environ.get("RAIL_KEEP_LOGS"):
            subprocess.run(["rm", "-rf", tmp], check=False)

    rows = []
    counted = True
    for n in counts:
        per_sample = {"sched": [], "stat": []}  # schedstat first: its estimate is shown
        for sampled, off in zip(raw[n]["sampled"], raw[n]["off"]):
            for key in per_sample:
                a, b = sampled[key + "_s"], off[key + "_s"]
                if a is None or b is None:
                    per_sample[key].append(None)
                    continue
                samples = sampled["samples"]
                if samples is None:  # the waits plus the samples fill the window
                    counted = False
                    samples = (sampled["wall_s"] - (a - b)) / interval_s
                    sampled.setdefault("estimated_samples", samples)
                per_sample[key].append((a - b) / samples)
        sched = median(per_sample["sched"])
        stat = median(per_sample["stat"])
        best = sched if sched is not None else stat
        rows.append({
            "rails": n,
            "samples_per_run": median([r["samples"] if r["samples"] is not None
                                       else r.get("estimated_samples")
                                       for r in raw[n]["sampled"]]),
            "off_cpu_percent": median([(r["sched_s"] if r["sched_s"] is not None else r["stat_s"])
                                       / r["wall_s"] * 100 for r in raw[n]["off"]]),
            "cpu_s_per_sample": best,
            "stat_cpu_s_per_sample": stat,
            "us_per_sample": best * 1e6,
            "us_per_rail_per_sample": best * 1e6 / n,
            "percent_per_rail_at_10s": best / n / DEFAULT_INTERVAL_SECONDS * 100,
        })

    print()
    print("Fabric sampling cost, %s rails on veths%s, fabric_sample_interval %s vs 0s, %.0f s "
          "idle (no scrapes), median of %d runs; CPU from the threads' schedstat "
          "(/proc/<pid>/stat utime+stime beside it)%s." % (
              ", ".join(map(str, counts)),
              " and %d other netdevs" % args.other_netdevs if args.other_netdevs else "",
              args.interval, args.seconds, args.runs,
              "" if counted else "; samples estimated as (window - extra CPU) / interval (the "
              "agent exports no " + SAMPLES_METRIC + ")"))
    print()
    print("| rails | samples / run | baseline agent CPU (0s) | CPU s / sample | (stat) | "
          "µs / sample | µs / rail / sample | CPU % / rail at 10s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| %d | %s | %.3f %% | %.2e | %s | %.1f | %.1f | %.6f %% |" % (
            row["rails"], fmt(row["samples_per_run"], "%.0f"), row["off_cpu_percent"],
            row["cpu_s_per_sample"], fmt(row["stat_cpu_s_per_sample"], "%.2e"),
            row["us_per_sample"], row["us_per_rail_per_sample"],
            row["percent_per_rail_at_10s"]))
    if len(rows) >= 2:  # least squares: µs per sample = fixed + per_rail * rails
        xs = [row["rails"] for row in rows]
        ys = [row["us_per_sample"] for row in rows]
        mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
        slope = (sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) /
                 sum((x - mean_x) ** 2 for x in xs))
        print()
        print("Linear fit: %.1f µs per sample + %.1f µs per rail per sample; at 10 s, "
              "%.6f %% of a core per rail." % (mean_y - slope * mean_x, slope,
                                                slope * 1e-6 / DEFAULT_INTERVAL_SECONDS * 100))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"args": vars(args), "raw": raw, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
