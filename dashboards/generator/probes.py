"""Probes: throughput against line rate, multi-rail, RTT, success and errors."""

from generator.panels import (
    INST, SEL, dashboard, heatmap, merged_table_transformations, override, row, state_timeline,
    table, target, targets, timeseries, value_map,
)


def probes():
    ratio_line = timeseries(
        "Probe throughput / line rate",
        "Each single-rail bulk probe (and each rail's part of multirail_capacity) divided by "
        "the rail's line rate (rail:probe_throughput:ratio_line_rate). RailProbeThroughputLow "
        "fires below 50% for UCX probes of RDMA rails.",
        targets(("rail:probe_throughput:ratio_line_rate{%s}" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{size}}B -> {{peer}}")),
        "percentunit", minimum=0, threshold=0.5)
    throughput = timeseries(
        "Probe throughput per rail",
        "rail:probe_throughput_bytes_per_second (bits per second) against the rail's line rate "
        "(dashed).",
        targets(("8 * rail:probe_throughput_bytes_per_second{%s}" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{size}}B -> {{peer}}"),
                ("8 * rail:line_rate_bytes_per_second{%s}" % SEL,
                 "{{instance}} {{rail}} line rate")),
        "bps", minimum=0,
        overrides=[override("byRegexp", ".*line rate", custom__lineStyle={
            "dash": [10, 10], "fill": "dash"})])
    sibling = timeseries(
        "Probe throughput / sibling rails' median",
        "A rail's probe throughput divided by the median of the host's other rails with the "
        "same probe, peer and size (rail:probe_throughput:ratio_sibling_median).",
        targets(("rail:probe_throughput:ratio_sibling_median{%s}" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{size}}B -> {{peer}}")),
        "percentunit", minimum=0, threshold=0.5)
    multirail_kinds = 'kind=~"multirail_capacity|ucx_multirail_throughput"'
    multirail = timeseries(
        "Multi-rail throughput",
        "multirail_capacity (every rail driven at once, a context per rail) and "
        "ucx_multirail_throughput (one context striping over all rails) against the sum of the "
        "rails' line rates (dashed).",
        targets(("8 * rail_probe_throughput_bytes_per_second{%s, %s}" % (INST, multirail_kinds),
                 "{{instance}} {{kind}} {{size}}B -> {{peer}}"),
                ("8 * sum by (instance) (rail:line_rate_bytes_per_second{%s})" % INST,
                 "{{instance}} sum of line rates")),
        "bps", minimum=0,
        overrides=[override("byRegexp", ".*sum of line rates", custom__lineStyle={
            "dash": [10, 10], "fill": "dash"})])
    multirail_ratio = timeseries(
        "Multi-rail throughput / line rate, striping efficiency",
        "Multi-rail probe throughput divided by the sum of the rails' line rates, and "
        "rail_multirail_striping_efficiency (ucx_multirail_throughput / multirail_capacity; "
        "MultiRailNotStriping fires below 60%).",
        targets(("rail_probe_throughput_bytes_per_second{%s, %s} / on (instance, job) "
                 "group_left () sum by (instance, job) (rail:line_rate_bytes_per_second{%s})"
                 % (INST, multirail_kinds, INST), "{{instance}} {{kind}} / line rate"),
                ("rail_multirail_striping_efficiency{%s}" % INST,
                 "{{instance}} striping efficiency -> {{peer}}")),
        "percentunit", minimum=0, threshold=0.6)
    shares = timeseries(
        "Per-rail share and throughput in multi-rail probes",
        "Each rail's share of the bytes of the multi-rail UCX probe by its own counters "
        "(rail_share_ratio; not striping above 80%) and each rail's throughput while all were "
        "driven (rail_probe_rail_throughput_bytes_per_second, right axis).",
        targets(("rail_share_ratio{%s, kind=\"ucx_multirail_throughput\"}" % SEL,
                 "{{instance}} {{rail}} share -> {{peer}}"),
                ("8 * rail_probe_rail_throughput_bytes_per_second{%s}" % SEL,
                 "{{instance}} {{rail}} {{kind}} throughput -> {{peer}}")),
        "percentunit", minimum=0, threshold=0.8,
        overrides=[override("byRegexp", ".*throughput.*", unit="bps",
                            custom__axisPlacement="right")])
    rtt = timeseries(
        "Round-trip time percentiles (last run)",
        "p50, p99 and p99.9 of each latency probe's last run (rail_probe_rtt_run_seconds); "
        "round trip, not one-way.",
        targets(("rail_probe_rtt_run_seconds{%s, stat=~\"p50|p99|p99.9\"}" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{size}}B {{stat}}")),
        "s", minimum=0)
    rtt_hist = timeseries(
        "Round-trip time p99 over the window (histogram)",
        "histogram_quantile(0.99) of every ping-pong sample in the window "
        "(rail_probe_rtt_seconds), per rail, kind and size.",
        targets(("histogram_quantile(0.99, sum by (instance, rail, kind, size, le) "
                 "(rate(rail_probe_rtt_seconds_bucket{%s}[$__rate_interval])))" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{size}}B p99")),
        "s", minimum=0)
    heatmaps = [heatmap(
        "%s round trips (heatmap)" % kind,
        "Every %s sample of the selected rails by round-trip time (rail_probe_rtt_seconds "
        "buckets from 1 us, x1.5 each)." % kind,
        target("A", "sum by (le) (increase(rail_probe_rtt_seconds_bucket{%s, kind=\"%s\"}"
                    "[$__rate_interval]))" % (SEL, kind), "{{le}}", fmt="heatmap"))
        for kind in ("ucx_rtt", "tcp_rtt")]
    success = state_timeline(
        "Probe success",
        "rail_probe_success of every probe series: 1 when its last run succeeded (withdrawn "
        "after three intervals without a run).",
        targets(("rail_probe_success{%s}" % SEL,
                 "{{instance}} {{kind}} {{rail}} {{size}}B -> {{peer}}")),
        value_map({0: ("failed", "red"), 1: ("ok", "green")}))
    errors = timeseries(
        "Probe runs and errors",
        "Runs (rail_probe_runs_total) and failed runs by reason (rail_probe_errors_total) in "
        "each interval.",
        targets(("sum by (instance, kind, rail) (increase(rail_probe_runs_total{%s}"
                 "[$__rate_interval]))" % SEL, "{{instance}} {{kind}} {{rail}} runs"),
                ("sum by (instance, kind, rail, reason) (increase(rail_probe_errors_total{%s}"
                 "[$__rate_interval]))" % SEL, "{{instance}} {{kind}} {{rail}} error {{reason}}")),
        "short", bars=True, minimum=0,
        overrides=[override("byRegexp", ".* error .*", color={"fixedColor": "red",
                                                               "mode": "fixed"})])
    last = table(
        "Last results",
        "Per probe series: seconds since its last run (rail_probe_last_run_timestamp_seconds), "
        "success, throughput, time moving data and local CPU per second of the run.",
        targets(
            "max by (instance, kind, peer, rail, size) "
            "(time() - rail_probe_last_run_timestamp_seconds{%s})" % SEL,
            "max by (instance, kind, peer, rail, size) (rail_probe_success{%s})" % SEL,
            "8 * max by (instance, kind, peer, rail, size) "
            "(rail_probe_throughput_bytes_per_second{%s})" % SEL,
            "max by (instance, kind, peer, rail, size) (rail_probe_duration_seconds{%s})" % SEL,
            "max by (instance, kind, peer, rail, size) (rail_probe_cpu_seconds{%s, "
            "side=\"local\"} / ignoring (side) rail_probe_duration_seconds{%s})" % (SEL, SEL),
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time"],
            order=["instance", "kind", "rail", "peer", "size", "Value #A", "Value #B",
                   "Value #C", "Value #D", "Value #E"],
            rename={"instance": "Instance", "kind": "Kind", "rail": "Rail", "peer": "Peer",
                    "size": "Size (B)"}),
        [override("byName", "Value #A", displayName="Last run", unit="s"),
         override("byName", "Value #B", displayName="Success",
                  mappings=value_map({0: ("failed", "red"), 1: ("ok", "green")}),
                  custom__cellOptions={"type": "color-text"}),
         override("byName", "Value #C", displayName="Throughput", unit="bps"),
         override("byName", "Value #D", displayName="Duration", unit="s"),
         override("byName", "Value #E", displayName="Local CPU", unit="percentunit")],
        sort_by="Kind")
    spread = timeseries(
        "Spread of each bulk run (interval rates' cv)",
        "The coefficient of variation of each bulk run's interval rates "
        "(rail_probe_throughput_cv): above figures.max_interval_cv (0.25) the run was noise, and "
        "probe_throughput and multirail_striping hold back rather than fail on it.",
        targets(("rail_probe_throughput_cv{%s}" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{size}}B -> {{peer}}")),
        "short", minimum=0, threshold=0.25)
    withheld = table(
        "Figures withheld and checks held back",
        "Runs whose figures broke an invariant and were not published "
        "(rail_probe_figures_withheld), striping efficiencies withheld and why "
        "(rail_multirail_striping_efficiency_withheld), and checks that could not judge "
        "(rail_check_held_back).",
        targets(
            "max by (instance, kind, peer, rail, invariant) (rail_probe_figures_withheld{%s})"
            % SEL,
            "max by (instance, peer, reason) "
            "(rail_multirail_striping_efficiency_withheld{%s})" % INST,
            "max by (instance, check, peer, rail, reason) (rail_check_held_back{%s})" % SEL,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time", "Value #A", "Value #B", "Value #C"],
            order=["instance", "rail", "peer", "kind", "check", "invariant", "reason"],
            rename={"instance": "Instance", "rail": "Rail", "peer": "Peer", "kind": "Kind",
                    "check": "Check", "invariant": "Invariant", "reason": "Reason"}),
        [], sort_by="Instance")
    lanes = table(
        "UCX lanes: transports and devices",
        "The transports and devices the endpoints of the last UCX probes really used "
        "(rail_probe_transport_info, from ucp_ep_print_info), and whether a rail that should "
        "use RDMA fell back to TCP (rail_fallback_tcp).",
        targets(
            "max by (instance, kind, peer, rail, transport, device) "
            "(rail_probe_transport_info{%s})" % SEL,
            "max by (instance, peer, rail) (rail_fallback_tcp{%s})" % SEL,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time", "Value #A"],
            order=["instance", "rail", "peer", "kind", "transport", "device", "Value #B"],
            rename={"instance": "Instance", "rail": "Rail", "peer": "Peer", "kind": "Kind",
                    "transport": "Transport", "device": "Device"}),
        [override("byName", "Value #B", displayName="TCP fallback",
                  mappings=value_map({0: ("no", "green"), 1: ("yes", "red")}),
                  custom__cellOptions={"type": "color-text"})],
        sort_by="Rail")
    layout = [
        (row("Per-rail throughput"), 24, 1),
        (ratio_line, 12, 8), (throughput, 12, 8),
        (sibling, 24, 7),
        (row("Multi-rail"), 24, 1),
        (multirail, 12, 8), (multirail_ratio, 12, 8),
        (shares, 24, 8),
        (row("Latency"), 24, 1),
        (rtt, 12, 8), (rtt_hist, 12, 8),
        (heatmaps[0], 12, 8), (heatmaps[1], 12, 8),
        (row("Success and errors"), 24, 1),
        (success, 12, 8), (errors, 12, 8),
        (last, 24, 8),
        (spread, 12, 8), (withheld, 12, 8),
        (lanes, 24, 7),
    ]
    return dashboard(
        "rail-exporter-probes", "Rail exporter / Probes",
        "Probe results: per-rail and multi-rail throughput against line rate, round-trip "
        "percentiles and histogram, success and errors, the UCX transports really used.",
        layout)
