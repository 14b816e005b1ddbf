#!/usr/bin/python3
"""rail_exporter's probes vs the reference tools, side by side in the lab (scripts/lab).

Needs root and a lab that is up (LAB_PREFIX=<prefix> scripts/lab up): namespaces <prefix>-a and
<prefix>-b, rail 0 = ra0 10.200.0.1 <-> rb0 10.200.0.2. bench/run_probes brings one up and down.

One responder agent runs in <prefix>-b for the whole run; our probes are one-off
`rail_exporter probe` runs from <prefix>-a. Every comparison alternates ours and the reference,
round by round (ours first in even rounds, the reference first in odd ones), so that both see
the same machine noise. Figures are medians over the rounds; the ratio is ours / reference.

  tcp1, tcp4   tcp_throughput --streams N  vs  iperf3 -c -P N -l SIZE -t T (receiver figure),
               both bound to rail 0's addresses. Target ours/ref >= 0.95.
  ucx          ucx_throughput put (and am) 1 MiB, window W  vs  ucx_perftest -t ucp_put_bw
               (ucp_am_bw) -s 1 MiB -O W, UCX_TLS=tcp, UCX_NET_DEVICES=ra0/rb0, -n chosen so that
               it runs about T seconds. ucx_perftest prints MB/s with MB = 2^20 bytes (its message
               rate times 1 MiB equals its MB/s). Target ours/ref >= 0.95.
               ucx_rtt p50 8 B  vs  2 x ucx_perftest -t tag_lat -s 8 "50.0%ile" (it prints half
               the round trip). Target ours/ref <= 1.10.
  tcprtt       tcp_rtt p50  vs  2 x sockperf ping-pong --tcp "percentile 50.000" (sockperf
               prints latency = half the round trip by default). sockperf refuses messages
               under 14 B, so the ratio is taken at 14 B on both sides; ours at 8 B is also shown.
               Target ours/ref <= 1.10.
  vram         ucx_throughput put 1 MiB on rail 0 with --memory cuda vs the same with --memory
               host (not in the default list: it needs --fake-cuda, the fake libcuda.so.1 the
               test build makes in tests/fake_cuda/, found by both agents and the probe through
               LD_LIBRARY_PATH). Debian's UCX takes host memory only, so the cuda runs are staged
               through pinned host memory; the fake's device memory is host memory, so the ratio
               is the cost of staging itself (two extra copies per message), not of a GPU's
               PCIe link. Shown against the gpu_memory_throughput check's default 0.5.
  cpu          CPU of the two agents idle for --idle-seconds (the responder in -b, which has
               served every probe of this run, and a probing agent in -a whose configured probes
               are not due in the window): utime+stime from /proc/<pid>/stat, % of one core.
               Target < 1%. Also the CPU each probe run cost (local_cpu_seconds /
               peer_cpu_seconds from its JSON) next to the reference tools' (rusage of the
               client and, where it exits, the server process).

Prints markdown tables and writes raw figures as JSON (--json). It checks no target by its exit
status: it exits non-zero only when something cannot be started or a run fails.
"""

import argparse
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from scrape_common import cpu_ns

CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1 << 20
A_RAIL0, B_RAIL0 = "10.200.0.1", "10.200.0.2"
RESPONDER_PORT = 9841
UCX_UNAVAILABLE = "this build cannot run"


class BenchError(Exception):
    pass


class Unavailable(Exception):
    """Our build cannot run this probe kind yet."""


# ---------------------------------------------------------------------------------------------
# helpers

def loadavg():
    with open("/proc/loadavg", encoding="ascii") as f:
        return [float(x) for x in f.read().split()[:3]]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def thread_ticks(pid):
    """{"tid comm": ticks} of every thread of pid."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii") as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out[f"{tid} {comm}"] = int(fields[11]) + int(fields[12])
    return out


def schedstat_seconds(pid):
    """CPU time of every live thread of pid, in seconds (scrape_common.cpu_ns)."""
    return cpu_ns(pid) / 1e9


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median(values):
    return statistics.median(values) if values else None


def ns_argv(namespace, argv):
    return ["ip", "netns", "exec", namespace] + list(argv)


def run(argv, env=None, timeout=120.0, check=True):
    """Runs a command to its end. Returns (stdout, stderr, rc, cpu seconds of the child).

    The child's CPU comes from RUSAGE_CHILDREN around its wait: nothing else is reaped meanwhile
    (background servers are reaped only when stopped). `ip netns exec` execs the command, so the
    figure is the tool's own."""
    before = children_cpu()
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        done = subprocess.run(argv, env=full_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        raise BenchError(f"timed out after {timeout:.0f} s: {' '.join(argv)}") from error
    cpu = children_cpu() - before
    if check and done.returncode != 0:
        raise BenchError(f"exit status {done.returncode}: {' '.join(argv)}\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout, done.stderr, done.returncode, cpu


class Background:
    """A long-running process in a namespace, stopped (by its own pid) at the end."""

    def __init__(self, namespace, argv, env=None, log_path=None):
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.argv = argv
        self.log_path = log_path
        self.log = open(log_path, "w", encoding="utf-8") if log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(ns_argv(namespace, argv), env=full_env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.process.pid
        self.cpu_seconds = None

    def alive(self):
        return self.process.poll() is None

    def log_text(self):
        if not self.log_path:
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait(self, timeout):
        """Waits for a process that ends on its own; returns its CPU seconds (rusage)."""
        before = children_cpu()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise BenchError(f"{self.argv[0]} did not end within {timeout:.0f} s")
        self.cpu_seconds = children_cpu() - before
        self._close()
        return self.cpu_seconds

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close()

    def _close(self):
        if self.log not in (subprocess.DEVNULL, None):
            self.log.close()
            self.log = None


def wait_listening(namespace, port, proc, timeout=10.0):
    """Until a TCP listener on `port` exists in the namespace."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and not proc.alive():
            raise BenchError(f"{proc.argv[0]} exited before listening:\n{proc.log_text()[-2000:]}")
        out, _, _, _ = run(ns_argv(namespace, ["ss", "-Hltn", f"sport = :{port}"]), check=False)
        if out.strip():
            return
        time.sleep(0.1)
    raise BenchError(f"nothing listens on port {port} in {namespace} after {timeout:.0f} s")


# ---------------------------------------------------------------------------------------------
# rail_exporter

class Lab:
    def __init__(self, args, workdir):
        self.args = args
        self.ns_a = f"{args.lab_prefix}-a"
        self.ns_b = f"{args.lab_prefix}-b"
        self.workdir = workdir
        self.exporter = os.path.abspath(args.rail_exporter)
        self.secret = os.path.join(workdir, "secret")
        with open(os.open(self.secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                  encoding="ascii") as f:
            f.write(os.urandom(24).hex() + "\n")
        self.config_a = self._write_config("a.yaml", "ra", [])
        self.config_b = self._write_config("b.yaml", "rb", [])
        self.background = []

    def _write_config(self, name, prefix, extra_lines):
        path = os.path.join(self.workdir, name)
        lines = [
            f"rails: [{{name: rail0, netdev: {prefix}0}}, {{name: rail1, netdev: {prefix}1}}]",
            f"responder: {{listen_address: \":{RESPONDER_PORT}\", secret_file: {self.secret}}}",
        ] + extra_lines
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start(self, namespace, argv, env=None, log_name=None):
        log_path = os.path.join(self.workdir, log_name) if log_name else None
        proc = Background(namespace, argv, env=env, log_path=log_path)
        self.background.append(proc)
        return proc

    def stop_all(self):
        for proc in reversed(self.background):
            proc.stop()
        self.background = []

    def start_agent(self, namespace, config, log_name):
        proc = self.start(namespace, [self.exporter, f"--config.file={config}",
                                      "--web.listen-address=127.0.0.1:0"], log_name=log_name)
        wait_listening(namespace, RESPONDER_PORT, proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            match = re.search(r"listening on port\(s\) (\d+)", proc.log_text())
            if match:
                proc.metrics_port = int(match.group(1))
                return proc
            time.sleep(0.1)
        raise BenchError(f"agent in {namespace} did not log its metrics port:\n{proc.log_text()}")

    def scrape(self, namespace, agent):
        out, _, _, _ = run(ns_argv(namespace, ["curl", "-sS", "--max-time", "10",
                                               f"http://127.0.0.1:{agent.metrics_port}/metrics"]))
        return out

    def probe(self, kind, extra, duration):
        argv = ns_argv(self.ns_a, [
            self.exporter, "probe", "--peer", f"{B_RAIL0}:{RESPONDER_PORT}", "--kind", kind,
            "--rail", "rail0", "--duration", f"{duration}s", "--output", "json",
            f"--config.file={self.config_a}"] + extra)
        out, err, rc, cpu = run(argv, timeout=duration + 60, check=False)
        if UCX_UNAVAILABLE in out + err:
            raise Unavailable((out + err).strip().splitlines()[-1])
        if rc != 0:
            raise BenchError(f"probe {kind} {' '.join(extra)}: exit status {rc}\n{out}{err}")
        try:
            result = json.loads(out)[0]
        except (ValueError, IndexError) as error:
            raise BenchError(f"probe {kind}: unreadable JSON output:\n{out}{err}") from error
        if not result.get("success"):
            raise BenchError(f"probe {kind} failed: {result.get('error_reason')}: "
                             f"{result.get('error_message')}")
        result["_process_cpu_seconds"] = cpu
        return result


def ucx_kinds_available(lab):
    try:
        lab.probe("ucx_throughput", ["--size", str(MIB), "--ucx-transports", "tcp"], 1)
        return True, ""
    except Unavailable as why:
        return False, str(why)


# ---------------------------------------------------------------------------------------------
# comparisons

def alternate(rounds, ours, reference, log_prefix, results):
    """Runs ours() and reference() alternately; each returns a dict with a "value"."""
    for round_index in range(rounds):
        order = [("ours", ours), ("reference", reference)]
        if round_index % 2:
            order.reverse()
        for side, fn in order:
            load_before = loadavg()[0]
            figure = fn()
            figure["round"] = round_index
            figure["load1_before"] = load_before
            figure["load1_after"] = loadavg()[0]
            results[side].append(figure)
            print(f"  {log_prefix} round {round_index + 1}/{rounds} {side:9s} "
                  f"{figure['label']}  (load {figure['load1_after']:.2f})", flush=True)


def compare_tcp_throughput(lab, args, streams):
    port = 5201
    server = lab.start(lab.ns_b, ["iperf3", "-s", "-B", B_RAIL0, "-p", str(port)],
                       log_name=f"iperf3-server-P{streams}.log")
    wait_listening(lab.ns_b, port, server)
    size = args.tcp_size
    results = {"ours": [], "reference": []}

    def ours():
        r = lab.probe("tcp_throughput", ["--streams", str(streams), "--size", str(size)],
                      args.duration)
        value = r["throughput_bytes_per_second"]
        return {"value": value, "label": f"{value * 8 / 1e9:7.2f} Gbit/s",
                "seconds": r["seconds"], "bytes": r["bytes"],
                "local_cpu_seconds": r.get("local_cpu_seconds"),
                "peer_cpu_seconds": r.get("peer_cpu_seconds"),
                "process_cpu_seconds": r["_process_cpu_seconds"]}

    def reference():
        argv = ["iperf3", "-c", B_RAIL0, "-B", A_RAIL0, "-p", str(port), "-P", str(streams),
                "-t", str(args.duration), "-l", str(size), "-J"]
        out, err, rc, cpu = run(ns_argv(lab.ns_a, argv), timeout=args.duration + 60, check=False)
        if rc != 0:
            raise BenchError(f"iperf3 client: exit status {rc}\n{out[-3000:]}{err}")
        end = json.loads(out)["end"]
        received = end["sum_received"]
        value = received["bits_per_second"] / 8
        util = end.get("cpu_utilization_percent", {})
        seconds = received["seconds"]
        return {"value": value, "label": f"{value * 8 / 1e9:7.2f} Gbit/s",
                "seconds": seconds, "bytes": received["bytes"],
                "local_cpu_seconds": cpu,
                # iperf3 reports the server's CPU as a percentage of the test's wall time.
                "peer_cpu_seconds": util.get("remote_total", 0) / 100 * seconds,
                "sender_seconds": end["sum_sent"]["seconds"]}

    try:
        alternate(args.runs, ours, reference, f"tcp_throughput P{streams}", results)
    finally:
        server.stop()
        lab.background.remove(server)
    return results


def ucx_perftest_final(out):
    """The `Final:` line of ucx_perftest: iterations, p50, avg, overall, bw avg, bw overall,
    msg rate avg, msg rate overall."""
    for line in out.splitlines():
        if line.startswith("Final:"):
            fields = line.split()[1:]
            if len(fields) >= 8:
                numbers = [float(x.replace(",", "")) for x in fields[:8]]
                keys = ["iterations", "p50_usec", "avg_usec", "overall_usec",
                        "bw_avg_mib_s", "bw_overall_mib_s", "msg_rate_avg", "msg_rate_overall"]
                return dict(zip(keys, numbers))
    raise BenchError(f"no Final: line in ucx_perftest output:\n{out[-3000:]}")


class PerftestRunner:
    next_port = 13401  # a new port (and server log) for every ucx_perftest run of the whole run

    def __init__(self, lab, args):
        self.lab = lab
        self.args = args

    def run(self, test, size, iterations, extra=()):
        port = PerftestRunner.next_port
        PerftestRunner.next_port += 1
        env_b = {"UCX_TLS": self.args.ucx_tls, "UCX_NET_DEVICES": "rb0"}
        env_a = {"UCX_TLS": self.args.ucx_tls, "UCX_NET_DEVICES": "ra0"}
        server = self.lab.start(self.lab.ns_b, ["ucx_perftest", "-p", str(port)], env=env_b,
                                log_name=f"ucx_perftest-server-{port}.log")
        try:
            wait_listening(self.lab.ns_b, port, server)
            argv = ["ucx_perftest", B_RAIL0, "-p", str(port), "-t", test, "-s", str(size),
                    "-n", str(iterations)] + list(extra)
            out, err, rc, cpu = run(ns_argv(self.lab.ns_a, argv), env=env_a, timeout=300,
                                    check=False)
            if rc != 0:
                raise BenchError(f"ucx_perftest client: exit status {rc}\n{out[-3000:]}{err}\n"
                                 f"server:\n{server.log_text()[-2000:]}")
            server_cpu = server.wait(30)
        finally:
            server.stop()
            self.lab.background.remove(server)
        final = ucx_perftest_final(out)
        final["client_cpu_seconds"] = cpu
        final["server_cpu_seconds"] = server_cpu
        return final


def compare_ucx_throughput(lab, args, operation, test):
    perftest = PerftestRunner(lab, args)
    size = args.ucx_size
    window = args.ucx_window
    extra = ["-O", str(window)]
    # Calibration (not counted, and a warm-up): -n such that ucx_perftest runs ~duration.
    calibration = perftest.run(test, size, 500, extra)
    rate = calibration["bw_overall_mib_s"] * MIB
    iterations = max(200, int(rate * args.duration / size))
    print(f"  ucx {operation}: ucx_perftest calibration {rate * 8 / 1e9:.2f} Gbit/s -> "
          f"-n {iterations}", flush=True)
    results = {"ours": [], "reference": [], "reference_iterations": iterations,
               "calibration": calibration}

    def ours():
        r = lab.probe("ucx_throughput", ["--operation", operation, "--size", str(size),
                                         "--window", str(window),
                                         "--ucx-transports", args.ucx_tls], args.duration)
        value = r["throughput_bytes_per_second"]
        return {"value": value, "label": f"{value * 8 / 1e9:7.2f} Gbit/s",
                "seconds": r["seconds"], "bytes": r["bytes"],
                "local_cpu_seconds": r.get("local_cpu_seconds"),
                "peer_cpu_seconds": r.get("peer_cpu_seconds"),
                "process_cpu_seconds": r["_process_cpu_seconds"],
                "lanes": r.get("lanes")}

    def reference():
        final = perftest.run(test, size, iterations, extra)
        value = final["bw_overall_mib_s"] * MIB
        seconds = final["iterations"] / final["msg_rate_overall"]
        return {"value": value, "label": f"{value * 8 / 1e9:7.2f} Gbit/s", "seconds": seconds,
                "local_cpu_seconds": final["client_cpu_seconds"],
                "peer_cpu_seconds": final["server_cpu_seconds"], "final": final}

    alternate(args.runs, ours, reference, f"ucx_throughput {operation}", results)
    return results


def compare_vram(lab, args):
    """ucx_throughput put with device memory (staged) against host memory, same rail, alternating."""
    results = {"ours": [], "reference": []}

    def figure(memory):
        r = lab.probe("ucx_throughput", ["--operation", "put", "--size", str(args.ucx_size),
                                         "--window", str(args.ucx_window), "--memory", memory,
                                         "--ucx-transports", args.ucx_tls], args.duration)
        if r.get("memory_path") != ("staged" if memory == "cuda" else "host"):
            raise BenchError(f"--memory {memory}: memory_path {r.get('memory_path')}")
        value = r["throughput_bytes_per_second"]
        return {"value": value, "label": f"{value * 8 / 1e9:7.2f} Gbit/s",
                "seconds": r["seconds"], "bytes": r["bytes"],
                "memory_path": r.get("memory_path"),
                "local_cpu_seconds": r.get("local_cpu_seconds"),
                "peer_cpu_seconds": r.get("peer_cpu_seconds"),
                "process_cpu_seconds": r["_process_cpu_seconds"]}

    alternate(args.runs, lambda: figure("cuda"), lambda: figure("host"), "ucx_throughput vram",
              results)
    return results


def compare_ucx_rtt(lab, args):
    perftest = PerftestRunner(lab, args)
    size = 8
    calibration = perftest.run("tag_lat", size, 20000)
    round_trip = 2 * calibration["overall_usec"] * 1e-6
    iterations = max(10000, min(2_000_000, int(args.duration / round_trip)))
    print(f"  ucx_rtt: ucx_perftest calibration {round_trip * 1e6:.1f} us -> -n {iterations}",
          flush=True)
    results = {"ours": [], "reference": [], "reference_iterations": iterations,
               "calibration": calibration}

    def ours():
        r = lab.probe("ucx_rtt", ["--size", str(size), "--ucx-transports", args.ucx_tls],
                      args.duration)
        rtt = r["rtt_round_trip_seconds"]
        return {"value": rtt["p50"], "label": f"{rtt['p50'] * 1e6:7.1f} us", "rtt": rtt,
                "local_cpu_seconds": r.get("local_cpu_seconds"),
                "peer_cpu_seconds": r.get("peer_cpu_seconds"),
                "process_cpu_seconds": r["_process_cpu_seconds"]}

    def reference():
        final = perftest.run("tag_lat", size, iterations)
        # ucx_perftest prints half the round trip; its 50.0%ile is over the last <= 2048
        # iterations of the final report interval, "overall" is the mean of the whole run.
        value = 2 * final["p50_usec"] * 1e-6
        return {"value": value, "label": f"{value * 1e6:7.1f} us",
                "round_trip_mean": 2 * final["overall_usec"] * 1e-6,
                "local_cpu_seconds": final["client_cpu_seconds"],
                "peer_cpu_seconds": final["server_cpu_seconds"], "final": final}

    alternate(args.runs, ours, reference, "ucx_rtt 8 B", results)
    return results


SOCKPERF_P50 = re.compile(r"percentile 50\.000 =\s*([0-9.]+)")
SOCKPERF_AVG = re.compile(r"avg-(?:latency|rtt)=([0-9.]+)")


def compare_tcp_rtt(lab, args):
    port = 11111
    server = lab.start(lab.ns_b, ["sockperf", "server", "-i", B_RAIL0, "--tcp", "-p", str(port)],
                       log_name="sockperf-server.log")
    wait_listening(lab.ns_b, port, server)
    size = 14  # sockperf's minimum message
    results = {"ours": [], "reference": [], "ours_8B": []}

    def ours_probe(probe_size):
        r = lab.probe("tcp_rtt", ["--size", str(probe_size)], args.duration)
        rtt = r["rtt_round_trip_seconds"]
        return {"value": rtt["p50"], "label": f"{rtt['p50'] * 1e6:7.1f} us ({probe_size} B)",
                "rtt": rtt, "local_cpu_seconds": r.get("local_cpu_seconds"),
                "peer_cpu_seconds": r.get("peer_cpu_seconds"),
                "process_cpu_seconds": r["_process_cpu_seconds"]}

    def ours():
        figure = ours_probe(size)
        eight = ours_probe(8)
        eight["round"] = len(results["ours_8B"])
        eight["load1_after"] = loadavg()[0]
        results["ours_8B"].append(eight)
        figure["label"] += f", {eight['label'].strip()}"
        return figure

    def reference():
        server_ticks = cpu_ticks(server.pid)
        argv = ["sockperf", "ping-pong", "-i", B_RAIL0, "--tcp", "-p", str(port), "-m", str(size),
                "-t", str(args.duration)]
        out, err, rc, cpu = run(ns_argv(lab.ns_a, argv), timeout=args.duration + 60, check=False)
        text = out + err
        if rc != 0:
            raise BenchError(f"sockperf ping-pong: exit status {rc}\n{text[-3000:]}")
        p50 = SOCKPERF_P50.search(text)
        avg = SOCKPERF_AVG.search(text)
        if not p50:
            raise BenchError(f"no 'percentile 50.000' in sockperf output:\n{text[-3000:]}")
        value = 2 * float(p50.group(1)) * 1e-6  # sockperf's latency is half the round trip
        return {"value": value, "label": f"{value * 1e6:7.1f} us ({size} B)",
                "half_rtt_p50_usec": float(p50.group(1)),
                "half_rtt_avg_usec": float(avg.group(1)) if avg else None,
                "local_cpu_seconds": cpu,
                "peer_cpu_seconds": (cpu_ticks(server.pid) - server_ticks) / CLK_TCK}

    try:
        alternate(args.runs, ours, reference, "tcp_rtt", results)
    finally:
        server.stop()
        lab.background.remove(server)
    return results


def metric_sum(body, name):
    total = 0.0
    for line in body.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def idle_cpu(lab, args, responder, with_ucx):
    """Both agents idle for args.idle_seconds; returns figures per agent."""
    probes = [
        "  - {kind: tcp_throughput, rails: [rail0], interval: 100h, jitter: 0.5, duration: 2s}",
        "  - {kind: tcp_rtt, interval: 100h, jitter: 0.5, duration: 2s}",
    ]
    if with_ucx:
        probes += [
            "  - {kind: ucx_throughput, rails: [rail0], interval: 100h, jitter: 0.5, "
            "duration: 2s, ucx_transports: tcp}",
            "  - {kind: ucx_rtt, interval: 100h, jitter: 0.5, duration: 2s, ucx_transports: tcp}",
        ]
    config = lab._write_config("a-probing.yaml", "ra", [
        "peers: [{name: b, address: \"%s:%d\"}]" % (B_RAIL0, RESPONDER_PORT),
        "probes:"] + probes)
    prober = lab.start_agent(lab.ns_a, config, "agent-a-probing.log")
    try:
        time.sleep(args.idle_settle)  # start-up (inventory, first scrape) is not "between probes"
        agents = {"responder (b)": (lab.ns_b, responder), "prober (a)": (lab.ns_a, prober)}
        before_metrics = {k: lab.scrape(ns, p) for k, (ns, p) in agents.items()}
        before = {k: (cpu_ticks(p.pid), thread_ticks(p.pid), schedstat_seconds(p.pid))
                  for k, (_, p) in agents.items()}
        load_before = loadavg()
        start = time.monotonic()
        time.sleep(args.idle_seconds)
        elapsed = time.monotonic() - start
        after = {k: (cpu_ticks(p.pid), thread_ticks(p.pid), schedstat_seconds(p.pid))
                 for k, (_, p) in agents.items()}
        load_after = loadavg()
        after_metrics = {k: lab.scrape(ns, p) for k, (ns, p) in agents.items()}
        figures = {}
        for key in agents:
            ticks = after[key][0] - before[key][0]
            threads = {t: after[key][1][t] - before[key][1].get(t, 0) for t in after[key][1]}
            figures[key] = {
                "window_seconds": elapsed,
                "cpu_seconds": ticks / CLK_TCK,
                "percent_of_one_core": 100.0 * ticks / CLK_TCK / elapsed,
                "schedstat_cpu_seconds": after[key][2] - before[key][2],
                "schedstat_percent_of_one_core":
                    100.0 * (after[key][2] - before[key][2]) / elapsed,
                "threads": len(after[key][1]),
                "busiest_threads": dict(sorted(threads.items(), key=lambda kv: -kv[1])[:5]),
                "probe_runs_in_window": metric_sum(after_metrics[key], "rail_probe_runs_total")
                - metric_sum(before_metrics[key], "rail_probe_runs_total"),
                "probes_served_in_window":
                    metric_sum(after_metrics[key], "rail_responder_probes_total")
                    - metric_sum(before_metrics[key], "rail_responder_probes_total"),
                "load_before": load_before, "load_after": load_after,
            }
            f = figures[key]
            print(f"  idle {key}: {f['cpu_seconds']:.2f} CPU s in {elapsed:.0f} s = "
                  f"{f['percent_of_one_core']:.3f}% of one core (schedstat "
                  f"{f['schedstat_percent_of_one_core']:.4f}%), {f['threads']} threads, "
                  f"probes run {f['probe_runs_in_window']:.0f}, served "
                  f"{f['probes_served_in_window']:.0f}", flush=True)
        return figures
    finally:
        prober.stop()
        lab.background.remove(prober)


# ---------------------------------------------------------------------------------------------
# report

def summarise(results, higher_is_better, target):
    ours = [r["value"] for r in results["ours"]]
    ref = [r["value"] for r in results["reference"]]
    ours_m, ref_m = median(ours), median(ref)
    ratio = ours_m / ref_m if ours_m and ref_m else None
    paired = {}
    for r in results["ours"]:
        paired.setdefault(r["round"], {})["ours"] = r["value"]
    for r in results["reference"]:
        paired.setdefault(r["round"], {})["ref"] = r["value"]
    paired_ratios = [p["ours"] / p["ref"] for p in paired.values() if "ours" in p and "ref" in p]
    met = None
    if ratio is not None:
        met = ratio >= target if higher_is_better else ratio <= target
    loads = [r["load1_after"] for side in ("ours", "reference") for r in results[side]]
    return {"ours_median": ours_m, "reference_median": ref_m, "ratio": ratio,
            "paired_ratio_median": median(paired_ratios), "paired_ratios": paired_ratios,
            "ours_min": min(ours), "ours_max": max(ours), "reference_min": min(ref),
            "reference_max": max(ref), "target": target, "met": met,
            "load1_min": min(loads), "load1_max": max(loads),
            "ours_local_cpu_median": median([r["local_cpu_seconds"] for r in results["ours"]
                                             if r.get("local_cpu_seconds") is not None]),
            "ours_peer_cpu_median": median([r["peer_cpu_seconds"] for r in results["ours"]
                                            if r.get("peer_cpu_seconds") is not None]),
            "reference_local_cpu_median": median([r["local_cpu_seconds"]
                                                  for r in results["reference"]]),
            "reference_peer_cpu_median": median([r["peer_cpu_seconds"]
                                                 for r in results["reference"]]),
            # Throughput rows: bytes moved per CPU second of both sides together, a figure that
            # depends less on how much of the shared machine each tool got than the rate does.
            "ours_bytes_per_cpu_second": median(efficiency(results["ours"])),
            "reference_bytes_per_cpu_second": median(efficiency(results["reference"]))}


def efficiency(figures):
    out = []
    for r in figures:
        cpu = (r.get("local_cpu_seconds") or 0) + (r.get("peer_cpu_seconds") or 0)
        if r.get("seconds") and cpu > 0:
            out.append(r["value"] * r["seconds"] / cpu)
    return out


def fmt_gbit(v):
    return f"{v * 8 / 1e9:.2f} Gbit/s"


def fmt_us(v):
    return f"{v * 1e6:.1f} µs"


def print_report(rows, idle, notes, runs, duration):
    print()
    print(f"### Probes vs reference tools ({runs} alternating rounds, {duration} s each, "
          "medians)")
    print()
    print("| comparison | ours (median) | reference (median) | ratio | target | met? |")
    print("|---|---:|---:|---:|---|---|")
    for row in rows:
        if row.get("unavailable"):
            print(f"| {row['name']} | not available yet | — | — | {row['target_text']} | — |")
            continue
        s = row["summary"]
        fmt = row["fmt"]
        met = "yes" if s["met"] else "**no**"
        print(f"| {row['name']} | {fmt(s['ours_median'])} | {fmt(s['reference_median'])} | "
              f"{s['ratio']:.3f} | {row['target_text']} | {met} |")
    for key, f in (idle or {}).items():
        met = "yes" if f["percent_of_one_core"] < 1.0 else "**no**"
        print(f"| agent CPU between probes, {key}, {f['window_seconds']:.0f} s idle | "
              f"{f['percent_of_one_core']:.3f}% of one core (schedstat "
              f"{f['schedstat_percent_of_one_core']:.4f}%) | — | — | < 1% | {met} |")
    print()
    print("### Spread, noise and CPU per run (medians; CPU in seconds per run)")
    print()
    print("| comparison | ours min–max | reference min–max | median of paired ratios | "
          "load1 during runs | ours CPU local / peer | reference CPU client / server | "
          "GB per CPU-second ours / reference |")
    print("|---|---|---|---:|---|---|---|---|")
    for row in rows:
        if row.get("unavailable"):
            continue
        s = row["summary"]
        fmt = row["fmt"]

        def gb(v):
            return f"{v / 1e9:.2f}" if v else "—"

        def cpu(a, b):
            return f"{a:.2f} / {b:.2f}" if a is not None and b is not None else "—"

        print(f"| {row['name']} | {fmt(s['ours_min'])} – {fmt(s['ours_max'])} | "
              f"{fmt(s['reference_min'])} – {fmt(s['reference_max'])} | "
              f"{s['paired_ratio_median']:.3f} | {s['load1_min']:.2f} – {s['load1_max']:.2f} | "
              f"{cpu(s['ours_local_cpu_median'], s['ours_peer_cpu_median'])} | "
              f"{cpu(s['reference_local_cpu_median'], s['reference_peer_cpu_median'])} | "
              f"{gb(s['ours_bytes_per_cpu_second'])} / {gb(s['reference_bytes_per_cpu_second'])} |")
    print()
    for note in notes:
        print(f"* {note}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rail-exporter", required=True, help="the rail_exporter binary")
    parser.add_argument("--lab-prefix", default="rlb")
    parser.add_argument("--only", default="tcp1,tcp4,ucx,tcprtt,cpu",
                        help="comma-separated: tcp1, tcp4, ucx, tcprtt, cpu, vram")
    parser.add_argument("--fake-cuda", help="the fake libcuda.so.1 (vram)")
    parser.add_argument("--runs", type=int, default=5, help="rounds per comparison (>= 5)")
    parser.add_argument("--duration", type=int, default=5, help="seconds per run")
    parser.add_argument("--tcp-size", type=int, default=131072, help="TCP write size (-l)")
    parser.add_argument("--ucx-size", type=int, default=MIB)
    parser.add_argument("--ucx-window", type=int, default=16, help="--window / ucx_perftest -O")
    parser.add_argument("--ucx-tls", default="tcp")
    parser.add_argument("--ucx-am", action=argparse.BooleanOptionalAction, default=True,
                        help="also compare am with ucp_am_bw")
    parser.add_argument("--idle-seconds", type=float, default=60)
    parser.add_argument("--idle-settle", type=float, default=5)
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--workdir", help="keep configs and logs here (default: temporary)")
    args = parser.parse_args()
    only = set(x.strip() for x in args.only.split(",") if x.strip())
    unknown = only - {"tcp1", "tcp4", "ucx", "tcprtt", "cpu", "vram"}
    if unknown:
        parser.error(f"unknown comparisons: {', '.join(sorted(unknown))}")
    if "vram" in only and not args.fake_cuda:
        parser.error("vram needs --fake-cuda (the test build's tests/fake_cuda/libcuda.so.1)")
    if os.geteuid() != 0:
        raise BenchError("must run as root (ip netns exec)")

    own_tmp = None
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        workdir = args.workdir
    else:
        own_tmp = tempfile.TemporaryDirectory(prefix="probe-compare.")
        workdir = own_tmp.name
    lab = Lab(args, workdir)
    if args.fake_cuda:
        # Inherited by both agents (and their probe workers) and by every probe run.
        fake_config = os.path.join(workdir, "fake_cuda.json")
        with open(fake_config, "w", encoding="utf-8") as f:
            json.dump({"devices": [{"pci_bus_id": "0000:17:00.0", "name": "Fake GPU"}]}, f)
        os.environ["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(args.fake_cuda))
        os.environ["RAIL_FAKE_CUDA_CONFIG"] = fake_config
    for namespace in (lab.ns_a, lab.ns_b):
        out, _, rc, _ = run(["ip", "netns", "list"], check=False)
        if namespace not in out.split():
            raise BenchError(f"namespace {namespace} missing: run LAB_PREFIX={args.lab_prefix} "
                             "scripts/lab up")

    # UCX's tcp transport refuses a netdev that is not running yet (a veth's carrier comes up a
    # moment after `ip link set up`): "network device 'rb0' is not available".
    for namespace, devices in ((lab.ns_a, ("ra0", "ra1")), (lab.ns_b, ("rb0", "rb1"))):
        for device in devices:
            deadline = time.monotonic() + 10
            while True:
                out, _, _, _ = run(ns_argv(namespace, ["cat", f"/sys/class/net/{device}/operstate"]),
                                   check=False)
                if out.strip() == "up":
                    break
                if time.monotonic() > deadline:
                    raise BenchError(f"{device} in {namespace} is not up: {out.strip()}")
                time.sleep(0.1)

    raw = {"host": {"cpus": os.cpu_count(), "load_at_start": loadavg(),
                    "kernel": os.uname().release, "started": time.time()},
           "parameters": vars(args), "comparisons": {}}
    rows = []
    notes = []
    idle = None
    try:
        responder = lab.start_agent(lab.ns_b, lab.config_b, "agent-b-responder.log")
        ucx_ok, ucx_why = (False, "not requested")
        if "ucx" in only or "cpu" in only:
            ucx_ok, ucx_why = ucx_kinds_available(lab)
            raw["ucx_available"] = ucx_ok
            if not ucx_ok:
                print(f"UCX kinds not available: {ucx_why}", flush=True)

        def add(key, name, results, higher, target, fmt):
            summary = summarise(results, higher, target)
            raw["comparisons"][key] = {"name": name, "summary": summary, "runs": results}
            target_text = f"≥ {target:.2f}" if higher else f"≤ {target:.2f}"
            rows.append({"name": name, "summary": summary, "fmt": fmt,
                         "target_text": target_text})

        for streams, key in ((1, "tcp1"), (4, "tcp4")):
            if key in only:
                print(f"== tcp_throughput vs iperf3, {streams} stream(s)", flush=True)
                add(f"tcp_throughput_P{streams}",
                    f"tcp_throughput {streams} stream(s) vs iperf3 -P {streams} "
                    f"(-l {args.tcp_size}, receiver)",
                    compare_tcp_throughput(lab, args, streams), True, 0.95, fmt_gbit)
        if "vram" in only:
            print("== ucx_throughput put --memory cuda vs --memory host (fake driver)", flush=True)
            add("ucx_throughput_vram",
                f"ucx_throughput put 1 MiB, window {args.ucx_window}: memory cuda (staged, fake "
                "driver) vs host", compare_vram(lab, args), True, 0.5, fmt_gbit)
        if "ucx" in only:
            operations = [("put", "ucp_put_bw")] + ([("am", "ucp_am_bw")] if args.ucx_am else [])
            if ucx_ok:
                for operation, test in operations:
                    print(f"== ucx_throughput {operation} vs ucx_perftest {test}", flush=True)
                    add(f"ucx_throughput_{operation}",
                        f"ucx_throughput {operation} 1 MiB, window {args.ucx_window} vs "
                        f"ucx_perftest -t {test} -O {args.ucx_window}",
                        compare_ucx_throughput(lab, args, operation, test), True, 0.95, fmt_gbit)
                print("== ucx_rtt vs ucx_perftest tag_lat", flush=True)
                add("ucx_rtt", "ucx_rtt p50 8 B vs 2 × ucx_perftest -t tag_lat 50%ile",
                    compare_ucx_rtt(lab, args), False, 1.10, fmt_us)
            else:
                for operation, test in operations:
                    rows.append({"name": f"ucx_throughput {operation} vs ucx_perftest -t {test}",
                                 "unavailable": True, "target_text": "≥ 0.95"})
                rows.append({"name": "ucx_rtt p50 8 B vs 2 × ucx_perftest -t tag_lat 50%ile",
                             "unavailable": True, "target_text": "≤ 1.10"})
                notes.append(f"UCX rows not available yet: {ucx_why}")
        if "tcprtt" in only:
            print("== tcp_rtt vs sockperf ping-pong", flush=True)
            results = compare_tcp_rtt(lab, args)
            add("tcp_rtt", "tcp_rtt p50 14 B vs 2 × sockperf ping-pong --tcp p50 (14 B)",
                results, False, 1.10, fmt_us)
            eight = {"ours": results["ours_8B"], "reference": results["reference"]}
            add("tcp_rtt_8B", "tcp_rtt p50 8 B vs 2 × sockperf p50 (14 B, its minimum)",
                eight, False, 1.10, fmt_us)
        if "cpu" in only:
            print(f"== agents idle for {args.idle_seconds:.0f} s", flush=True)
            idle = idle_cpu(lab, args, responder, ucx_ok)
            raw["idle_cpu"] = idle
            for key, f in idle.items():
                if f["probe_runs_in_window"] or f["probes_served_in_window"]:
                    notes.append(f"{key}: a probe ran during the idle window; the figure is "
                                 "not 'between probes'")
    finally:
        lab.stop_all()
        os.unlink(lab.secret)
        raw["host"]["load_at_end"] = loadavg()
        raw["host"]["finished"] = time.time()
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(raw, f, indent=2, default=str)
        if own_tmp:
            own_tmp.cleanup()

    notes.append(f"host: {os.cpu_count()} CPUs, shared with other work; load average at start "
                 f"{' '.join(f'{x:.2f}' for x in raw['host']['load_at_start'])}, at end "
                 f"{' '.join(f'{x:.2f}' for x in raw['host']['load_at_end'])}")
    notes.append("ratio = ours / reference of the medians; RTT references are doubled "
                 "(ucx_perftest tag_lat and sockperf print half the round trip)")
    print_report(rows, idle, notes, args.runs, args.duration)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        print(f"probe_compare.py: {error}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
