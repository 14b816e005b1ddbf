"""TCP and bond path: tcp_throughput next to UCX, bonds and their slaves."""

from generator.panels import (
    BOND_SLAVES, INST, SEL, UP_DOWN, dashboard, merged_table_transformations, override, row, table,
    targets, thresholds, timeseries, value_map,
)


def tcp_bond():
    tcp_vs_ucx = timeseries(
        "TCP vs UCX throughput per rail",
        "tcp_throughput (N streams as configured for the probe, receiver's count) and "
        "ucx_throughput on each rail, against the line rate (dashed).",
        targets(("8 * rail_probe_throughput_bytes_per_second{%s, kind=\"tcp_throughput\"}" % SEL,
                 "{{instance}} {{rail}} tcp -> {{peer}}"),
                ("8 * rail_probe_throughput_bytes_per_second{%s, kind=\"ucx_throughput\"}" % SEL,
                 "{{instance}} {{rail}} ucx {{size}}B -> {{peer}}"),
                ("8 * rail:line_rate_bytes_per_second{%s}" % SEL,
                 "{{instance}} {{rail}} line rate")),
        "bps", minimum=0,
        overrides=[override("byRegexp", ".*line rate", custom__lineStyle={
            "dash": [10, 10], "fill": "dash"})])
    tcp_ratio = timeseries(
        "TCP throughput / line rate, TCP / UCX",
        "tcp_throughput divided by the rail's line rate (rail:probe_throughput:ratio_line_rate) "
        "and by the best ucx_throughput of the same rail and peer.",
        targets(("rail:probe_throughput:ratio_line_rate{%s, kind=\"tcp_throughput\"}" % SEL,
                 "{{instance}} {{rail}} tcp / line rate -> {{peer}}"),
                ("rail_probe_throughput_bytes_per_second{%s, kind=\"tcp_throughput\"} "
                 "/ on (instance, job, peer, rail) group_left () max without (kind, size) "
                 "(rail_probe_throughput_bytes_per_second{%s, kind=\"ucx_throughput\"})"
                 % (SEL, SEL), "{{instance}} {{rail}} tcp / ucx -> {{peer}}")),
        "percentunit", minimum=0)
    rtt = timeseries(
        "TCP vs UCX round-trip time",
        "p50 and p99 of the last tcp_rtt and ucx_rtt runs (rail_probe_rtt_run_seconds).",
        targets(("rail_probe_rtt_run_seconds{%s, kind=~\"tcp_rtt|ucx_rtt\", stat=~\"p50|p99\"}"
                 % SEL, "{{instance}} {{rail}} {{kind}} {{size}}B {{stat}}")),
        "s", minimum=0)
    cpu = timeseries(
        "TCP probe CPU per second of transfer",
        "CPU seconds the tcp_throughput probe used per second moving data, on this side and "
        "the peer's (rail_probe_cpu_seconds / rail_probe_duration_seconds).",
        targets(("rail_probe_cpu_seconds{%s, kind=\"tcp_throughput\"} / ignoring (side) "
                 "group_left rail_probe_duration_seconds{%s, kind=\"tcp_throughput\"}"
                 % (SEL, SEL), "{{instance}} {{rail}} {{side}} -> {{peer}}")),
        "percentunit", minimum=0)
    bonds = table(
        "Bonds",
        "Bond mode, hash policy and active slave (rail_bond_info), MII status (rail_bond_up) "
        "and slaves up of all (rail_bond_active_slaves, rail_bond_slaves).",
        targets(
            "max by (instance, bond, mode, xmit_hash_policy, active_slave) (rail_bond_info{%s})"
            % INST,
            "max by (instance, bond) (rail_bond_up{%s})" % INST,
            "max by (instance, bond) (rail_bond_active_slaves{%s})" % INST,
            "max by (instance, bond) (rail_bond_slaves{%s})" % INST,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time", "Value #A"],
            order=["instance", "bond", "mode", "xmit_hash_policy", "active_slave", "Value #B",
                   "Value #C", "Value #D"],
            rename={"instance": "Instance", "bond": "Bond", "mode": "Mode",
                    "xmit_hash_policy": "Hash policy", "active_slave": "Active slave"}),
        [override("byName", "Value #B", displayName="MII", mappings=UP_DOWN,
                  custom__cellOptions={"type": "color-background"}),
         override("byName", "Value #C", displayName="Slaves up"),
         override("byName", "Value #D", displayName="Slaves")],
        sort_by="Bond")
    slaves = table(
        "Bond slaves",
        "Each slave's MII status (rail_bond_slave_up), bonding state (rail_bond_slave_active), "
        "speed (rail_bond_slave_speed_bytes_per_second) and link failures since the bond was "
        "created (rail_bond_slave_link_failures_total).",
        targets(
            "max by (instance, bond, slave) (rail_bond_slave_up{%s})" % INST,
            "max by (instance, bond, slave) (rail_bond_slave_active{%s})" % INST,
            "8 * max by (instance, bond, slave) (rail_bond_slave_speed_bytes_per_second{%s})"
            % INST,
            "max by (instance, bond, slave) (rail_bond_slave_link_failures_total{%s})" % INST,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time"],
            order=["instance", "bond", "slave", "Value #A", "Value #B", "Value #C", "Value #D"],
            rename={"instance": "Instance", "bond": "Bond", "slave": "Slave"}),
        [override("byName", "Value #A", displayName="MII", mappings=UP_DOWN,
                  custom__cellOptions={"type": "color-background"}),
         override("byName", "Value #B", displayName="State",
                  mappings=value_map({0: ("backup", "blue"), 1: ("active", "green")})),
         override("byName", "Value #C", displayName="Speed", unit="bps"),
         override("byName", "Value #D", displayName="Link failures",
                  thresholds=thresholds("green", (1, "red")),
                  custom__cellOptions={"type": "color-text"})],
        sort_by="Slave")
    slave_rate = {}
    for direction, short in (("transmit", "tx"), ("receive", "rx")):
        slave_rate[direction] = (
            "sum by (instance, job, bond, netdev) (rate(rail_netdev_%s_bytes_total{%s}"
            "[$__rate_interval]) * on (instance, job, netdev) group_left (bond) %s)"
            % (direction, INST, BOND_SLAVES))
    per_slave = [timeseries(
        "%s per bond slave" % direction.capitalize(),
        "Bits per second each slave of a bond %ss (rail_netdev_%s_bytes_total of the slaves), "
        "and the bond's own netdev (dashed)." % (direction, direction),
        targets(("8 * %s" % slave_rate[direction], "{{instance}} {{bond}} {{netdev}}"),
                ("8 * rate(rail_netdev_%s_bytes_total{%s}[$__rate_interval]) "
                 "* on (instance, job, netdev) group_left () group by (instance, job, netdev) "
                 "(label_replace(rail_bond_info{%s}, \"netdev\", \"$1\", \"bond\", \"(.*)\"))"
                 % (direction, INST, INST), "{{instance}} {{netdev}} (bond)")),
        "bps", minimum=0,
        overrides=[override("byRegexp", r".*\(bond\)", custom__lineStyle={
            "dash": [10, 10], "fill": "dash"})])
        for direction in ("transmit", "receive")]
    slave_share = timeseries(
        "Slave share of the bond's bytes",
        "Each slave's share of the bytes its bond's slaves moved: a hash policy that puts every "
        "flow on one slave shows here.",
        targets(*[("%s / on (instance, job, bond) group_left () "
                   "sum by (instance, job, bond) (%s)" % (slave_rate[d], slave_rate[d]),
                   "{{instance}} {{bond}} {{netdev}} %s" % short)
                  for d, short in (("transmit", "tx"), ("receive", "rx"))]),
        "percentunit", minimum=0, maximum=1)
    layout = [
        (row("TCP path"), 24, 1),
        (tcp_vs_ucx, 12, 8), (tcp_ratio, 12, 8),
        (rtt, 12, 8), (cpu, 12, 8),
        (row("Bonds"), 24, 1),
        (bonds, 12, 6), (slaves, 12, 6),
        (per_slave[0], 12, 8), (per_slave[1], 12, 8),
        (slave_share, 24, 7),
    ]
    return dashboard(
        "rail-exporter-tcp-bond", "Rail exporter / TCP and bond path",
        "The TCP path next to the RDMA rails: tcp_throughput against ucx_throughput and line "
        "rate, TCP vs UCX latency, and the bonds with each slave's bytes.",
        layout)
