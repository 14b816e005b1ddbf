#!/usr/bin/python3
"""How scrape cost, memory, threads and series grow with the rail count, rail_exporter vs
Debian's prometheus-node-exporter.

For every rail count (--rails, default 2, 8, 32) it generates a tree with bench/make_large_tree.py
and measures node_exporter (infiniband, netclass, bonding) and rail_exporter in two configs,
"same" (the same three collectors) and "defaults" (no collector flag), scraped in turn in one
run per tree (bench/scrape_common.py: interleaved rounds, threads and RSS at idle after the
warm-up and after the rounds, CPU ms per scrape, series). It prints one table per tree, a table
of the figures against the rail count and the least-squares slope per rail of each figure,
writes the raw figures as JSON (--json) and draws one PNG (--png, matplotlib's Agg backend):
median scrape ms, CPU ms per scrape, series, RSS and threads against the rail count.

The trees: one rail = one RDMA device with ONE port (--ports 1) and its netdev, because that
is what the hosts with many rails look like: an HGX H100/H200 host shows its 8 GPU rails as 8
RDMA devices of one port each (ConnectX-7, as tests/fixtures/hgx-8gpu has them), one per GPU;
2 rails is a small host with two NICs, and 32 extrapolates the HGX shape (more NICs, not more
ports per NIC). Every port is RoCE and has a
128-slot GID table with 4 populated entries (--populated-gids 4: the link-local address and one
routable address, each as RoCE v1 and v2, as the kernel creates them for a port with one IP
address), the rest all-zero slots, not the generator's all-populated worst case. 50 hw_counters
(the mlx5 RoCE set plus padding) and the standard counters per port, 24 statistics per netdev.
No bonds: the compute rails of such a host are never bonded (each GPU uses its own rail; a bond
over RoCE ports also becomes one LAG RDMA device, a different shape), so both bonding collectors
find no bonding_masters; bonding's cost is a per-host constant, not a per-rail one.

It asserts no performance target: it exits non-zero only when a tree cannot be generated, an
exporter cannot be started or a scrape fails. The machine's load is printed with every tree.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from scrape_common import (NODE_EXPORTER, BenchError, add_cadence_arguments, known_collectors,
                           measure, node_exporter, print_tables, rail_exporter)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CONFIGS = ("same", "defaults")
# The figures against the rail count: key, title, unit.
FIGURES = (
    ("median_ms", "median scrape", "ms"),
    ("p90_ms", "p90 scrape", "ms"),
    ("cpu_ms_per_scrape", "CPU per scrape", "ms"),
    ("rss_after_mib", "RSS after the rounds", "MiB"),
    ("peak_rss_mib", "peak RSS", "MiB"),
    ("threads_idle", "threads at idle", ""),
    ("series", "series", ""),
)
# With --background and --paced (modelled) or --cadence-rounds (measured): what a process costs per
# 15 s when scraped every 15 s.
CADENCE_FIGURE = ("cpu_ms_per_15s_cadence", "CPU per 15 s at a 15 s cadence", "ms")


def tree_args(rails, gids, populated_gids):
    return ["--devices", str(rails), "--ports", "1", "--gids", str(gids),
            "--populated-gids", str(populated_gids)]


def least_squares(xs, ys):
    """(slope, intercept) of the least-squares line through the points."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, my
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def plot(path, rails, by_exporter, slopes, note, cadence):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("median_ms", "median scrape (ms)", "p90_ms"),
              ("cpu_ms_per_scrape", "CPU per scrape (ms)",
               CADENCE_FIGURE[0] if cadence else None),
              ("series", "series", None),
              ("rss_after_mib", "RSS after the rounds (MiB)", "peak_rss_mib"),
              ("threads_idle", "threads at idle (log scale)", None))
    DOTTED_TITLES = {"p90_ms": "p90", "peak_rss_mib": "peak RSS, VmHWM",
                     CADENCE_FIGURE[0]: "per 15 s when scraped every 15 s"}
    styles = {"node": ("tab:gray", "s"), "rail same": ("tab:blue", "o"),
              "rail defaults": ("tab:orange", "^")}
    labels = {"node": "node_exporter 1.5.0\n(infiniband, netclass, bonding)",
              "rail same": "rail_exporter, same three collectors",
              "rail defaults": "rail_exporter, defaults"}
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    for ax, (key, title, dotted) in zip(axes.flat, panels):
        for short, rows in by_exporter.items():
            color, marker = styles.get(short, (None, "x"))
            ys = [row[key] for row in rows]
            ax.plot(rails, ys, marker=marker, color=color, label=labels.get(short, rows[0]["exporter"]))
            if dotted:
                ax.plot(rails, [row[dotted] for row in rows], linestyle=":", marker=marker,
                        markerfacecolor="none", color=color)
            if key != "threads_idle":
                slope, intercept = slopes[short][key]
                xs = [rails[0] * (rails[-1] / rails[0]) ** (i / 50) for i in range(51)]
                ax.plot(xs, [intercept + slope * x for x in xs], linestyle="--", linewidth=0.7,
                        color=color)
        ax.set_title(title + (f"\n(dotted: {DOTTED_TITLES[dotted]})" if dotted else ""),
                     fontsize=10)
        ax.set_xlabel("rails (log scale)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(rails, [str(r) for r in rails])
        ax.set_xticks([], minor=True)
        ax.set_ylim(bottom=0)
        if key == "threads_idle":
            ax.set_yscale("log")
            ax.set_ylim(1, 3 * max(row[key] for rows in by_exporter.values() for row in rows))
        ax.grid(True, alpha=0.3)
    legend_ax = axes.flat[-1]
    legend_ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    legend_ax.legend(handles, labels, loc="upper left", fontsize=9, frameon=False)
    text = "\n".join(textwrap.wrap(note, 55))
    legend_ax.text(0, 0.6, text + "\n\ndashed: least-squares line (linear in rails)",
                   fontsize=8, va="top", transform=legend_ax.transAxes)
    fig.suptitle("rail_exporter vs node_exporter 1.5.0: cost against the rail count", fontsize=12)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rails", default="2,8,32", help="rail counts (default 2,8,32)")
    parser.add_argument("--scrapes", type=int, default=60,
                        help="measured scrapes per exporter and tree (default 60)")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured scrapes per exporter")
    parser.add_argument("--gids", type=int, default=128, help="GID slots per port (default 128)")
    parser.add_argument("--populated-gids", type=int, default=4,
                        help="non-empty GID slots per port (default 4)")
    parser.add_argument("--rail-exporter",
                        default=os.path.join(ROOT, "build-bench", "src", "rail_exporter"))
    parser.add_argument("--node-exporter", default=NODE_EXPORTER)
    add_cadence_arguments(parser)
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--png", default=os.path.join(ROOT, "docs", "img", "scrape_scaling.png"),
                        help="the figure (default docs/img/scrape_scaling.png; '' for none)")
    parser.add_argument("--keep-trees", help="generate the trees here and keep them")
    args = parser.parse_args()
    rails = sorted({int(r) for r in args.rails.split(",") if r.strip()})
    if len(rails) < 2 or rails[0] < 1:
        raise BenchError("--rails needs at least two positive rail counts")
    for binary in (args.rail_exporter, args.node_exporter):
        if not os.access(binary, os.X_OK):
            raise BenchError(f"{binary} is not executable")
    collectors = known_collectors(args.rail_exporter)

    workdir = args.keep_trees or tempfile.mkdtemp(prefix="rail-scaling.")
    runs = {}
    try:
        for count in rails:
            tree = os.path.join(workdir, f"rails-{count}")
            generated = subprocess.run(
                [sys.executable, os.path.join(HERE, "make_large_tree.py"), tree]
                + tree_args(count, args.gids, args.populated_gids),
                capture_output=True, text=True, check=False)
            if generated.returncode != 0:
                raise BenchError(f"make_large_tree.py failed: {generated.stderr.strip()}")
            sysfs, procfs = os.path.join(tree, "sys"), os.path.join(tree, "proc")
            exporters = [node_exporter(args.node_exporter, sysfs, procfs)]
            exporters += [rail_exporter(args.rail_exporter, sysfs, procfs, c, collectors)
                          for c in CONFIGS]
            results, load_before, load_after = measure(exporters, args.scrapes, args.warmup,
                                                       background_s=args.background,
                                                       paced=args.paced, pace_s=args.pace,
                                                       cadence_rounds=args.cadence_rounds)
            runs[count] = {"tree": generated.stderr.strip(), "load_before": load_before,
                           "load_after": load_after, "results": results}
            print_tables(f"### {count} rails: {args.scrapes} interleaved scrapes per exporter "
                         f"(after {args.warmup} warm-up), load average {load_before} before, "
                         f"{load_after} after", results)
    finally:
        if not args.keep_trees:
            shutil.rmtree(workdir, ignore_errors=True)

    cadence = (args.background > 0 and args.paced > 0) or args.cadence_rounds > 0
    figures = FIGURES + ((CADENCE_FIGURE,) if cadence else ())
    by_exporter = {}
    for count in rails:
        for r in runs[count]["results"]:
            by_exporter.setdefault(r["short"], []).append(r)
    slopes = {short: {key: least_squares(rails, [row[key] for row in rows])
                      for key, _, _ in figures}
              for short, rows in by_exporter.items()}

    print(f"### Against the rail count ({', '.join(map(str, rails))} rails)\n")
    print("| exporter | rails | median ms | p90 ms | CPU ms/scrape | RSS after MiB | peak RSS MiB "
          "| threads idle | series |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for short, rows in by_exporter.items():
        for count, r in zip(rails, rows):
            print(f"| {short} | {count} | {r['median_ms']:.2f} | {r['p90_ms']:.2f} "
                  f"| {r['cpu_ms_per_scrape']:.2f} | {r['rss_after_mib']:.1f} "
                  f"| {r['peak_rss_mib']:.1f} | {r['threads_idle']} | {r['series']} |")
    print()
    print("Least-squares slope per rail (intercept at 0 rails in brackets):\n")
    shorts = list(by_exporter)
    print("| figure | " + " | ".join(shorts) + " |")
    print("|---|" + "---:|" * len(shorts))
    for key, title, unit in figures:
        cells = [f"{slopes[s][key][0]:+.3f} ({slopes[s][key][1]:.2f})" for s in shorts]
        print(f"| {title}{' ' + unit if unit else ''} per rail | " + " | ".join(cells) + " |")
    print()
    loads = ", ".join(f"{c} rails {runs[c]['load_before']}" for c in rails)
    note = (f"{os.cpu_count()} CPUs, shared and noisy (load average before each tree: {loads}); "
            f"{args.scrapes} interleaved scrapes per exporter and tree; trees: 1 port per NIC, "
            f"{args.populated_gids} of {args.gids} GID slots populated, no bonds")
    print("Machine: " + note + "\n")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rails": rails, "scrapes": args.scrapes, "warmup": args.warmup,
                       "cpus": os.cpu_count(), "gids": args.gids,
                       "populated_gids": args.populated_gids,
                       "tree_args": {c: tree_args(c, args.gids, args.populated_gids)
                                     for c in rails},
                       "runs": runs,
                       "slopes": {s: {k: {"per_rail": v[0], "intercept": v[1]}
                                      for k, v in fig.items()} for s, fig in slopes.items()}},
                      f, indent=1)
    if args.png:
        plot(args.png, rails, by_exporter, slopes, note, cadence)
        print(f"figure: {args.png}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        print(f"scrape_scaling.py: {error}", file=sys.stderr)
        sys.exit(1)
