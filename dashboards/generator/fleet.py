"""Fleet: every host's rails as their probers see them against the fleet, per rail index;
discovery and the probe plan of the agents.

The fleet records of deploy/prometheus/rail_rules.yml (fleet_peer_rail:*, fleet_rail:*, fleet:*,
fleet_rail_switch:*) aggregate across hosts and have no instance label: they are selected by rail
only. The agents' own rail_fleet_* families are selected by instance like every other query.
"""

from generator.panels import (
    INST, RAIL, SEL, dashboard, matrix, merged_table_transformations, override, row, stat,
    table, targets, timeseries, value_map,
)

SICK = value_map({0: ("ok", "green"), 1: ("sick", "red")})
# A peer's rail against the fleet median: the rules call it sick below 0.5.
RATIO_STEPS = ("red", (0.5, "orange"), (0.8, "green"))


def rails_panels():
    ratio = matrix(
        "Hosts x rails: throughput from their probers / fleet median",
        "One row per host (the peer target its probers name), one column per rail: the median "
        "its probers measure divided by the fleet's median for that rail "
        "(fleet_peer_rail:probe_throughput:ratio_fleet_median; the lowest over probe kinds and "
        "message sizes). Below 50% the host's rail is sick.",
        "min by (peer, rail) (fleet_peer_rail:probe_throughput:ratio_fleet_median{%s})" % RAIL,
        "peer", "rail", "percentunit", RATIO_STEPS)
    verdict = matrix(
        "Hosts x rails: verdict",
        "fleet_peer_rail:sick per host and rail: sick when more than half of its probers failed "
        "their latest probe of it, or when it is below half the fleet median.",
        "max by (peer, rail) (fleet_peer_rail:sick{%s})" % RAIL,
        "peer", "rail", "none", ("green", (1, "red")), mappings=SICK)
    sick_hosts = stat(
        "Hosts with a sick rail",
        "Hosts with at least one sick rail as their probers see them (fleet:sick_peers:count).",
        targets("sum(fleet:sick_peers:count)"), steps=("green", (1, "red")))
    sick_rails = stat(
        "Sick rail indexes",
        "Rails sick across the fleet (fleet_rail:sick: more than a quarter of their hosts sick, "
        "or the fleet median below half of line rate); FleetRailIndexSick fires for them.",
        targets("count(fleet_rail:sick{%s}) or vector(0)" % RAIL), steps=("green", (1, "red")))
    median = timeseries(
        "Fleet median throughput per rail",
        "The median over hosts of what each host's rail gets from its probers "
        "(fleet_rail:probe_throughput_bytes_per_second:median, bits per second), per probe kind "
        "and message size, against the median line rate of the rail (dashed).",
        targets(("8 * fleet_rail:probe_throughput_bytes_per_second:median{%s}" % RAIL,
                 "{{rail}} {{kind}} {{size}}B"),
                ("8 * fleet_rail:line_rate_bytes_per_second:median{%s}" % RAIL,
                 "{{rail}} line rate")),
        "bps", minimum=0,
        overrides=[override("byRegexp", ".*line rate", custom__lineStyle={
            "dash": [10, 10], "fill": "dash"})])
    line_rate = timeseries(
        "Fleet median / line rate",
        "fleet_rail:probe_throughput:ratio_line_rate: the fleet median of a rail divided by its "
        "median line rate. FleetRailIndexSick fires below 50% for UCX kinds with messages of "
        "100000 bytes or more on RDMA rails.",
        targets(("fleet_rail:probe_throughput:ratio_line_rate{%s}" % RAIL,
                 "{{rail}} {{kind}} {{size}}B")),
        "percentunit", minimum=0, threshold=0.5)
    sick_share = timeseries(
        "Sick hosts per rail",
        "The share of a rail's hosts that are sick (fleet_rail:sick_peers:ratio; the rail index "
        "is sick above 25%) and their number (fleet_rail:sick_peers:count, right axis).",
        targets(("fleet_rail:sick_peers:ratio{%s}" % RAIL, "{{rail}} share"),
                ("fleet_rail:sick_peers:count{%s}" % RAIL, "{{rail}} hosts")),
        "percentunit", minimum=0, threshold=0.25,
        overrides=[override("byRegexp", ".* hosts", unit="short",
                            custom__axisPlacement="right")])
    sick_table = table(
        "Sick hosts now",
        "Each sick host and rail: the share of its probers whose latest probe failed "
        "(fleet_peer_rail:probe_failing_probers:ratio) and the lowest ratio of its probers' "
        "median to the fleet median (fleet_peer_rail:probe_throughput:ratio_fleet_median).",
        targets(
            "max by (peer, rail) (fleet_peer_rail:probe_failing_probers:ratio{%s}) "
            "and on (peer, rail) (max by (peer, rail) (fleet_peer_rail:sick{%s}) == 1)"
            % (RAIL, RAIL),
            "min by (peer, rail) (fleet_peer_rail:probe_throughput:ratio_fleet_median{%s}) "
            "and on (peer, rail) (max by (peer, rail) (fleet_peer_rail:sick{%s}) == 1)"
            % (RAIL, RAIL),
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time"], order=["peer", "rail", "Value #A", "Value #B"],
            rename={"peer": "Host (peer)", "rail": "Rail"}),
        [override("byName", "Value #A", displayName="Probers failing", unit="percentunit"),
         override("byName", "Value #B", displayName="Of fleet median", unit="percentunit")],
        sort_by="Rail")
    return [
        (row("Rails across the fleet"), 24, 1),
        (sick_hosts, 6, 8), (sick_rails, 6, 8), (sick_table, 12, 8),
        (ratio, 12, 12), (verdict, 12, 12),
        (median, 12, 8), (line_rate, 12, 8),
        (sick_share, 24, 7),
    ]


def cabling_panels():
    switches = matrix(
        "Rails x switches",
        "One row per switch (its LLDP system name), one column per rail: how many hosts' rail "
        "lands on the switch (fleet_rail_switch:hosts:count, from rail_link_neighbor_info). In a "
        "rail-optimized fabric each switch has one column filled; a second number in a row is a "
        "host cabled to the wrong leaf (RailMiscabled names it once 3 or more hosts make the "
        "switch's rail). Rails with no neighbour known are not counted.",
        "sum by (system_name, rail) (fleet_rail_switch:hosts:count{%s})" % RAIL,
        "system_name", "rail", "none", ("blue",))
    return [
        (row("Cabling"), 24, 1),
        (switches, 24, 8),
    ]


def latency_panels():
    worst = timeseries(
        "Worst round trip per rail (p99)",
        "The largest p99 round trip of any prober's latest run to any peer on the rail "
        "(fleet_rail:probe_rtt_p99_seconds:max, from rail_probe_rtt_run_seconds and the agents' "
        "rail_fleet_rail_rtt_worst_seconds).",
        targets(("fleet_rail:probe_rtt_p99_seconds:max{%s}" % RAIL, "{{rail}} {{kind}}")),
        "s", minimum=0)
    slowest = table(
        "Slowest round trips now",
        "The ten prober -> peer pairs with the largest p99 round trip of their latest run "
        "(rail_probe_rtt_run_seconds{stat=\"p99\"}).",
        targets("topk(10, rail_probe_rtt_run_seconds{%s, stat=\"p99\"})" % SEL,
                instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "__name__": True, "job": True, "stat": True},
            "indexByName": {"instance": 0, "peer": 1, "rail": 2, "kind": 3, "size": 4,
                            "Value": 5},
            "renameByName": {"instance": "Prober", "peer": "Peer", "rail": "Rail",
                             "kind": "Kind", "size": "Size (B)", "Value": "p99"}}}],
        [override("byName", "p99", unit="s")], sort_by="Rail")
    return [
        (row("Latency"), 24, 1),
        (worst, 12, 8), (slowest, 12, 8),
    ]


def discovery_panels():
    targets_per_source = timeseries(
        "Targets per discovery source",
        "What each discovery source of each agent contributes now "
        "(rail_fleet_discovery_targets) and the merged peer set (rail_fleet_peers).",
        targets(("rail_fleet_discovery_targets{%s}" % INST, "{{instance}} {{source}}"),
                ("rail_fleet_peers{%s}" % INST, "{{instance}} merged")),
        "short", minimum=0)
    errors = timeseries(
        "Discovery refreshes and errors",
        "Refreshes (rail_fleet_discovery_refreshes_total) and failed ones "
        "(rail_fleet_discovery_errors_total) per source in each interval; FleetDiscoveryFailing "
        "fires when a source fails and has not succeeded for 10 minutes.",
        targets(("sum by (source) (increase(rail_fleet_discovery_refreshes_total{%s}"
                 "[$__rate_interval]))" % INST, "{{source}} refreshes"),
                ("sum by (instance, source) (increase(rail_fleet_discovery_errors_total{%s}"
                 "[$__rate_interval])) > 0" % INST, "{{instance}} {{source}} errors")),
        "short", bars=True, minimum=0,
        overrides=[override("byRegexp", ".* errors", color={"fixedColor": "red",
                                                            "mode": "fixed"})])
    sources = table(
        "Discovery sources",
        "Per agent and source: targets now, seconds since the last successful refresh "
        "(rail_fleet_discovery_last_success_timestamp_seconds) and errors in the last hour.",
        targets(
            "max by (instance, source) (rail_fleet_discovery_targets{%s})" % INST,
            "max by (instance, source) "
            "(time() - rail_fleet_discovery_last_success_timestamp_seconds{%s})" % INST,
            "sum by (instance, source) (increase(rail_fleet_discovery_errors_total{%s}[1h]))"
            % INST,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time"], order=["instance", "source", "Value #A", "Value #B", "Value #C"],
            rename={"instance": "Instance", "source": "Source"}),
        [override("byName", "Value #A", displayName="Targets"),
         override("byName", "Value #B", displayName="Last success", unit="s"),
         override("byName", "Value #C", displayName="Errors (1h)", decimals=0)],
        sort_by="Instance")
    self_missing = stat(
        "Agents not among their targets",
        "Agents that did not find themselves among the targets (rail_fleet_self_found == 0): "
        "no other agent plans probes of them (FleetSelfNotFound).",
        targets("count(rail_fleet_self_found{%s} == 0) or vector(0)" % INST),
        steps=("green", (1, "red")))
    epoch = stat(
        "Plan epoch",
        "The current epoch of the agents' plan (rail_fleet_plan_epoch; lowest and highest over "
        "the agents: they differ only for the moment of a rotation).",
        targets(("min(rail_fleet_plan_epoch{%s})" % INST, "lowest"),
                ("max(rail_fleet_plan_epoch{%s})" % INST, "highest")),
        steps=("blue",))
    peers = timeseries(
        "Peers planned per rail",
        "How many peers the agents plan on each rail (rail_fleet_plan_peers: k, or all the "
        "others in a fleet of k hosts or fewer): lowest and highest over the agents, and plan "
        "recomputations that changed pairs (rail_fleet_plan_changes_total, right axis).",
        targets(("min by (rail) (rail_fleet_plan_peers{%s})" % SEL, "{{rail}} lowest"),
                ("max by (rail) (rail_fleet_plan_peers{%s})" % SEL, "{{rail}} highest"),
                ("sum(increase(rail_fleet_plan_changes_total{%s}[$__rate_interval]))" % INST,
                 "plan changes")),
        "short", minimum=0,
        overrides=[override("byName", "plan changes", custom__axisPlacement="right",
                            custom__drawStyle="bars")])
    planned = timeseries(
        "Planned peers by latest result",
        "The agents' own per-rail summary (rail_fleet_rail_peers{state}): planned peers whose "
        "latest probe succeeded or failed, summed over the agents.",
        targets(("sum by (rail, kind, state) (rail_fleet_rail_peers{%s})" % SEL,
                 "{{rail}} {{kind}} {{state}}")),
        "short", minimum=0,
        overrides=[override("byRegexp", ".* failed", color={"fixedColor": "red",
                                                            "mode": "fixed"})])
    agents_median = timeseries(
        "Agents' median throughput of their planned peers",
        "The median over agents of rail_fleet_rail_throughput_median_bytes_per_second (each "
        "agent's median over its current plan's peers, bits per second): the long-lived view "
        "that stays when per-peer series are dropped at scrape time.",
        targets(("8 * quantile by (rail, kind, memory) (0.5, "
                 "rail_fleet_rail_throughput_median_bytes_per_second{%s})" % SEL,
                 "{{rail}} {{kind}} {{memory}}")),
        "bps", minimum=0)
    budget = timeseries(
        "Probe series against the budget",
        "Per-peer probe series each agent exports (rail_fleet_probe_series) divided by "
        "fleet.max_probe_series (rail_fleet_probe_series_budget); the ten fullest agents. "
        "FleetProbeSeriesOverBudget fires above 100%.",
        targets(("topk(10, rail_fleet_probe_series{%s} / on (instance, job) "
                 "rail_fleet_probe_series_budget{%s})" % (INST, INST), "{{instance}}")),
        "percentunit", minimum=0, threshold=1)
    return [
        (row("Discovery and plan"), 24, 1),
        (self_missing, 6, 8), (epoch, 6, 8), (sources, 12, 8),
        (targets_per_source, 12, 8), (errors, 12, 8),
        (peers, 12, 8), (planned, 12, 8),
        (agents_median, 12, 8), (budget, 12, 8),
    ]


def fleet():
    return dashboard(
        "rail-exporter-fleet", "Rail exporter / Fleet",
        "Every host's rails as the agents that probe them see them, against the fleet's median "
        "per rail index: hosts x rails, sick hosts and sick rail indexes, the switches each rail "
        "lands on, worst round trips; "
        "the agents' discovery sources and probe plan.",
        rails_panels() + cabling_panels() + latency_panels() + discovery_panels())
