#!/usr/bin/python3
"""rail_exporter and Debian's node_exporter 1.5 on the same fixture trees: every port counter,
port state, rate, netclass fact and bond fact that both export must have the same value.

The name mapping was made by reading both outputs on the fixture trees. node_exporter exports
counters_ext/ (qib, hfi1) as separate node_infiniband_legacy_* series; rail_exporter folds them
into the same metric as counters/. A legacy series is compared only where node_exporter has no
classic series for that port, or where both exist and disagree: the classic 32-bit counter has
then pegged and rail_exporter publishes the 64-bit counters_ext/ value; the summary says so.
"""

import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

# node_infiniband_<name> -> rail_<name>; labels {device, port} on both sides.
PORT_COUNTERS = {
    "port_data_transmitted_bytes_total": "rail_port_transmit_bytes_total",
    "port_data_received_bytes_total": "rail_port_receive_bytes_total",
    "port_packets_transmitted_total": "rail_port_transmit_packets_total",
    "port_packets_received_total": "rail_port_receive_packets_total",
    "unicast_packets_transmitted_total": "rail_port_unicast_transmit_packets_total",
    "unicast_packets_received_total": "rail_port_unicast_receive_packets_total",
    "multicast_packets_transmitted_total": "rail_port_multicast_transmit_packets_total",
    "multicast_packets_received_total": "rail_port_multicast_receive_packets_total",
    "symbol_error_total": "rail_port_symbol_errors_total",
    "link_error_recovery_total": "rail_port_link_error_recoveries_total",
    "link_downed_total": "rail_port_link_downed_total",
    "port_errors_received_total": "rail_port_receive_errors_total",
    "port_receive_remote_physical_errors_total": "rail_port_receive_remote_physical_errors_total",
    "port_receive_switch_relay_errors_total": "rail_port_receive_switch_relay_errors_total",
    "port_discards_received_total": "rail_port_receive_discards_total",
    "port_discards_transmitted_total": "rail_port_transmit_discards_total",
    "port_constraint_errors_transmitted_total": "rail_port_transmit_constraint_errors_total",
    "port_constraint_errors_received_total": "rail_port_receive_constraint_errors_total",
    "local_link_integrity_errors_total": "rail_port_local_link_integrity_errors_total",
    "excessive_buffer_overrun_errors_total": "rail_port_excessive_buffer_overrun_errors_total",
    "vl15_dropped_total": "rail_port_vl15_dropped_total",
    "port_transmit_wait_total": "rail_port_transmit_wait_ticks_total",
}
# counters_ext/ (node_infiniband_legacy_<name>) -> the classic node name of the same quantity.
LEGACY_COUNTERS = {
    "legacy_data_transmitted_bytes_total": "port_data_transmitted_bytes_total",
    "legacy_data_received_bytes_total": "port_data_received_bytes_total",
    "legacy_packets_transmitted_total": "port_packets_transmitted_total",
    "legacy_packets_received_total": "port_packets_received_total",
    "legacy_unicast_packets_transmitted_total": "unicast_packets_transmitted_total",
    "legacy_unicast_packets_received_total": "unicast_packets_received_total",
    "legacy_multicast_packets_transmitted_total": "multicast_packets_transmitted_total",
    "legacy_multicast_packets_received_total": "multicast_packets_received_total",
}
PORT_GAUGES = {  # kind -> (node name, rail name)
    "port state": ("node_infiniband_state_id", "rail_port_state_id"),
    "port physical state": ("node_infiniband_physical_state_id", "rail_port_physical_state_id"),
    "port rate": ("node_infiniband_rate_bytes_per_second", "rail_port_rate_bytes_per_second"),
}
NOT_COMPARED_INFINIBAND = {"info"}  # node_infiniband_info: identity labels, not a value
NETCLASS = {  # kind -> (node name {device}, rail name {netdev})
    "netdev mtu": ("node_network_mtu_bytes", "rail_netdev_mtu_bytes"),
    "netdev speed": ("node_network_speed_bytes", "rail_netdev_speed_bytes_per_second"),
    "netdev carrier": ("node_network_carrier", "rail_netdev_carrier"),
    "netdev up": ("node_network_up", "rail_netdev_up"),
}
BONDING = {  # kind -> (node name {master}, rail name {bond})
    "bond slaves": ("node_bonding_slaves", "rail_bond_slaves"),
    "bond active slaves": ("node_bonding_active", "rail_bond_active_slaves"),
}
KINDS = (["port counters"] + list(PORT_GAUGES) + list(NETCLASS) + list(BONDING))

NODE_FLAGS = ["--collector.disable-defaults", "--collector.infiniband", "--collector.netclass",
              "--collector.bonding"]


def by_key(samples, name, key_labels, rename=None):
    """{tuple of key label values: value} of one metric; rename maps a label to another name."""
    out = {}
    rename = rename or {}
    for labels, value in samples.get(name, {}).items():
        labels = {rename.get(k, k): v for k, v in labels}
        out[tuple(labels.get(k, "") for k in key_labels)] = value
    return out


def has_infiniband_devices(tree):
    path = os.path.join(tree, "sys", "class", "infiniband")
    return os.path.isdir(path) and bool(os.listdir(path))


def has_pma_counters(tree):
    """Whether every RDMA port has counters/ (software devices such as rxe have no PMA)."""
    ports = glob.glob(os.path.join(tree, "sys", "class", "infiniband", "*", "ports", "*"))
    return bool(ports) and all(os.path.isdir(os.path.join(port, "counters")) for port in ports)


def has_bonds(tree):
    path = os.path.join(tree, "sys", "class", "net", "bonding_masters")
    try:
        with open(path) as f:
            return bool(f.read().split())
    except OSError:
        return False


class NodeExporterCompareTest(unittest.TestCase):
    totals = {kind: 0 for kind in KINDS}
    summary = []

    @classmethod
    def tearDownClass(cls):
        print("\n=== rail_exporter vs node_exporter: values compared ===")
        for line in cls.summary:
            print(line)
        print("all trees: " + ", ".join("%s %d" % (k, v) for k, v in cls.totals.items()))

    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        harness.require_executable(self, harness.NODE_EXPORTER)

    def scrape_both(self, tree):
        flags = harness.tree_flags(tree)
        with harness.RailExporter(flags) as ours, harness.NodeExporter(flags + NODE_FLAGS) as node:
            return harness.parse_samples(ours.scrape()), harness.parse_samples(node.scrape())

    def compare(self, kind, name, node_values, rail_values, counts, mismatches):
        for key in sorted(set(node_values) & set(rail_values)):
            counts[kind] += 1
            if node_values[key] != rail_values[key]:
                mismatches.append("%s %s: node_exporter %r, rail_exporter %r" % (
                    name, "/".join(key), node_values[key], rail_values[key]))

    def compare_tree(self, tree_name, tree):
        ours, node = self.scrape_both(tree)
        counts = {kind: 0 for kind in KINDS}
        mismatches, notes = [], []

        # Every node_infiniband_* family must be mapped, so a new counter is not silently skipped.
        mapped = set(PORT_COUNTERS) | set(LEGACY_COUNTERS) | NOT_COMPARED_INFINIBAND | {
            node_name[len("node_infiniband_"):] for node_name, _ in PORT_GAUGES.values()}
        unmapped = sorted(n for n in node if n.startswith("node_infiniband_")
                          and n[len("node_infiniband_"):] not in mapped)
        self.assertEqual(unmapped, [], "node_infiniband_* series without a mapping")

        port_key = ("device", "port")
        node_only = []
        for node_short, rail_name in PORT_COUNTERS.items():
            node_values = by_key(node, "node_infiniband_" + node_short, port_key)
            legacy = [l for l, classic in LEGACY_COUNTERS.items() if classic == node_short]
            for legacy_short in legacy:
                for key, value in by_key(node, "node_infiniband_" + legacy_short,
                                         port_key).items():
                    if key not in node_values:
                        node_values[key] = value
                    elif node_values[key] != value:
                        # counters_ext/ is the 64-bit copy of a classic counter that pegs at
                        # 32 bits: rail_exporter publishes it, so it is what must agree.
                        notes.append("%s %s: counters/ %r vs counters_ext/ %r (node_exporter "
                                     "exports both; rail_exporter %r, compared with "
                                     "counters_ext/)" % (
                                         node_short, "/".join(key), node_values[key], value,
                                         by_key(ours, rail_name, port_key).get(key)))
                        node_values[key] = value
            rail_values = by_key(ours, rail_name, port_key)
            node_only += ["%s %s" % (rail_name, "/".join(k))
                          for k in sorted(set(node_values) - set(rail_values))]
            self.compare("port counters", rail_name, node_values, rail_values, counts, mismatches)
        if node_only:
            notes.append("exported by node_exporter only: " + ", ".join(node_only))

        for kind, (node_name, rail_name) in PORT_GAUGES.items():
            self.compare(kind, rail_name, by_key(node, node_name, port_key),
                         by_key(ours, rail_name, port_key), counts, mismatches)

        rail_netdevs = sorted({dict(l).get("netdev", "") for l in ours.get("rail_info", {})}
                              - {""})
        compared_netdevs = set()
        for kind, (node_name, rail_name) in NETCLASS.items():
            node_values = by_key(node, node_name, ("netdev",), {"device": "netdev"})
            rail_values = by_key(ours, rail_name, ("netdev",))
            compared_netdevs |= {k[0] for k in set(node_values) & set(rail_values)}
            self.compare(kind, rail_name, node_values, rail_values, counts, mismatches)
        for netdev in rail_netdevs:
            self.assertIn(netdev, compared_netdevs,
                          "%s: rail netdev %s is not among the compared netdevs" % (
                              tree_name, netdev))

        for kind, (node_name, rail_name) in BONDING.items():
            self.compare(kind, rail_name, by_key(node, node_name, ("bond",), {"master": "bond"}),
                         by_key(ours, rail_name, ("bond",)), counts, mismatches)

        node_success = by_key(node, "node_scrape_collector_success", ("collector",))
        failed = sorted(k[0] for k, v in node_success.items() if v != 1)
        self.summary.append("%s: %s; netdevs %s%s" % (
            tree_name, ", ".join("%s %d" % (k, v) for k, v in counts.items() if v),
            ",".join(sorted(compared_netdevs)) or "-",
            "; node_exporter collectors without data: " + ",".join(failed) if failed else ""))
        self.summary += ["  note: " + n for n in notes]
        for kind, count in counts.items():
            type(self).totals[kind] += count

        self.assertEqual(mismatches, [], "%s: values differ" % tree_name)

        # An empty comparison fails: what the tree has must have been compared.
        required = []
        if has_infiniband_devices(tree) and has_pma_counters(tree):
            self.assertEqual(node_success.get(("infiniband",)), 1,
                             "%s: node_exporter's infiniband collector failed" % tree_name)
            required += ["port counters"] + list(PORT_GAUGES)
        elif has_infiniband_devices(tree):
            # node_exporter 1.5 gives up on a port without counters/ (rxe, siw: no PMA), so it
            # has none of the ports to compare; rail_exporter must still publish them.
            self.assertNotEqual(node_success.get(("infiniband",)), 1, tree_name)
            self.assertTrue(ours.get("rail_port_active"), "%s: no rail_port_active" % tree_name)
        if any(n.startswith("rail_netdev_") for n in ours):
            required += ["netdev mtu", "netdev carrier", "netdev up"]
        if has_bonds(tree):
            required += list(BONDING)
        for kind in required:
            self.assertGreater(counts[kind], 0, "%s: no %s compared" % (tree_name, kind))
        return counts

    def test_fixture_trees(self):
        trees = harness.fixture_trees()
        self.assertTrue(trees, "no fixture tree under " + harness.FIXTURES)
        for tree_name, tree in trees:
            with self.subTest(tree=tree_name):
                self.compare_tree(tree_name, tree)
        for kind, count in self.totals.items():
            self.assertGreater(count, 0, "no %s compared on any tree" % kind)


if __name__ == "__main__":
    harness.main()
