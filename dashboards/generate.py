#!/usr/bin/python3
"""Writes the Grafana dashboards of this directory (rail-*.json) from generator/.

    dashboards/generate.py           rewrite the JSON files
    dashboards/generate.py --check   exit 1 if a JSON file differs from what this script writes

The JSON files are what users import; the generator keeps their panel ids, grid positions,
datasource references and variables consistent. Edit the panels in generator/ and regenerate:
tests/e2e/dashboards_test.py fails when the files and the generator disagree.

Every query selects with `instance=~"$instance"` (and `rail=~"$rail"` where it has rails) and
reads only the metrics rail_exporter exports and the recording rules of
deploy/prometheus/rail_rules.yml; the fleet records (fleet_peer_rail:*, fleet_rail:*, fleet:*,
fleet_rail_switch:*) aggregate across hosts, have no instance label and are selected by rail
only. Only the standard library.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from generator.fleet import fleet  # noqa: E402
from generator.host import host_overview  # noqa: E402
from generator.probes import probes  # noqa: E402
from generator.tcp_bond import tcp_bond  # noqa: E402
from generator.traffic import traffic  # noqa: E402

DASHBOARDS = {
    "rail-host-overview.json": host_overview,
    "rail-traffic.json": traffic,
    "rail-probes.json": probes,
    "rail-tcp-bond.json": tcp_bond,
    "rail-fleet.json": fleet,
}


def render(build):
    return json.dumps(build(), indent=2) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare instead of writing; exit 1 on a difference")
    args = parser.parse_args()
    stale = []
    for name, build in DASHBOARDS.items():
        path = os.path.join(HERE, name)
        text = render(build)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                stale.append(name)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if stale:
        print("dashboards differ from dashboards/generate.py (run it): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
