#!/usr/bin/python3
"""Checks a fleet's probe plans against each other, independently of rail_exporter's code.

Reads the peers file (file_sd, JSON or YAML) and the JSON that `rail_exporter plan --output json`
printed for every host, and checks, for every probe kind and rail:
  * no host probes itself, every peer is a target of the peers file and is on the rail;
  * every host on the rail probes min(k, n - 1) peers over it (n: the hosts on the rail);
  * every host is probed by at least 1 and at most 2k hosts over it (when n > 1);
  * the plans fit together: there is one cyclic order of the rail's hosts in which every host
    probes exactly the k hosts that follow it (found from the plans alone, then verified);
  * every kind over a rail probes the same pairs (a multi-rail kind, "rail0+rail1", those of its
    first rail), and all plans have the same epoch.
It never computes a plan itself: it only checks that the plans agree with each other.

  plan_check.py --peers-file peers.json [--rails rail0,rail1] [--peers-per-rail K] PLAN.json...

PLAN arguments are files or directories (every *.json in them). --rails: the rails the plans were
asked for (default: every rail a plan names); each host is expected on those its rails label
lists. Exit status 0: consistent; 1: a problem (each printed); 2: unreadable input.
"""

import argparse
import collections
import json
import os
import sys

DEFAULT_PEERS_PER_RAIL = 3
# The kinds that run over all of a host's rails at once ("rail0+rail1"), with the peers of the
# host's first rail: their pairs are checked against a single-rail kind's ring, not as a ring
# of their own (a host on fewer rails has another first rail than its neighbours).
MULTI_RAIL_KINDS = {"multirail_capacity", "ucx_multirail_throughput"}


class InputError(Exception):
    pass


def load_peers(path):
    """{address: set of rails or None (every rail)} from a file_sd file."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    try:
        groups = json.loads(text)
    except json.JSONDecodeError:
        import yaml  # Debian's python3-yaml; only YAML peers files need it
        groups = yaml.safe_load(text)
    if not isinstance(groups, list):
        raise InputError(f"{path}: expected a list of target groups")
    hosts = {}
    for group in groups:
        label = (group.get("labels") or {}).get("rails")
        rails = None if label is None else {r.strip() for r in label.split(",") if r.strip()}
        for address in group.get("targets") or []:
            hosts.setdefault(address, rails)  # the first group naming a target wins
    return hosts


def load_plans(arguments):
    """{self: plan} from files and directories of `rail_exporter plan --output json`."""
    paths = []
    for argument in arguments:
        if os.path.isdir(argument):
            paths += sorted(os.path.join(argument, name) for name in os.listdir(argument)
                            if name.endswith(".json"))
        else:
            paths.append(argument)
    plans = {}
    for path in paths:
        with open(path, encoding="utf-8") as file:
            try:
                plan = json.load(file)
            except json.JSONDecodeError as error:
                raise InputError(f"{path}: {error}") from error
        if plan["self"] in plans:
            raise InputError(f"{path}: a second plan for {plan['self']}")
        plans[plan["self"]] = plan
    return plans


def on_rail(hosts, address, rail):
    rails = hosts[address]
    return rails is None or rail in rails


def ring_order(members, peers, k):
    """A cyclic order of `members` in which each one's peers are the k that follow it, or None.

    Depth-first: the next host must be probed by each of the (up to) k hosts before it, and once
    a host has k hosts after it, those must be exactly its peers. For rails with more than 2k
    hosts that leaves one candidate at each step after the first few."""
    n = len(members)
    start = min(members)
    cycle = [start]
    used = {start}

    def fits_so_far():
        m = len(cycle) - 1
        if m >= k and peers[cycle[m - k]] != set(cycle[m - k + 1:m + 1]):
            return False
        return True

    def complete():
        return all(peers[cycle[i]] == {cycle[(i + step) % n] for step in range(1, k + 1)}
                   for i in range(n))

    # Explicit stack of candidate lists, so that rails of thousands of hosts need no recursion.
    def candidates():
        m = len(cycle)
        allowed = set(peers[cycle[-1]])
        for j in range(max(0, m - k), m):
            allowed &= peers[cycle[j]]
        return sorted(allowed - used)

    stack = [candidates()]
    while stack:
        if len(cycle) == n:
            if complete():
                return cycle
            stack.pop()
            used.discard(cycle.pop())
            continue
        if not stack[-1]:
            stack.pop()
            if len(cycle) > 1:
                used.discard(cycle.pop())
            continue
        host = stack[-1].pop(0)
        cycle.append(host)
        used.add(host)
        if fits_so_far():
            stack.append(candidates())
        else:
            used.discard(cycle.pop())
    return None


def check(hosts, plans, rails, k):
    """The problems found, one line each, and a summary of what was checked."""
    problems = []
    for address in hosts:
        if address not in plans:
            problems.append(f"{address}: no plan")
    for address in plans:
        if address not in hosts:
            problems.append(f"{address}: has a plan but is not in the peers file")
    epochs = {plan["epoch"] for plan in plans.values()}
    if len(epochs) > 1:
        problems.append(f"plans of different epochs: {sorted(epochs)}")

    # (kind, rail) -> {prober: set of peers}, single-rail kinds; multi-rail ones by first rail
    pairs = collections.defaultdict(lambda: collections.defaultdict(set))
    multi_rail = collections.defaultdict(lambda: collections.defaultdict(set))
    kinds = set()
    for address, plan in plans.items():
        for probe in plan["probes"]:
            kind, peer = probe["kind"], probe["peer"]
            probe_rails = probe["rail"].split("+")
            rail = probe_rails[0]
            kinds.add(kind)
            if peer == address:
                problems.append(f"{address}: probes itself ({kind} over {rail})")
            elif peer not in hosts:
                problems.append(f"{address}: probes {peer}, not in the peers file")
            elif not on_rail(hosts, peer, rail):
                problems.append(f"{address}: probes {peer} over {rail}, which {peer} is not on")
            for r in probe_rails:
                if not on_rail(hosts, address, r) or r not in rails:
                    problems.append(f"{address}: probes over {r}, not one of its rails")
            multi = kind in MULTI_RAIL_KINDS or len(probe_rails) > 1
            (multi_rail if multi else pairs)[(kind, rail)][address].add(peer)

    rings = 0
    for rail in sorted(rails):
        members = sorted(a for a in hosts if on_rail(hosts, a, rail) and a in plans)
        n = len(members)
        expected = min(k, n - 1) if n else 0
        rail_kinds = sorted(kind for (kind, r) in pairs if r == rail)
        first = None
        for kind in rail_kinds:
            found_before = len(problems)
            peers = {a: pairs[(kind, rail)].get(a, set()) for a in members}
            for address, planned in peers.items():
                if len(planned) != expected:
                    problems.append(f"{address}: {len(planned)} peers over {rail} ({kind}), "
                                    f"expected {expected} of {n} hosts on the rail")
            in_degree = collections.Counter(p for planned in peers.values() for p in planned)
            if n > 1:
                for address in members:
                    if not 1 <= in_degree[address] <= 2 * k:
                        problems.append(f"{address}: probed by {in_degree[address]} hosts over "
                                        f"{rail} ({kind}), expected 1 to {2 * k}")
            # A ring only where every host's degrees were right: otherwise none can fit.
            if (n > k + 1 and len(problems) == found_before
                    and ring_order(members, peers, expected) is None):
                problems.append(f"{rail} ({kind}): the plans fit no single ring")
            rings += 1
            if first is None:
                first = (kind, peers)
            elif peers != first[1]:
                problems.append(f"{rail}: {kind} probes other pairs than {first[0]}")
    for (kind, rail), probers in sorted(multi_rail.items()):
        reference = next((pairs[key] for key in sorted(pairs) if key[1] == rail), None)
        n = sum(1 for a in hosts if on_rail(hosts, a, rail) and a in plans)
        for address, peers in sorted(probers.items()):
            if reference is not None and peers != reference.get(address, set()):
                problems.append(f"{address}: {kind} probes other peers over {rail} than its "
                                f"single-rail kinds")
            elif len(peers) != min(k, n - 1):
                problems.append(f"{address}: {len(peers)} peers for {kind} over {rail}, "
                                f"expected {min(k, n - 1)}")
    summary = (f"{len(plans)} plans, {len(rails)} rails, {len(kinds)} kinds, "
               f"{sum(len(p['probes']) for p in plans.values())} probes, {rings} rings checked")
    return problems, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers-file", required=True)
    parser.add_argument("--rails", help="comma-separated; default: every rail a plan names")
    parser.add_argument("--peers-per-rail", type=int, default=DEFAULT_PEERS_PER_RAIL)
    parser.add_argument("plans", nargs="+", help="plan JSON files or directories of them")
    args = parser.parse_args()
    try:
        hosts = load_peers(args.peers_file)
        plans = load_plans(args.plans)
    except (OSError, InputError, KeyError, ValueError) as error:
        print(f"plan_check: {error}", file=sys.stderr)
        return 2
    if args.rails:
        rails = {r for r in args.rails.split(",") if r}
    else:
        rails = {r for plan in plans.values() for probe in plan["probes"]
                 for r in probe["rail"].split("+")}
    problems, summary = check(hosts, plans, rails, args.peers_per_rail)
    for problem in problems:
        print(f"plan_check: {problem}")
    print(f"plan_check: {summary}: {'INCONSISTENT' if problems else 'consistent'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
