#!/usr/bin/python3
"""Memory footprint of rail_exporter (and its probe worker) vs Debian's prometheus-node-exporter.

Two parts, in one run:

(a) idle, on a fixture tree (default tests/fixtures/hgx-8gpu): rail_exporter with its defaults,
    node_exporter with its defaults, and node_exporter with only infiniband, netclass and
    bonding, all on the tree (--path.sysfs/--path.procfs). They are scraped in turn (the order
    rotating every round, as bench/scrape_common.py does): --warmup scrapes each, a pause, the
    "warm" sample; then --scrapes scrapes each with a sample of every process after every tenth
    of them ("alternating samples"), and the "after" sample. Each sample reads Threads, VmRSS,
    RssAnon, RssFile and VmHWM from /proc/<pid>/status and Pss from /proc/<pid>/smaps_rollup.

(b) the lab (root only; scripts/lab through tests/e2e/lab.py, prefix --lab-prefix): agent A
    probing agent B's responder over both veth rails with tests/e2e/load_lab.py's probes (TCP
    and UCX rtt and throughput), agent B the responder side, and node_exporter (defaults, and
    infiniband+netclass+bonding) in host a's namespace, on the sysfs the agents see there. Once
    A's rtt probes have succeeded, everything is scraped in turn through curl inside the
    namespace every --scrape-interval s for --lab-seconds s, and every process (the agents'
    probe workers included: their children running rail_exporter_probe_worker) is sampled every
    --sample-every s: RSS median/max, RssAnon, threads. When not root this part is skipped with
    a message.

With --smaps, where each process's RSS lies at the end (/proc/<pid>/smaps by mapping: the
binary's text and data, each shared library, [heap], thread stacks, other anonymous memory) is
printed too. Prints markdown tables with the ratios to node_exporter; --json writes every raw
figure. It asserts no target: it exits non-zero only when something fails to start or a scrape
fails. About 75 s with the defaults (10 s without the lab).

    bench/footprint.py [--rail-exporter PATH] [--tree DIR] [--scrapes N] [--no-lab] [--smaps]
                       [--json FILE]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

import proc_status  # noqa: E402
from scrape_common import (NODE_EXPORTER, SAME_COLLECTORS, BenchError, Exporter,  # noqa: E402
                           fmt_or_dash, free_ports, loadavg, scrape)

STATUS_FIELDS = ("Threads", "VmRSS", "RssAnon", "RssFile", "VmHWM")
WORKER_NAME = b"rail_exporter_probe_worker"


# -- /proc ------------------------------------------------------------------------------------

def sample(pid):
    """Threads and the memory fields (KiB) of /proc/<pid>/status, Pss (KiB) of smaps_rollup."""
    try:
        values = proc_status.status(pid, STATUS_FIELDS)
    except LookupError as error:
        raise BenchError(str(error))
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key == "Pss":
                    values["Pss"] = int(rest.split()[0])
    except OSError:
        pass
    return values


def worker_pid(agent_pid):
    """The agent's probe worker (its child running rail_exporter_probe_worker), or None."""
    import lab  # as in lab_part: only the lab part needs it (and harness's imports)
    for child in lab.children(agent_pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                if WORKER_NAME in f.read():
                    return child
        except OSError:
            continue
    return None


def smaps_breakdown(pid):
    """{category: {"rss": KiB, "pss": KiB, "anon": KiB, "size": KiB}} of /proc/<pid>/smaps:
    the binary's text (executable mappings) and data, each shared library (by file name),
    [heap], [stack], thread stacks (anonymous rw mappings right above a small PROT_NONE guard),
    anonymous rw mappings right below a PROT_NONE one (Go's heap arenas, glibc's per-thread
    malloc arenas, or a block malloc mapped just below a thread stack's guard) and other
    anonymous memory."""
    exe = os.path.realpath(f"/proc/{pid}/exe")
    maps = []
    header = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$")
    with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as f:
        for line in f:
            m = header.match(line)
            if m:
                maps.append({"start": int(m.group(1), 16), "end": int(m.group(2), 16),
                             "perms": m.group(3), "path": m.group(4).strip(), "rss": 0,
                             "pss": 0, "anon": 0})
                continue
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss", "Anonymous") and maps:
                maps[-1][{"Rss": "rss", "Pss": "pss", "Anonymous": "anon"}[key]] += \
                    int(rest.split()[0])
    out = {}
    for i, m in enumerate(maps):
        path = m["path"]
        if path == exe or path.startswith(exe + " "):
            category = "binary text" if "x" in m["perms"] else "binary data and rodata"
        elif path in ("[heap]", "[stack]"):
            category = path
        elif path.startswith("["):
            category = "other (" + path + ")"
        elif path:
            name = os.path.basename(path.replace(" (deleted)", ""))
            category = name if ".so" in name else "other file"
        else:
            prev = maps[i - 1] if i else None
            nxt = maps[i + 1] if i + 1 < len(maps) else None
            if (prev and prev["end"] == m["start"] and not prev["path"]
                    and prev["perms"].startswith("---") and prev["end"] - prev["start"] <= 65536
                    and m["perms"].startswith("rw")):
                category = "thread stacks"
            elif (nxt and nxt["start"] == m["end"] and not nxt["path"]
                  and nxt["perms"].startswith("---") and m["perms"].startswith("rw")):
                category = "anonymous below a PROT_NONE mapping"
            else:
                category = "other anonymous"
        entry = out.setdefault(category, {"rss": 0, "pss": 0, "anon": 0, "size": 0})
        entry["rss"] += m["rss"]
        entry["pss"] += m["pss"]
        entry["anon"] += m["anon"]
        entry["size"] += (m["end"] - m["start"]) // 1024
    return out


def print_breakdown(title, breakdown, top=18):
    total = sum(v["rss"] for v in breakdown.values())
    libs = {k: v for k, v in breakdown.items() if ".so" in k}
    print(f"{title}: RSS {total / 1024:.1f} MiB; shared libraries {len(libs)}, "
          f"{sum(v['rss'] for v in libs.values()) / 1024:.1f} MiB of it\n")
    print("| mapping | Rss KiB | of which anonymous KiB | Pss KiB |")
    print("|---|---:|---:|---:|")
    ordered = sorted(breakdown.items(), key=lambda kv: -kv[1]["rss"])
    for name, v in ordered[:top]:
        print(f"| {name} | {v['rss']} | {v['anon']} | {v['pss']} |")
    rest = ordered[top:]
    if rest:
        print(f"| {len(rest)} more | {sum(v['rss'] for _, v in rest)} | "
              f"{sum(v['anon'] for _, v in rest)} | {sum(v['pss'] for _, v in rest)} |")
    print()


def mib(kib):
    return kib / 1024


def ratio(value, reference):
    return value / reference if reference else None


# -- (a) idle on a fixture tree ---------------------------------------------------------------

def idle_part(args):
    tree = os.path.abspath(args.tree)
    paths = [f"--path.sysfs={os.path.join(tree, 'sys')}",
             f"--path.procfs={os.path.join(tree, 'proc')}"]
    rail_paths = list(paths)
    if os.path.isdir(os.path.join(tree, "ethtool")):
        rail_paths.append(f"--path.ethtool={os.path.join(tree, 'ethtool')}")
    exporters = [
        Exporter("node defaults", "node_exporter 1.5.0, defaults", "node_exporter",
                 [args.node_exporter] + paths + ["--log.level=error"]),
        Exporter("node same", "node_exporter 1.5.0, " + "+".join(SAME_COLLECTORS),
                 "node_exporter",
                 [args.node_exporter] + paths + ["--collector.disable-defaults"]
                 + [f"--collector.{c}" for c in SAME_COLLECTORS] + ["--log.level=error"]),
        Exporter("rail", "rail_exporter, defaults", "rail_exporter",
                 [args.rail_exporter] + rail_paths + ["--log.level=error"]),
    ]
    samples = {e.short: [] for e in exporters}
    checkpoints = max(1, args.scrapes // 10)
    breakdowns = {}
    try:
        for exporter, port in zip(exporters, free_ports(len(exporters))):
            exporter.start(port)
        deadline = time.monotonic() + 30
        for exporter in exporters:
            exporter.wait_ready(deadline)
        for e in exporters:
            samples[e.short].append(("start", 0, sample(e.pid)))
        for i in range(args.warmup):
            for k in range(len(exporters)):
                scrape(exporters[(i + k) % len(exporters)].url)
        time.sleep(1.0)
        warm = {e.short: sample(e.pid) for e in exporters}
        for e in exporters:
            samples[e.short].append(("warm", 0, warm[e.short]))
        for i in range(args.scrapes):
            for k in range(len(exporters)):
                scrape(exporters[(i + k) % len(exporters)].url)
            if (i + 1) % checkpoints == 0:
                for k in range(len(exporters)):  # the sampling order rotates too
                    e = exporters[(i + k) % len(exporters)]
                    samples[e.short].append(("scrapes", i + 1, sample(e.pid)))
        time.sleep(1.0)
        after = {e.short: sample(e.pid) for e in exporters}
        for e in exporters:
            samples[e.short].append(("after", args.scrapes, after[e.short]))
        if args.smaps:
            breakdowns = {e.short: smaps_breakdown(e.pid) for e in exporters}
    finally:
        for exporter in exporters:
            exporter.stop()
    results = []
    for e in exporters:
        rss = [s["VmRSS"] for _, _, s in samples[e.short]]
        results.append({"short": e.short, "label": e.label, "argv": e.argv,
                        "warm": warm[e.short], "after": after[e.short],
                        "rss_max_kib": max(rss), "samples": samples[e.short],
                        "smaps": breakdowns.get(e.short)})
    return results


def print_idle(args, results):
    node = {r["short"]: r for r in results}
    print(f"## (a) idle on {os.path.basename(os.path.abspath(args.tree))}: "
          f"{args.warmup} warm-up scrapes each, then {args.scrapes} each, interleaved\n")
    print("| process | threads warm → after | VmRSS MiB warm → after (max) | RssAnon MiB "
          "warm → after | RssFile MiB warm → after | VmHWM MiB | Pss MiB after |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        w, a = r["warm"], r["after"]
        print(f"| {r['label']} | {w['Threads']} → {a['Threads']} "
              f"| {mib(w['VmRSS']):.1f} → {mib(a['VmRSS']):.1f} ({mib(r['rss_max_kib']):.1f}) "
              f"| {mib(w['RssAnon']):.1f} → {mib(a['RssAnon']):.1f} "
              f"| {mib(w['RssFile']):.1f} → {mib(a['RssFile']):.1f} "
              f"| {mib(a['VmHWM']):.1f} | {mib(a.get('Pss', 0)):.1f} |")
    print()
    rail = node["rail"]
    print("Ratios rail_exporter / node_exporter after the scrapes (below 1: leaner):\n")
    print("| against | threads | VmRSS | RssAnon | RssFile | VmHWM | Pss |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for short in ("node defaults", "node same"):
        ref = node[short]["after"]
        cells = [fmt_or_dash(ratio(rail["after"].get(k, 0), ref.get(k, 0)), 2)
                 for k in ("Threads", "VmRSS", "RssAnon", "RssFile", "VmHWM", "Pss")]
        print(f"| {node[short]['label']} | " + " | ".join(cells) + " |")
    print()
    if args.smaps:
        for r in results:
            print_breakdown(f"Where the RSS is, {r['label']}, after the scrapes", r["smaps"])


# -- (b) the lab ------------------------------------------------------------------------------

def lab_part(args):
    import harness
    import lab
    import load_lab

    lab.require_tools("ip", "curl")
    harness.BINARY = os.path.abspath(args.rail_exporter)
    the_lab = lab.Lab(args.lab_prefix, tmp_prefix="rail-footprint-")
    the_lab.up()
    try:
        secret = the_lab.secret("secret", "lab-shared-secret\n")
        config_b = the_lab.config("b.yaml", "b", secret=secret,
                                  limits="probes_per_minute_per_peer: 600")
        config_a = the_lab.config("a.yaml", "a", secret=secret,
                                  peers={"b": lab.peer_address("b")}, probes=load_lab.PROBES)
        agent_b = the_lab.start_agent("b", ["--config.file=" + config_b])
        agent_a = the_lab.start_agent("a", ["--config.file=" + config_a])
        ns_a = the_lab.ns_a
        # node_exporter in host a's namespace: `ip netns exec` mounts that namespace's sysfs,
        # the one agent A reads. Its loopback is the namespace's own: any port is free there.
        nodes = {}
        for short, extra, port in (
                ("node defaults", [], 19100),
                ("node same", ["--collector.disable-defaults"]
                 + [f"--collector.{c}" for c in SAME_COLLECTORS], 19101)):
            process = the_lab.track(harness._Process(
                ["ip", "netns", "exec", ns_a, args.node_exporter] + extra
                + [f"--web.listen-address=127.0.0.1:{port}"], short + "@" + ns_a))
            process.wait_for_line(r'msg="Listening on"')
            nodes[short] = (process, f"127.0.0.1:{port}")
        targets = [("agent A (probing)", ns_a, agent_a.target),
                   ("agent B (responder)", the_lab.ns_b, agent_b.target)]
        targets += [(short, ns_a, target) for short, (_, target) in nodes.items()]

        started = time.monotonic()
        done, _ = agent_a.wait_for(lambda s: all(
            lab.all_ones(lab.find(s, "rail_probe_success", kind=kind, rail=rail))
            for kind in ("tcp_rtt", "ucx_rtt") for rail in lab.RAILS), load_lab.RTT_WAIT)
        if not done:
            raise BenchError("agent A's rtt probes did not succeed within %.0f s:\n%s"
                             % (load_lab.RTT_WAIT, agent_a.scrape()))
        rtt_wait = time.monotonic() - started

        pids = {"agent A (probing)": agent_a.proc.pid, "agent B (responder)": agent_b.proc.pid}
        pids.update({short: process.proc.pid for short, (process, _) in nodes.items()})
        series = {name: [] for name in list(pids) + ["worker of A", "worker of B"]}
        worker_pids = {"worker of A": set(), "worker of B": set()}
        scrapes = {name: 0 for name, _, _ in targets}
        last_body = {}
        end = time.monotonic() + args.lab_seconds
        next_sample = time.monotonic()
        round_no = 0
        while time.monotonic() < end:
            tick = time.monotonic()
            for k in range(len(targets)):
                name, ns, target = targets[(round_no + k) % len(targets)]
                result = lab.in_ns(ns, ["curl", "-sf", "--max-time", "10",
                                        f"http://{target}/metrics"], check=False)
                if result.returncode != 0:
                    raise BenchError(f"scrape of {name} ({target}) failed: curl exit "
                                     f"{result.returncode}")
                scrapes[name] += 1
                last_body[name] = result.stdout
            round_no += 1
            if time.monotonic() >= next_sample:
                now = time.monotonic() - started
                for name, pid in pids.items():
                    series[name].append((now, sample(pid)))
                for worker, agent in (("worker of A", "agent A (probing)"),
                                      ("worker of B", "agent B (responder)")):
                    wpid = worker_pid(pids[agent])
                    if wpid:
                        try:
                            series[worker].append((now, sample(wpid)))
                            worker_pids[worker].add(wpid)
                        except (OSError, BenchError):
                            pass  # the worker exited between finding and reading it
                next_sample += args.sample_every
            time.sleep(max(0.0, args.scrape_interval - (time.monotonic() - tick)))

        breakdowns = {}
        if args.smaps:
            for name, pid in pids.items():
                breakdowns[name] = smaps_breakdown(pid)
            for worker, agent in (("worker of A", "agent A (probing)"),
                                  ("worker of B", "agent B (responder)")):
                wpid = worker_pid(pids[agent])
                if wpid:
                    breakdowns[worker] = smaps_breakdown(wpid)
        runs = sum(float(v) for v in re.findall(
            r"^rail_probe_runs_total\{[^}]*\} (\S+)$", last_body.get("agent A (probing)", ""),
            re.M))
        errors = sum(float(v) for v in re.findall(
            r"^rail_probe_errors_total\{[^}]*\} (\S+)$", last_body.get("agent A (probing)", ""),
            re.M))
    finally:
        the_lab.down()

    results = []
    for name, points in series.items():
        if not points:
            results.append({"name": name, "samples": 0})
            continue
        values = [s for _, s in points]
        rss = [s["VmRSS"] for s in values]
        results.append({
            "name": name, "samples": len(values),
            "rss_median_kib": statistics.median(rss), "rss_max_kib": max(rss),
            "anon_median_kib": statistics.median(s["RssAnon"] for s in values),
            "anon_max_kib": max(s["RssAnon"] for s in values),
            "file_median_kib": statistics.median(s["RssFile"] for s in values),
            "hwm_kib": max(s["VmHWM"] for s in values),
            "threads_median": statistics.median(s["Threads"] for s in values),
            "threads_max": max(s["Threads"] for s in values),
            "pss_median_kib": statistics.median(s.get("Pss", 0) for s in values),
            "pids": sorted(worker_pids.get(name, [])) or None,
            "series": points, "smaps": breakdowns.get(name)})
    return {"rtt_wait_s": rtt_wait, "seconds": args.lab_seconds, "scrapes": scrapes,
            "probe_runs_a": runs, "probe_errors_a": errors, "processes": results}


def print_lab(args, lab_results):
    procs = {r["name"]: r for r in lab_results["processes"]}
    print(f"## (b) the lab: agent A probing agent B over two veth rails (TCP and UCX rtt and "
          f"throughput), {lab_results['seconds']:.0f} s after the rtt probes succeeded "
          f"({lab_results['rtt_wait_s']:.0f} s), every process scraped in turn through curl "
          f"({', '.join('%s %d' % kv for kv in lab_results['scrapes'].items())} scrapes); "
          f"agent A's probe runs so far {lab_results['probe_runs_a']:.0f}, errors "
          f"{lab_results['probe_errors_a']:.0f}\n")
    print("| process | samples | VmRSS MiB median / max | RssAnon MiB median / max "
          "| RssFile MiB median | VmHWM MiB | Pss MiB median | threads median / max "
          "| VmRSS / node defaults | VmRSS / node same |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ref_d = procs.get("node defaults", {}).get("rss_median_kib")
    ref_s = procs.get("node same", {}).get("rss_median_kib")
    for r in lab_results["processes"]:
        if not r["samples"]:
            print(f"| {r['name']} | 0 | — | — | — | — | — | — | — | — |")
            continue
        pids = f" (pids {', '.join(map(str, r['pids']))})" if r.get("pids") else ""
        print(f"| {r['name']}{pids} | {r['samples']} "
              f"| {mib(r['rss_median_kib']):.1f} / {mib(r['rss_max_kib']):.1f} "
              f"| {mib(r['anon_median_kib']):.1f} / {mib(r['anon_max_kib']):.1f} "
              f"| {mib(r['file_median_kib']):.1f} | {mib(r['hwm_kib']):.1f} "
              f"| {mib(r['pss_median_kib']):.1f} "
              f"| {r['threads_median']:.0f} / {r['threads_max']} "
              f"| {fmt_or_dash(ratio(r['rss_median_kib'], ref_d), 2)} "
              f"| {fmt_or_dash(ratio(r['rss_median_kib'], ref_s), 2)} |")
    print()
    a, w = procs.get("agent A (probing)"), procs.get("worker of A")
    if a and w and w["samples"]:
        print(f"Agent A + its probe worker: {mib(a['rss_median_kib'] + w['rss_median_kib']):.1f}"
              f" MiB median RSS together; the worker's highest RSS {mib(w['rss_max_kib']):.1f} "
              f"MiB (VmHWM {mib(w['hwm_kib']):.1f} MiB).\n")
    if args.smaps:
        for r in lab_results["processes"]:
            if r.get("smaps"):
                print_breakdown(f"Where the RSS is, {r['name']}, at the end", r["smaps"])


# -- main -------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rail-exporter",
                        default=os.path.join(REPO, "build-bench", "src", "rail_exporter"),
                        help="the agent (its rail_exporter_probe_worker beside it)")
    parser.add_argument("--node-exporter", default=NODE_EXPORTER)
    parser.add_argument("--tree", default=os.path.join(REPO, "tests", "fixtures", "hgx-8gpu"))
    parser.add_argument("--warmup", type=int, default=20, help="warm-up scrapes each (idle)")
    parser.add_argument("--scrapes", type=int, default=200, help="scrapes each (idle)")
    parser.add_argument("--no-lab", action="store_true", help="skip part (b)")
    parser.add_argument("--lab-prefix", default="rfp", help="namespaces <prefix>-a, -b")
    parser.add_argument("--lab-seconds", type=float, default=60.0)
    parser.add_argument("--sample-every", type=float, default=3.0, help="seconds (lab)")
    parser.add_argument("--scrape-interval", type=float, default=0.5,
                        help="seconds between rounds of scrapes (lab)")
    parser.add_argument("--smaps", action="store_true",
                        help="print where each process's RSS lies, by mapping")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args()
    args.rail_exporter = os.path.abspath(args.rail_exporter)
    for path in (args.rail_exporter, args.node_exporter):
        if not os.access(path, os.X_OK):
            print(f"footprint: {path} is not an executable", file=sys.stderr)
            return 1

    version = subprocess.run([args.rail_exporter, "--version"], capture_output=True,
                             text=True, check=False).stdout.strip()
    print(f"# Memory footprint: {version} ({args.rail_exporter}) vs node_exporter "
          f"({args.node_exporter}); {os.cpu_count()} CPUs, load {loadavg()}\n")
    report = {"rail_exporter": args.rail_exporter, "version": version,
              "node_exporter": args.node_exporter, "tree": os.path.abspath(args.tree)}
    try:
        report["idle"] = idle_part(args)
        print_idle(args, report["idle"])
        if args.no_lab:
            print("(b) the lab: skipped (--no-lab)\n")
        elif os.geteuid() != 0:
            print("(b) the lab: skipped, it needs root for network namespaces (scripts/lab)\n")
        elif shutil.which("ip") is None or shutil.which("curl") is None:
            print("(b) the lab: skipped, it needs iproute2 and curl\n")
        else:
            report["lab"] = lab_part(args)
            print_lab(args, report["lab"])
    except (BenchError, OSError, RuntimeError, TimeoutError, AssertionError,
            subprocess.SubprocessError) as error:
        print(f"footprint: {error}", file=sys.stderr)
        return 1
    finally:
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
