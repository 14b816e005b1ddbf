#!/usr/bin/python3
"""Scrape cost of rail_exporter vs Debian's prometheus-node-exporter on the same sysfs tree.

Starts node_exporter (--collector.disable-defaults --collector.infiniband --collector.netclass
--collector.bonding) and rail_exporter in up to four configurations (--configs, default all):
  (a) "same": infiniband, netclass, bonding (--no-collector.<name> for every other collector
      `rail_exporter --help` lists: hw_counters, netdev, gid, rails, exporter, and any added
      later), which read the kinds of files node_exporter's three read;
  (c) "counters": (a) + hw_counters + netdev: also every hw_counters/ and netdev statistics/
      file, which node_exporter does not read (its netdev collector reads /proc/net/dev);
  (b) "all": every collector switched on, including gid and rails, which read every port's GID
      table (gids/, gid_attrs/types, gid_attrs/ndevs). node_exporter reads no GID;
  (d) "defaults": no collector flag at all, what a plain `rail_exporter` serves.
After a warm-up it reads every process's threads and RSS at idle, scrapes the exporters in turn
N times (interleaved, the order rotating every round) and reads them again (the measurements
are described in bench/scrape_common.py). Prints two markdown tables, the figures (threads, RSS,
peak RSS, median and p90 latency, CPU ms per scrape, series) and their ratios rail/node, all
from this one run, and writes the raw figures as JSON with --json. It asserts no performance
target: it exits non-zero only when an exporter cannot be started or a scrape fails.
"""

import argparse
import json
import os
import sys

from scrape_common import (NODE_EXPORTER, RAIL_CONFIG_NAMES, BenchError, add_cadence_arguments,
                           known_collectors, measure, node_exporter, print_tables, rail_exporter)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, help="tree holding sys/ (and proc/)")
    parser.add_argument("--tree-name", help="name in the table (default: the tree's basename)")
    parser.add_argument("--rail-exporter",
                        default=os.path.join(here, "..", "build-bench", "src", "rail_exporter"))
    parser.add_argument("--node-exporter", default=NODE_EXPORTER)
    parser.add_argument("--configs", default=",".join(RAIL_CONFIG_NAMES),
                        help="rail_exporter configs, comma-separated, from "
                             f"{', '.join(RAIL_CONFIG_NAMES)} (default: all of them)")
    parser.add_argument("--scrapes", type=int, default=None,
                        help="measured scrapes per exporter (default 200; 50 with --large)")
    parser.add_argument("--large", action="store_true",
                        help="the tree is the generated large one (default scrapes 50)")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured scrapes per exporter")
    add_cadence_arguments(parser)
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

    collectors = known_collectors(args.rail_exporter)
    exporters = [node_exporter(args.node_exporter, sysfs, procfs)]
    exporters += [rail_exporter(args.rail_exporter, sysfs, procfs, config.strip(), collectors)
                  for config in args.configs.split(",") if config.strip()]
    results, load_before, load_after = measure(exporters, scrapes, args.warmup,
                                               background_s=args.background,
                                               paced=args.paced, pace_s=args.pace,
                                               cadence_rounds=args.cadence_rounds)
    for r in results:
        r["tree"] = tree_name

    print_tables(f"### {tree_name}: {scrapes} interleaved scrapes per exporter (after "
                 f"{args.warmup} warm-up), {os.cpu_count()} CPUs, load average {load_before} "
                 f"before, {load_after} after", results)
    print("Notes: node_exporter reads no GID table; (b) reads every non-empty GID slot's three "
          "files (gids, gid_attrs/types, gid_attrs/ndevs); its collectors: "
          f"{', '.join(collectors)}. (c) reads every hw_counters/ and statistics/ file too. "
          "Timings are wall time seen by the "
          "client (connection, collection, serialisation, transfer); CPU is the exporter "
          "process only. Threads and RSS idle: after the warm-up and 1 s without scrapes. "
          "No target is checked here.")
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
