"""Host overview: the rail table, failing checks, agent, devices and GIDs, the GPU memory path
and the fabric as the NICs count it."""

from generator.panels import (
    INST, NETDEV_ONLY_RAILS, OK_FAIL, RAILS_BY_PORT, SEL, UP_DOWN, dashboard, hw_rate,
    merged_table_transformations, override, per_netdev, row, stat, state_timeline, table,
    targets, thresholds, timeseries, value_map,
)

GPU_CHECKS = "pcie_link|gpu_nic_affinity|gpu_direct|gpu_memory_throughput"
FABRIC_CHECKS = ("pfc_storm|pfc_pause|global_pause|roce_congestion_control|roce_drops|"
                 "port_discards|host_receive_starvation|roce_retransmissions|link_flaps|"
                 "link_errors|nic_temperature")
# The RDMA transport's retransmission counters (hw_counters) by what they mean, as the
# roce_retransmissions check reads them: mlx5's and rxe's names.
RETX_LOSS = ("out_of_sequence|packet_seq_err|implied_nak_seq_err|duplicate_request|rcvd_seq_err|"
             "out_of_seq_request")
RETX_TIMEOUT = "local_ack_timeout_err|completer_retry_err|retry_exceeded_err"
RETX_RNR = "rnr_nak_retry_err|rcvd_rnr_err|send_rnr_err|retry_rnr_exceeded_err"


def gpu_path_panels():
    """The GPU memory path: each GPU's path to the rails, PCIe links below what they can train
    at, and the verdicts of the four GPU path checks."""
    paths = table(
        "GPU to rail paths",
        "The PCIe path between every GPU and every rail's RDMA device (rail_gpu_nic_path_info), "
        "named as nvidia-smi topo -m names it: PIX and PXB stay under PCIe switches, PHB, NODE "
        "and SYS cross the CPU. GPUDirect RDMA wants a rail at PIX or PXB for each GPU.",
        targets("max by (instance, pci_bus_id, rail, device, path) "
                "(rail_gpu_nic_path_info{%s})" % SEL, instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "Value": True},
            "indexByName": {"instance": 0, "pci_bus_id": 1, "rail": 2, "device": 3, "path": 4},
            "renameByName": {"instance": "Instance", "pci_bus_id": "GPU", "rail": "Rail",
                             "device": "Device", "path": "Path"}}}],
        [], sort_by="GPU")
    degraded = table(
        "PCIe links below their maximum",
        "GPUs (device empty) and RDMA devices whose link trained narrower than it can "
        "(rail_pcie_link_width, current against max: lanes). A GPU's speed drops when it is idle "
        "and is judged only during GPU-memory probes (the pcie_link check).",
        # The smaller of a function's two widths (current, max) below the larger: current
        # below what it can train at, whatever the label of each.
        targets("min by (instance, pci_bus_id, device) (rail_pcie_link_width{%s}) "
                "< on (instance, pci_bus_id, device) "
                "max by (instance, pci_bus_id, device) (rail_pcie_link_width{%s})"
                % (INST, INST), instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True},
            "indexByName": {"instance": 0, "pci_bus_id": 1, "device": 2, "Value": 3},
            "renameByName": {"instance": "Instance", "pci_bus_id": "PCI address",
                             "device": "Device", "Value": "Lanes now"}}}],
        [], sort_by="PCI address")
    verdicts = state_timeline(
        "GPU path checks",
        "pcie_link, gpu_nic_affinity, gpu_direct and gpu_memory_throughput (rail_check_ok): 1 "
        "passes, 0 fails; rail_check_info has the reason and `rail_exporter doctor` the fix.",
        targets(("min by (instance, check, rail, peer) "
                 "(rail_check_ok{%s, check=~\"%s\", rail=~\"$rail|\"})" % (INST, GPU_CHECKS),
                 "{{instance}} {{check}} {{rail}} {{peer}}")),
        OK_FAIL)
    ratio = timeseries(
        "GPU memory / host memory throughput",
        "Each probe run from GPU memory divided by the same probe's run from host memory "
        "(rail_probe_memory_throughput_ratio); memory_path says how the GPU bytes moved "
        "(gpu_direct, cuda_copy, staged). The gpu_memory_throughput check fails below "
        "health.gpu_memory_min_host_ratio (0.5 by default).",
        targets(("rail_probe_memory_throughput_ratio{%s}" % SEL,
                 "{{instance}} {{rail}} {{kind}} {{memory}} via {{memory_path}} -> {{peer}}")),
        "percentunit", minimum=0, threshold=0.5)
    return [
        (row("GPU memory path"), 24, 1),
        (paths, 12, 8), (degraded, 12, 8),
        (verdicts, 12, 8), (ratio, 12, 8),
    ]


def fabric_panels():
    """What the rails' NICs count about the fabric (the ethtool collector) and their RDMA ports'
    hw_counters: PFC and 802.3x pause, storms and lossless-priority drops, port discards, CNP and
    ECN rates, transport retransmissions, host receive starvation, whether the NIC lists its
    statistics, flaps and link errors, and the fabric checks."""
    pause = timeseries(
        "PFC pause share per priority and direction",
        "Share of time each rail was paused (rx: its switch held its transmitter, congestion "
        "downstream) or paused its switch (tx: this host could not absorb), from "
        "rail_nic_pfc_pause_seconds_total. The pfc_pause check fails above "
        "health.pfc_pause_max_fraction (0.1 by default).",
        targets(("rate(rail_nic_pfc_pause_seconds_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} {{direction}} prio {{priority}}")),
        "percentunit", minimum=0, threshold=0.1)
    global_pause = timeseries(
        "802.3x global pause",
        "Share of time 802.3x (link-level) pause held each rail (rx) or its switch (tx), from "
        "rail_nic_global_pause_seconds_total (mlx5, listed only while 802.3x pause is on), and "
        "the XOFF frames per second (rail_nic_global_pause_frames_total, right axis) of the "
        "drivers that count no pause time. Global pause stops every priority: a RoCE rail "
        "should use PFC instead. The global_pause check fails above "
        "health.global_pause_max_fraction (0.01 by default) or, judged on frames, above "
        "health.pause_max_frames_per_second.",
        targets(("rate(rail_nic_global_pause_seconds_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} {{direction}} paused"),
                ("rate(rail_nic_global_pause_frames_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} {{direction}} frames")),
        "percentunit", minimum=0, threshold=0.01,
        overrides=[override("byRegexp", ".* frames", unit="pps",
                            custom__axisPlacement="right")])
    drops = timeseries(
        "Pause storms and lossless-priority drops",
        "Pause-storm events (rail_nic_pause_storm_events_total: the pfc_storm check) and the "
        "discards of a priority with PFC on, by its buffer or its congestion handling "
        "(rail_nic_priority_discards_total: the roce_drops check), per second.",
        targets(("rate(rail_nic_pause_storm_events_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} storm {{severity}}"),
                ("rate(rail_nic_priority_discards_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} prio {{priority}} {{cause}} discards")),
        "pps", minimum=0)
    discards = timeseries(
        "Port receive discards",
        "Received packets the NIC's port dropped because its buffers overflowed, per second (the "
        "port_discards check): the port's total (rail_nic_receive_discards_total stage=port: "
        "mlx5 rx_discards_phy, bnxt_en rx_stat_discard, ice rx_dropped.nic), split by priority "
        "(rail_nic_priority_receive_discards_total, mlx5) or CoS queue "
        "(rail_nic_queue_receive_discards_total, bnxt_en). A fabric or port fault: lossy "
        "traffic, or PFC not protecting the RoCE priority.",
        targets(("rate(rail_nic_receive_discards_total{%s, stage=\"port\"}[$__rate_interval])"
                 % SEL, "{{instance}} {{rail}} {{netdev}} port"),
                ("rate(rail_nic_priority_receive_discards_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} prio {{priority}}"),
                ("rate(rail_nic_queue_receive_discards_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} queue {{queue}}")),
        "pps", minimum=0)
    congestion = timeseries(
        "CNP and ECN rates",
        "DCQCN at work: CNPs sent (np_cnp_sent), handled and ignored by the reaction point "
        "(rp_cnp_handled, rp_cnp_ignored) and ECN-marked RoCE packets received "
        "(np_ecn_marked_roce_packets) from the ports' hw_counters, and the packets the NIC "
        "marked itself (rail_nic_ecn_marked_packets_total).",
        targets((hw_rate("np_cnp_sent|rp_cnp_handled|rp_cnp_ignored|np_ecn_marked_roce_packets"),
                 "{{instance}} {{rail}} {{counter}}"),
                ("rate(rail_nic_ecn_marked_packets_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} prio {{priority}} marked by the NIC")),
        "pps", minimum=0)
    retransmissions = timeseries(
        "RDMA transport retransmissions",
        "What the roce_retransmissions check judges, from the rails' RDMA ports' hw_counters, per "
        "second and by meaning: loss (sequence errors and NAKs: out_of_sequence, packet_seq_err, "
        "implied_nak_seq_err, duplicate_request; rxe rcvd_seq_err, out_of_seq_request), "
        "timeouts (the ACK timer expired, loss or a dead peer: local_ack_timeout_err; rxe "
        "completer_retry_err, retry_exceeded_err) and RNR (the peer's application posted no "
        "receive: rnr_nak_retry_err; rxe rcvd_rnr_err, send_rnr_err, retry_rnr_exceeded_err).",
        targets((hw_rate(RETX_LOSS), "{{instance}} {{rail}} loss: {{counter}}"),
                (hw_rate(RETX_TIMEOUT), "{{instance}} {{rail}} timeout: {{counter}}"),
                (hw_rate(RETX_RNR), "{{instance}} {{rail}} RNR: {{counter}}")),
        "pps", minimum=0)
    starvation = timeseries(
        "Host receive starvation (a host fault)",
        "Packets that reached the NIC and found no receive buffer posted by the host, per second "
        "(the host_receive_starvation check): the kernel's Ethernet receive queues not refilled "
        "in time (rail_nic_receive_discards_total stage=queue, mlx5 rx_out_of_buffer; "
        "rail_nic_ring_discards_total, bnxt_en's ring discards: CPU, IRQ affinity, ring size) "
        "and RDMA applications that posted no receive in time (the port's hw_counters "
        "out_of_buffer). Not the fabric: it delivered them.",
        targets(("rate(rail_nic_receive_discards_total{%s, stage=\"queue\"}[$__rate_interval])"
                 % SEL, "{{instance}} {{rail}} {{netdev}} receive queue"),
                ("rate(rail_nic_ring_discards_total{%s, direction=\"rx\"}[$__rate_interval])"
                 % SEL, "{{instance}} {{rail}} {{netdev}} receive rings"),
                (hw_rate("out_of_buffer"), "{{instance}} {{rail}} RDMA receive (out_of_buffer)")),
        "pps", minimum=0)
    statistics = table(
        "NIC statistics",
        "Per rail netdev: its driver and how many ethtool statistics it lists "
        "(rail_nic_ethtool_statistics), whether it lists any (rail_nic_statistics_available: "
        "with none, the checks judged on the NIC's counters give the rail no verdict, alert "
        "RailNicStatisticsMissing) and the entries skipped in the last hour because a name was "
        "listed twice or a line did not parse (rail_nic_statistics_errors_total).",
        targets(
            "max by (instance, rail, netdev, driver) (rail_nic_ethtool_statistics{%s})" % SEL,
            "min by (instance, rail, netdev) (rail_nic_statistics_available{%s})" % SEL,
            "sum by (instance, netdev) (increase(rail_nic_statistics_errors_total{%s}[1h]))"
            % INST,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time"],
            order=["instance", "rail", "netdev", "driver", "Value #A", "Value #B", "Value #C"],
            rename={"instance": "Instance", "rail": "Rail", "netdev": "Netdev",
                    "driver": "Driver"}),
        [
            override("byName", "Value #A", displayName="Statistics"),
            override("byName", "Value #B", displayName="Listed",
                     mappings=value_map({0: ("none", "red"), 1: ("yes", "green")}),
                     custom__cellOptions={"type": "color-background"}),
            override("byName", "Value #C", displayName="Skipped (1h)", decimals=0),
        ],
        sort_by="Rail")
    flaps = timeseries(
        "Link flaps and transceiver unplugs",
        "Link-down events the NIC counts (rail_nic_link_down_events_total), carrier changes to "
        "down (rail_netdev_carrier_down_changes_total) and transceiver unplugs "
        "(rail_nic_module_unplug_events_total, mlx5 module_unplug), per second: the link_flaps "
        "check.",
        targets(("rate(rail_nic_link_down_events_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} link down"),
                (per_netdev("rate(rail_netdev_carrier_down_changes_total{%s}[$__rate_interval])"
                            % INST), "{{instance}} {{rail}} carrier down"),
                ("rate(rail_nic_module_unplug_events_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} module unplugged")),
        "short", minimum=0)
    errors = timeseries(
        "Link errors",
        "What the link_errors check judges, per second: frames with a bad CRC "
        "(rail_nic_crc_errors_total), symbol errors before FEC (rail_nic_symbol_errors_total), "
        "errors FEC did not correct (rail_nic_post_fec_symbol_errors_total, "
        "rail_nic_fec_uncorrectable_blocks_total), and the bits FEC corrected per lane "
        "(rail_nic_lane_fec_corrected_bit_errors_total, right axis): one lane far above the "
        "others points at one fibre or connector.",
        targets(("rate(rail_nic_crc_errors_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} CRC errors"),
                ("rate(rail_nic_symbol_errors_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} symbol errors"),
                ("rate(rail_nic_post_fec_symbol_errors_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} post-FEC errors"),
                ("rate(rail_nic_fec_uncorrectable_blocks_total{%s}[$__rate_interval])" % SEL,
                 "{{instance}} {{rail}} {{netdev}} uncorrectable FEC blocks"),
                ("rate(rail_nic_lane_fec_corrected_bit_errors_total{%s}[$__rate_interval])"
                 % SEL, "{{instance}} {{rail}} {{netdev}} lane {{lane}} corrected bits")),
        "short", minimum=0,
        overrides=[override("byRegexp", ".* corrected bits", custom__axisPlacement="right")])
    ratio = timeseries(
        "FEC corrected-bit ratio",
        "FEC-corrected bits per bit on the wire: over the bits the driver counts received "
        "(rail_nic_physical_receive_bytes_total, bnxt_en), else over the rail's line rate "
        "(rail:line_rate_bytes_per_second: mlx5 counts no received bits, and its PHY decodes "
        "the idle symbols too). The link_errors check fails above "
        "health.link_max_corrected_bit_ratio (1e-6 by default).",
        targets(("(rate(rail_nic_fec_corrected_bit_errors_total{%s}[$__rate_interval]) / (8 * "
                 "rate(rail_nic_physical_receive_bytes_total{%s}[$__rate_interval]))) or "
                 "(rate(rail_nic_fec_corrected_bit_errors_total{%s}[$__rate_interval]) / on "
                 "(instance, job, rail) group_left () "
                 "(8 * rail:line_rate_bytes_per_second{%s}))" % (SEL, SEL, SEL, SEL),
                 "{{instance}} {{rail}} {{netdev}}")),
        "short", minimum=0, threshold=1e-6)
    verdicts = state_timeline(
        "Fabric checks",
        "pfc_storm, pfc_pause, global_pause, roce_congestion_control, roce_drops, port_discards, "
        "host_receive_starvation, roce_retransmissions, link_flaps, link_errors and "
        "nic_temperature (rail_check_ok): 1 passes, 0 fails; the windowed ones give no verdict "
        "on the first scrape, and the NIC-counter ones none for a NIC that lists no statistics. "
        "rail_check_info has the reason.",
        targets(("min by (instance, check, rail) "
                 "(rail_check_ok{%s, check=~\"%s\", rail=~\"$rail\"})" % (INST, FABRIC_CHECKS),
                 "{{instance}} {{check}} {{rail}}")),
        OK_FAIL)
    return [
        (row("Fabric: pause, congestion, drops, link"), 24, 1),
        (pause, 12, 8), (global_pause, 12, 8),
        (drops, 12, 8), (discards, 12, 8),
        (congestion, 12, 8), (retransmissions, 12, 8),
        (starvation, 12, 8), (statistics, 12, 8),
        (flaps, 12, 8), (errors, 12, 8),
        (ratio, 12, 8), (verdicts, 12, 8),
    ]


def qos_panels():
    """The rails' QoS configuration as their drivers report it through DCB netlink, next to the
    qos_config verdict, and the PFC frames the drivers count per priority."""
    config = table(
        "Rail QoS (DCB)",
        "One row per rail with an Ethernet netdev: whether the driver answers DCB netlink "
        "(rail_qos_dcb_info: not_supported means no DCB, so PFC is unknown, not off), trust "
        "(rail_qos_trust_info), the priorities with PFC on (rail_qos_pfc_enabled), how many DSCP "
        "values the app table maps (rail_qos_dscp_priority) and the qos_config verdict. Rails of "
        "a host should read alike; `dcb pfc show` and `dcb app show` print the same.",
        targets(
            "max by (instance, rail, netdev, state) (rail_qos_dcb_info{%s})" % SEL,
            "max by (instance, rail, trust) (rail_qos_trust_info{%s})" % SEL,
            "count by (instance, rail) (rail_qos_pfc_enabled{%s} == 1)" % SEL,
            "count by (instance, rail) (rail_qos_dscp_priority{%s})" % SEL,
            "min by (instance, rail) (rail_check_ok{%s, check=\"qos_config\"})" % SEL,
            instant=True, fmt="table"),
        merged_table_transformations(
            hide=["Time", "Value #A", "Value #B"],
            order=["instance", "rail", "netdev", "state", "trust", "Value #C", "Value #D",
                   "Value #E"],
            rename={"instance": "Instance", "rail": "Rail", "netdev": "Netdev",
                    "state": "DCB", "trust": "Trust"}),
        [
            override("byName", "Value #C", displayName="PFC priorities"),
            override("byName", "Value #D", displayName="DSCP entries"),
            override("byName", "Value #E", displayName="qos_config", mappings=OK_FAIL,
                     custom__cellOptions={"type": "color-background"}),
        ],
        sort_by="Rail")
    enabled = table(
        "PFC on",
        "The priorities with PFC enabled per rail (rail_qos_pfc_enabled == 1); RoCE needs it on "
        "health.roce_priority (3 by default).",
        targets("max by (instance, rail, priority) (rail_qos_pfc_enabled{%s} == 1)" % SEL,
                instant=True, fmt="table"),
        [{"id": "organize", "options": {
            "excludeByName": {"Time": True, "Value": True},
            "indexByName": {"instance": 0, "rail": 1, "priority": 2},
            "renameByName": {"instance": "Instance", "rail": "Rail", "priority": "Priority"}}}],
        [], sort_by="Rail")
    frames = timeseries(
        "PFC frames per priority",
        "PFC pause frames the NIC sent (requests: it asks its switch to pause) and received "
        "(indications: its transmitter is paused) per priority, as the driver counts them for "
        "DCB netlink (rail_qos_pfc_requests_total, rail_qos_pfc_indications_total).",
        targets(("rate(rail_qos_pfc_requests_total{%s}[$__rate_interval]) > 0" % SEL,
                 "{{instance}} {{rail}} prio {{priority}} sent"),
                ("rate(rail_qos_pfc_indications_total{%s}[$__rate_interval]) > 0" % SEL,
                 "{{instance}} {{rail}} prio {{priority}} received")),
        "pps", minimum=0)
    return [
        (row("QoS (DCB)"), 24, 1),
        (config, 12, 8), (enabled, 4, 8), (frames, 8, 8),
    ]


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
        "The GIDs the agent publishes (rail_gid_info: RoCE v2 entries with an IPv4 address by "
        "default, every entry with --collector.gid.entries=all) of the rails' ports: RoCE v2 "
        "GIDs must carry the "
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
    ] + gpu_path_panels() + fabric_panels() + qos_panels()
    return dashboard(
        "rail-exporter-host", "Rail exporter / Host overview",
        "The rails of a host: state, speed, netdev, RoCE v2 GID, the transport UCX really uses, "
        "and the health checks that fail.",
        layout)
