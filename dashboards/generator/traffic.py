"""Traffic: per-rail rates and shares, RoCE congestion, drops and errors."""

from generator.panels import (
    INST, SEL, dashboard, hw_rate, override, per_netdev, per_port, row, table, targets,
    timeseries,
)


def traffic():
    rate_panels = []
    for direction in ("transmit", "receive"):
        rate_panels.append(timeseries(
            "%s per rail" % direction.capitalize(),
            "Bits per second each rail %ss (rail:%s_bytes:rate1m: port counters of RDMA rails, "
            "netdev statistics of the others)." % (direction, direction),
            targets(("8 * rail:%s_bytes:rate1m{%s}" % (direction, SEL), "{{instance}} {{rail}}")),
            "bps", minimum=0))
    for direction in ("transmit", "receive"):
        rate_panels.append(timeseries(
            "%s share per rail" % direction.capitalize(),
            "Each rail's share of its host's %s bytes (rail:%s_share:ratio_rate1m); the dashed "
            "line is an even split over the rails up. No series while the host is idle."
            % (direction, direction),
            targets(("rail:%s_share:ratio_rate1m{%s}" % (direction, SEL), "{{instance}} {{rail}}"),
                    ("1 / instance:rails_up:count{%s}" % INST, "{{instance}} even share")),
            "percentunit", minimum=0, maximum=1,
            overrides=[override("byRegexp", ".*even share", custom__lineStyle={
                "dash": [10, 10], "fill": "dash"}, color={"fixedColor": "gray",
                                                         "mode": "fixed"})]))
    utilization = timeseries(
        "Utilization of the line rate",
        "Transmit and receive rate of each rail divided by its line rate "
        "(rail:line_rate_bytes_per_second).",
        targets(
            ("rail:transmit_bytes:rate1m{%s} / on (instance, job, rail) "
             "rail:line_rate_bytes_per_second{%s}" % (SEL, SEL), "{{instance}} {{rail}} tx"),
            ("rail:receive_bytes:rate1m{%s} / on (instance, job, rail) "
             "rail:line_rate_bytes_per_second{%s}" % (SEL, SEL), "{{instance}} {{rail}} rx")),
        "percentunit", minimum=0)
    host_total = timeseries(
        "Host total over the rails",
        "All rails of the host together (instance:rail_transmit_bytes:rate1m, "
        "instance:rail_receive_bytes:rate1m).",
        targets(("8 * instance:rail_transmit_bytes:rate1m{%s}" % INST, "{{instance}} tx"),
                ("8 * instance:rail_receive_bytes:rate1m{%s}" % INST, "{{instance}} rx")),
        "bps", minimum=0)
    cnp = timeseries(
        "Congestion notifications (CNP)",
        "RoCE congestion control (hw_counters): np_cnp_sent, CNPs this port sent as notification "
        "point for ECN-marked packets it received; rp_cnp_handled, CNPs it received and slowed "
        "down for as reaction point; rp_cnp_ignored, CNPs it ignored.",
        targets((hw_rate("np_cnp_sent|rp_cnp_handled|rp_cnp_ignored"),
                 "{{instance}} {{rail}} {{counter}}")),
        "pps", minimum=0)
    ecn = timeseries(
        "ECN-marked RoCE packets",
        "RoCE packets received with an ECN congestion mark (hw_counters/np_ecn_marked_roce_packets)"
        " and ticks the port waited for flow-control credits (counters/port_xmit_wait).",
        targets((hw_rate("np_ecn_marked_roce_packets"), "{{instance}} {{rail}} {{counter}}"),
                ("sum by (instance, rail) (%s)" % per_port(
                    "rate(rail_port_transmit_wait_ticks_total{%s}[$__rate_interval])" % INST),
                 "{{instance}} {{rail}} port_xmit_wait ticks")),
        "short", minimum=0)
    out_of_buffer = timeseries(
        "Receive buffer drops (out_of_buffer)",
        "Packets dropped because no receive WQE was posted (hw_counters/out_of_buffer) and "
        "packets that arrived out of sequence (out_of_sequence).",
        targets((hw_rate("out_of_buffer|out_of_sequence"), "{{instance}} {{rail}} {{counter}}")),
        "pps", minimum=0)
    retransmits = timeseries(
        "RDMA transport retries and errors",
        "Transport-level trouble from hw_counters: sequence errors, ACK timeouts, RNR NAK "
        "retries exceeded, duplicate requests, adaptive retransmissions, slow restarts.",
        targets((hw_rate("packet_seq_err|implied_nak_seq_err|local_ack_timeout_err|"
                         "rnr_nak_retry_err|duplicate_request|roce_adp_retrans|roce_slow_restart"),
                 "{{instance}} {{rail}} {{counter}}")),
        "cps", minimum=0)
    port_error_metrics = [
        ("rail_port_symbol_errors_total", "symbol errors"),
        ("rail_port_link_error_recoveries_total", "link error recoveries"),
        ("rail_port_link_downed_total", "link downed"),
        ("rail_port_receive_errors_total", "receive errors"),
        ("rail_port_receive_remote_physical_errors_total", "remote physical errors"),
        ("rail_port_excessive_buffer_overrun_errors_total", "buffer overruns"),
        ("rail_port_transmit_discards_total", "transmit discards"),
    ]
    port_errors = timeseries(
        "Port errors (PMA counters)",
        "Error counters of the rails' RDMA ports (counters/symbol_error, link_error_recovery, "
        "link_downed, port_rcv_errors, port_rcv_remote_physical_errors, "
        "excessive_buffer_overrun_errors, port_xmit_discards).",
        targets(*[("sum by (instance, rail) (%s)" % per_port(
            "rate(%s{%s}[$__rate_interval])" % (metric, INST)), "{{instance}} {{rail}} " + label)
            for metric, label in port_error_metrics]),
        "cps", minimum=0)
    netdev_error_metrics = [
        ("rail_netdev_receive_errors_total", "rx errors"),
        ("rail_netdev_transmit_errors_total", "tx errors"),
        ("rail_netdev_receive_dropped_total", "rx dropped"),
        ("rail_netdev_transmit_dropped_total", "tx dropped"),
    ]
    netdev_errors = timeseries(
        "Netdev errors and drops",
        "statistics/{rx,tx}_{errors,dropped} of each rail's netdev.",
        targets(*[("sum by (instance, rail) (%s)" % per_netdev(
            "rate(%s{%s}[$__rate_interval])" % (metric, INST)), "{{instance}} {{rail}} " + label)
            for metric, label in netdev_error_metrics]),
        "pps", minimum=0)
    saturated = timeseries(
        "Saturated PMA counters",
        "Narrow PMA counters of the rail's port that pegged at their maximum "
        "(rail_port_pma_saturated): they stopped counting, their rates read 0.",
        targets(("sum by (instance, rail) (%s)" % per_port(
            "rail_port_pma_saturated{%s}" % INST), "{{instance}} {{rail}}")),
        "none", minimum=0, threshold=1, legend_calcs=("lastNotNull",))
    counter_source = table(
        "Counter source per rail",
        "Which files the rails' byte counters, and so the rates and shares above, come from "
        "(rail_port_bytes_source_info): counters (the port's PMA), counters_ext (its 64-bit "
        "copies), netdev_statistics (a software RDMA device without PMA, rxe, whose "
        "netdev carries all of its traffic) or none (no byte counters: no rate for the rail). "
        "Rails without an RDMA device always read their netdev's statistics.",
        targets("max by (instance, rail, device, port, source, netdev) "
                "(rail_port_bytes_source_info{%s} * on (instance, job, device, port) "
                "group_left (rail) max without (netdev, link_layer, ipv4, transport, source) "
                "(rail_info{%s}))" % (INST, SEL), instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "Value": True},
            "indexByName": {"instance": 0, "rail": 1, "device": 2, "port": 3, "source": 4,
                            "netdev": 5},
            "renameByName": {"instance": "Instance", "rail": "Rail", "device": "Device",
                             "port": "Port", "source": "Counter source", "netdev": "Netdev"}}}],
        [], sort_by="Rail")
    layout = [
        (row("Rates and shares"), 24, 1),
        (rate_panels[0], 12, 8), (rate_panels[1], 12, 8),
        (rate_panels[2], 12, 8), (rate_panels[3], 12, 8),
        (utilization, 12, 8), (host_total, 12, 8),
        (counter_source, 24, 6),
        (row("Congestion (RoCE hw_counters)"), 24, 1),
        (cnp, 12, 8), (ecn, 12, 8),
        (out_of_buffer, 12, 8), (retransmits, 12, 8),
        (row("Errors"), 24, 1),
        (port_errors, 12, 8), (netdev_errors, 12, 8),
        (saturated, 24, 6),
    ]
    return dashboard(
        "rail-exporter-traffic", "Rail exporter / Traffic",
        "Per-rail transmit and receive rates and shares from the counters, RoCE congestion "
        "(CNP, ECN), receive buffer drops and port errors.",
        layout)
