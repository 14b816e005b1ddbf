#!/usr/bin/python3
"""Writes the Grafana dashboards of this directory (rail-*.json) from the definitions below.

    dashboards/generate.py           rewrite the JSON files
    dashboards/generate.py --check   exit 1 if a JSON file differs from what this script writes

The JSON files are what users import; this script keeps their panel ids, grid positions,
datasource references and variables consistent. Edit the panels here and regenerate: the
dashboard tests (tests/e2e/dashboards_*_test.py) fail when the files and this script disagree.

Every query selects with `instance=~"$instance"` and `rail=~"$rail"` and uses only the metrics
rail_exporter exports and the recording rules of deploy/prometheus/rail_rules.yml.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Grafana's current dashboard JSON model (schemaVersion of @grafana/schema's defaultDashboard,
# tests/dashboards/package.json pins the version the tests check against).
SCHEMA_VERSION = 42
DS = {"type": "prometheus", "uid": "${datasource}"}
TAGS = ["rail_exporter"]

INST = 'instance=~"$instance"'
RAIL = 'rail=~"$rail"'
SEL = "%s, %s" % (INST, RAIL)

# rail_info reduced to the labels that map a port (device, port) or a netdev to its rail.
RAILS_BY_PORT = ('max without (netdev, link_layer, ipv4, transport, source) '
                 '(rail_info{%s, device!=""})' % SEL)
RAILS_BY_NETDEV = ('max without (device, port, link_layer, ipv4, transport, source) '
                   '(rail_info{%s, netdev!=""})' % SEL)
# The same for rails without an RDMA device (TCP rails: their state is the netdev's).
NETDEV_ONLY_RAILS = ('max without (device, port, link_layer, ipv4, transport, source) '
                     '(rail_info{%s, device="", netdev!=""})' % SEL)
# The slaves of every bond, as netdevs (value 1).
BOND_SLAVES = ('group by (instance, job, bond, netdev) '
               '(label_replace(rail_bond_slave_up{%s}, "netdev", "$1", "slave", "(.*)"))' % INST)


def per_port(expr):
    """expr (labels device, port) with the rail of its port added; only ports that are rails."""
    return "%s * on (instance, job, device, port) group_left (rail) %s" % (expr, RAILS_BY_PORT)


def per_netdev(expr, rails=RAILS_BY_NETDEV):
    """expr (label netdev) with the rail of its netdev added; only netdevs that are rails."""
    return "%s * on (instance, job, netdev) group_left (rail) %s" % (expr, rails)


def hw_rate(counters):
    """Per-rail rate of the mlx5 hw_counters named by the regex `counters`."""
    return ("sum by (instance, rail, counter) (%s)" % per_port(
        'rate(rail_port_hw_events_total{%s, counter=~"%s"}[$__rate_interval])' % (INST, counters)))


# --- Panel building blocks -----------------------------------------------------------------------

def target(ref, expr, legend=None, instant=False, fmt=None):
    t = {"datasource": DS, "editorMode": "code", "expr": expr, "refId": ref}
    if legend is not None:
        t["legendFormat"] = legend
    if instant:
        t["instant"] = True
        t["range"] = False
    else:
        t["range"] = True
    if fmt:
        t["format"] = fmt
    return t


def targets(*specs, **common):
    """targets(("expr", "legend"), ...) with refIds A, B, C, ..."""
    out = []
    for i, spec in enumerate(specs):
        expr, legend = (spec, None) if isinstance(spec, str) else spec
        out.append(target(chr(ord("A") + i), expr, legend, **common))
    return out


def thresholds(*steps):
    """Threshold steps: thresholds("green", (0.5, "red")) -> base green, red from 0.5."""
    out = [{"color": steps[0], "value": None}]
    for value, color in steps[1:]:
        out.append({"color": color, "value": value})
    return {"mode": "absolute", "steps": out}


def value_map(mapping):
    """{value: (text, color)} -> a Grafana value mapping."""
    options = {}
    for index, (value, (text, color)) in enumerate(sorted(mapping.items())):
        options[str(value)] = {"color": color, "index": index, "text": text}
    return [{"options": options, "type": "value"}]


def override(matcher_id, name, **properties):
    return {"matcher": {"id": matcher_id, "options": name},
            "properties": [{"id": key.replace("__", "."), "value": value}
                           for key, value in properties.items()]}


def timeseries(title, description, tgts, unit, *, stack=False, bars=False, minimum=None,
               maximum=None, threshold=None, overrides=None, legend_calcs=("mean", "max")):
    custom = {
        "axisBorderShow": False, "axisCenteredZero": False, "axisColorMode": "text",
        "axisLabel": "", "axisPlacement": "auto", "barAlignment": 0,
        "drawStyle": "bars" if bars else "line", "fillOpacity": 10, "gradientMode": "none",
        "hideFrom": {"legend": False, "tooltip": False, "viz": False},
        "insertNulls": False, "lineInterpolation": "linear", "lineWidth": 1, "pointSize": 4,
        "scaleDistribution": {"type": "linear"}, "showPoints": "auto", "spanNulls": False,
        "stacking": {"group": "A", "mode": "normal" if stack else "none"},
        "thresholdsStyle": {"mode": "dashed" if threshold is not None else "off"},
    }
    defaults = {"color": {"mode": "palette-classic"}, "custom": custom, "unit": unit,
                "mappings": [],
                "thresholds": thresholds("green", (threshold, "red")) if threshold is not None
                else thresholds("green")}
    if minimum is not None:
        defaults["min"] = minimum
    if maximum is not None:
        defaults["max"] = maximum
    return {
        "type": "timeseries", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
        "options": {
            "legend": {"calcs": list(legend_calcs), "displayMode": "table",
                       "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": tgts,
    }


def table(title, description, tgts, transformations, overrides, sort_by=None):
    panel = {
        "type": "table", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {
            "defaults": {"custom": {"align": "auto", "cellOptions": {"type": "auto"},
                                    "filterable": True, "inspect": False},
                         "mappings": [], "thresholds": thresholds("green")},
            "overrides": overrides,
        },
        "options": {"cellHeight": "sm", "frameIndex": 0, "showHeader": True},
        "targets": tgts,
        "transformations": transformations,
    }
    if sort_by:
        panel["options"]["sortBy"] = [{"desc": False, "displayName": sort_by}]
    return panel


def stat(title, description, tgts, unit="none", steps=("green",), mappings=None):
    return {
        "type": "stat", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {"defaults": {"color": {"mode": "thresholds"}, "mappings": mappings or [],
                                     "thresholds": thresholds(*steps), "unit": unit},
                        "overrides": []},
        "options": {
            "colorMode": "background", "graphMode": "none", "justifyMode": "auto",
            "orientation": "auto", "percentChangeColorMode": "standard",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "showPercentChange": False, "textMode": "value_and_name", "wideLayout": True,
        },
        "targets": tgts,
    }


def state_timeline(title, description, tgts, mappings):
    return {
        "type": "state-timeline", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {
            "defaults": {"color": {"mode": "thresholds"},
                         "custom": {"fillOpacity": 80, "hideFrom": {"legend": False,
                                                                   "tooltip": False,
                                                                   "viz": False},
                                    "lineWidth": 0},
                         "mappings": mappings, "thresholds": thresholds("green")},
            "overrides": [],
        },
        "options": {
            "alignValue": "left", "mergeValues": True, "rowHeight": 0.9, "showValue": "auto",
            "legend": {"calcs": [], "displayMode": "list", "placement": "bottom",
                       "showLegend": False},
            "tooltip": {"mode": "single", "sort": "none"},
        },
        "targets": tgts,
    }


def heatmap(title, description, tgt):
    return {
        "type": "heatmap", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {"defaults": {"custom": {"hideFrom": {"legend": False, "tooltip": False,
                                                             "viz": False},
                                                "scaleDistribution": {"type": "linear"}}},
                        "overrides": []},
        "options": {
            "calculate": False, "cellGap": 1,
            "color": {"exponent": 0.5, "fill": "dark-orange", "mode": "scheme", "reverse": False,
                      "scale": "exponential", "scheme": "Oranges", "steps": 64},
            "exemplars": {"color": "rgba(255,0,255,0.7)"},
            "filterValues": {"le": 1e-9},
            "legend": {"show": True},
            "rowsFrame": {"layout": "auto"},
            "showValue": "never",
            "tooltip": {"mode": "single", "showColorScale": False, "yHistogram": True},
            "yAxis": {"axisPlacement": "left", "reverse": False, "unit": "s"},
        },
        "targets": [tgt],
    }


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": []}


UP_DOWN = value_map({0: ("down", "red"), 1: ("up", "green")})
OK_FAIL = value_map({0: ("FAIL", "red"), 1: ("ok", "green")})


def merged_table_transformations(hide, order, rename):
    """merge (one row per shared label values), then organize: hide, order, rename columns."""
    return [
        {"id": "merge", "options": {}},
        {"id": "organize", "options": {
            "excludeByName": {name: True for name in hide},
            "indexByName": {name: i for i, name in enumerate(order)},
            "renameByName": rename,
        }},
    ]


# --- Dashboards ----------------------------------------------------------------------------------

def host_overview():
    rail_table = table(
        "Rails",
        "One row per rail: rail_info, the port state (rail_active, or the netdev's operstate for "
        "rails without an RDMA device), line rate (rail:line_rate_bytes_per_second), netdev MTU, "
        "the RoCE v2 GID carrying the rail's IPv4 address (rail_gid_info), the transport UCX "
        "probes really used (rail_probe_transport_info: TCP when any lane ran over tcp) and how "
        "many health checks fail (rail_check_ok == 0).",
        targets(
            "max by (instance, rail, device, port, netdev, link_layer, ipv4, transport) "
            "(rail_info{%s})" % SEL,
            "max by (instance, rail) (rail_active{%s} or on (instance, job, rail) %s "
            "or on (instance, job, rail) rail_present{%s})"
            % (SEL, per_netdev("rail_netdev_up{%s}" % INST, NETDEV_ONLY_RAILS), SEL),
            "8 * max by (instance, rail) (rail:line_rate_bytes_per_second{%s})" % SEL,
            "max by (instance, rail) (%s)" % per_netdev("rail_netdev_mtu_bytes{%s}" % INST),
            "max by (instance, rail, gid) (rail_gid_info{%s, type=\"RoCE v2\", ipv4!=\"\"} "
            "* on (instance, job, device, port, netdev, ipv4) group_left (rail) "
            "max without (link_layer, transport, source) (rail_info{%s, device!=\"\"}))"
            % (INST, SEL),
            "max by (instance, rail) ("
            "2 * rail_probe_transport_info{%s, rail!~\".*[+].*\", kind!~\"tcp_.*\", "
            "transport=\"tcp\"} or rail_probe_transport_info{%s, rail!~\".*[+].*\", "
            "kind!~\"tcp_.*\", transport!=\"tcp\"})" % (SEL, SEL),
            "sum by (instance, rail) (1 - rail_check_ok{%s, rail!=\"\"})" % SEL,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time", "Value #A", "Value #E"],
            order=["instance", "rail", "Value #B", "Value #C", "device", "port", "netdev",
                   "link_layer", "ipv4", "gid", "Value #D", "transport", "Value #F",
                   "Value #G"],
            rename={"instance": "Instance", "rail": "Rail", "device": "Device", "port": "Port",
                    "netdev": "Netdev", "link_layer": "Link layer", "ipv4": "IPv4",
                    "gid": "RoCE v2 GID", "transport": "Rail class"}),
        [
            override("byName", "Value #B", displayName="State", mappings=UP_DOWN,
                     custom__cellOptions={"type": "color-background"}),
            override("byName", "Value #C", displayName="Speed", unit="bps"),
            override("byName", "Value #D", displayName="MTU", unit="bytes"),
            override("byName", "Value #F", displayName="UCX transport used",
                     mappings=value_map({1: ("RDMA", "green"), 2: ("TCP", "orange")}),
                     custom__cellOptions={"type": "color-text"}),
            override("byName", "Value #G", displayName="Failing checks",
                     thresholds=thresholds("green", (1, "red")),
                     custom__cellOptions={"type": "color-background"}),
        ],
        sort_by="Rail")
    failing = table(
        "Failing checks",
        "Every failing health check with its reason (rail_check_info; only failing checks have "
        "a series). Host-wide checks (no rail) are listed whatever rail is selected.",
        targets("max by (instance, check, rail, peer, reason) (rail_check_info{%s, rail=~\"$rail|\"})"
                % INST, instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "Value": True},
            "indexByName": {"instance": 0, "check": 1, "rail": 2, "peer": 3, "reason": 4},
            "renameByName": {"instance": "Instance", "check": "Check", "rail": "Rail",
                             "peer": "Peer", "reason": "Reason"}}}],
        [], sort_by="Check")
    checks = state_timeline(
        "Checks over time",
        "rail_check_ok per check, rail and peer: 1 passes, 0 fails.",
        targets(("min by (instance, check, rail, peer) (rail_check_ok{%s, rail=~\"$rail|\"})"
                 % INST, "{{instance}} {{check}} {{rail}} {{peer}}")),
        OK_FAIL)
    rails_up = stat(
        "Rails up",
        "Rails neither down nor missing (instance:rails_up:count) of all rails (rail_rails).",
        targets(("instance:rails_up:count{%s}" % INST, "{{instance}} up"),
                ("rail_rails{%s}" % INST, "{{instance}} rails")),
        steps=("blue",))
    failing_count = stat(
        "Failing checks",
        "Health checks failing now (rail_check_ok == 0), all rails and host-wide checks.",
        targets(("sum by (instance) (1 - rail_check_ok{%s})" % INST, "{{instance}}")),
        steps=("green", (1, "red")))
    collectors = stat(
        "Collectors failing",
        "Collectors whose last scrape failed (rail_exporter_scrape_collector_success == 0).",
        targets(("sum by (instance) (1 - rail_exporter_scrape_collector_success{%s})" % INST,
                 "{{instance}}")),
        steps=("green", (1, "red")))
    read_errors = stat(
        "sysfs read errors",
        "Failed sysfs/procfs reads since the agent started (rail_exporter_read_errors_total).",
        targets(("sum by (instance) (rail_exporter_read_errors_total{%s})" % INST,
                 "{{instance}}")),
        steps=("green", (1, "orange")))
    agents = table(
        "Agent and peers",
        "This agent's version and UCX (rail_exporter_build_info) and what each peer reported "
        "(rail_peer_info); Mismatch is rail_peer_version_mismatch.",
        targets(
            "max by (instance, version, ucx_version, revision) (rail_exporter_build_info{%s})"
            % INST,
            "max by (instance, peer, agent_version, ucx_version) (rail_peer_info{%s})" % INST,
            "max by (instance, peer) (rail_peer_version_mismatch{%s})" % INST,
            instant=True, fmt="table"),
        [{"id": "merge", "options": {}},
         {"id": "organize", "options": {
             "excludeByName": {"Time": True, "Value #A": True, "Value #B": True},
             "indexByName": {"instance": 0, "version": 1, "revision": 2, "ucx_version": 3,
                             "peer": 4, "agent_version": 5, "Value #C": 6},
             "renameByName": {"instance": "Instance", "version": "Agent", "revision": "Revision",
                              "ucx_version": "UCX", "peer": "Peer",
                              "agent_version": "Peer agent"}}}],
        [override("byName", "Value #C", displayName="Mismatch",
                  mappings=value_map({0: ("no", "green"), 1: ("yes", "red")}),
                  custom__cellOptions={"type": "color-text"})])
    devices = table(
        "RDMA devices",
        "RDMA devices (rail_infiniband_device_info): board, firmware, HCA type, node GUID.",
        targets("max by (instance, device, board_id, fw_ver, hca_type, node_guid) "
                "(rail_infiniband_device_info{%s})" % INST, instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "Value": True},
            "indexByName": {"instance": 0, "device": 1, "hca_type": 2, "board_id": 3,
                            "fw_ver": 4, "node_guid": 5},
            "renameByName": {"instance": "Instance", "device": "Device", "hca_type": "HCA",
                             "board_id": "Board", "fw_ver": "Firmware",
                             "node_guid": "Node GUID"}}}],
        [], sort_by="Device")
    gids = table(
        "GID tables",
        "Every non-empty GID (rail_gid_info) of the rails' ports: RoCE v2 GIDs must carry the "
        "rail netdev's IPv4 address and must not point at a bond.",
        targets("max by (instance, device, port, index, type, gid, netdev, ipv4) "
                "(rail_gid_info{%s} * on (instance, job, device, port) group_left () %s)"
                % (INST, RAILS_BY_PORT), instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "Value": True},
            "indexByName": {"instance": 0, "device": 1, "port": 2, "index": 3, "type": 4,
                            "gid": 5, "netdev": 6, "ipv4": 7},
            "renameByName": {"instance": "Instance", "device": "Device", "port": "Port",
                             "index": "Index", "type": "Type", "gid": "GID",
                             "netdev": "Netdev", "ipv4": "IPv4"}}}],
        [], sort_by="Device")
    layout = [
        (rails_up, 6, 4), (failing_count, 6, 4), (collectors, 6, 4), (read_errors, 6, 4),
        (rail_table, 24, 8),
        (failing, 12, 8), (checks, 12, 8),
        (agents, 12, 7), (devices, 12, 7),
        (gids, 24, 8),
    ]
    return dashboard(
        "rail-exporter-host", "Rail exporter / Host overview",
        "The rails of a host: state, speed, netdev, RoCE v2 GID, the transport UCX really uses, "
        "and the health checks that fail.",
        layout)


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
        ("rail_port_receive_discards_total", "receive discards"),
        ("rail_port_transmit_discards_total", "transmit discards"),
    ]
    port_errors = timeseries(
        "Port errors (PMA counters)",
        "Error counters of the rails' RDMA ports (counters/symbol_error, link_error_recovery, "
        "link_downed, port_rcv_errors, port_rcv_discards, port_xmit_discards).",
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
    layout = [
        (row("Rates and shares"), 24, 1),
        (rate_panels[0], 12, 8), (rate_panels[1], 12, 8),
        (rate_panels[2], 12, 8), (rate_panels[3], 12, 8),
        (utilization, 12, 8), (host_total, 12, 8),
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
        (lanes, 24, 7),
    ]
    return dashboard(
        "rail-exporter-probes", "Rail exporter / Probes",
        "Probe results: per-rail and multi-rail throughput against line rate, round-trip "
        "percentiles and histogram, success and errors, the UCX transports really used.",
        layout)


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
                   "(sum by (instance, job, bond) (%s) > 0)" % (slave_rate[d], slave_rate[d]),
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


# --- Assembly ------------------------------------------------------------------------------------

def variables():
    query_var = {"type": "query", "datasource": DS, "refresh": 2, "sort": 1,
                 "includeAll": True, "multi": True, "allValue": ".*",
                 "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
                 "options": [], "hide": 0, "skipUrlSync": False, "regex": ""}
    return [
        {"type": "datasource", "name": "datasource", "label": "Data source",
         "query": "prometheus", "hide": 0, "includeAll": False, "multi": False,
         "options": [], "refresh": 1, "regex": "", "skipUrlSync": False},
        dict(query_var, name="instance", label="Instance",
             query={"qryType": 1, "query": "label_values(rail_info, instance)",
                    "refId": "PrometheusVariableQueryEditor-VariableQuery"}),
        dict(query_var, name="rail", label="Rail",
             query={"qryType": 1, "query": "label_values(rail_info{%s}, rail)" % INST,
                    "refId": "PrometheusVariableQueryEditor-VariableQuery"}),
    ]


def dashboard(uid, title, description, layout):
    panels = []
    x = y = row_height = 0
    for panel_id, (panel, width, height) in enumerate(layout, start=1):
        if x + width > 24:
            x, y, row_height = 0, y + row_height, 0
        panel = dict(panel, id=panel_id, gridPos={"h": height, "w": width, "x": x, "y": y})
        panels.append(panel)
        x += width
        row_height = max(row_height, height)
    return {
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]},
        "description": description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "links": [{"asDropdown": False, "icon": "external link", "includeVars": True,
                   "keepTime": True, "tags": TAGS, "targetBlank": False,
                   "title": "Rail exporter", "tooltip": "", "type": "dashboards"}],
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "tags": TAGS,
        "templating": {"list": variables()},
        "time": {"from": "now-3h", "to": "now"},
        "timepicker": {},
        "timezone": "browser",
        "title": title,
        "uid": uid,
        "version": 1,
    }


DASHBOARDS = {
    "rail-host-overview.json": host_overview,
    "rail-traffic.json": traffic,
    "rail-probes.json": probes,
    "rail-tcp-bond.json": tcp_bond,
}


def render(build):
    return json.dumps(build(), indent=2, sort_keys=False) + "\n"


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
