#!/usr/bin/python3
"""Generate a sysfs tree that looks like a big RDMA host, for bench/scrape_compare.py.

Layout (defaults): 16 mlx5-style RDMA devices x 2 RoCE ports, each port with

* state, phys_state, rate, link_layer, lid, sm_lid, lid_mask_count, sm_sl, cap_mask;
* the full standard counters/ set (the 21 files of tests/fixtures/spark-dual-rail), with 64-bit
  sized values since mlx5 serves PortCountersExtended;
* 50 hw_counters (the 37 names mlx5's counters.c creates on a RoCE port, plus vendor-style
  padding up to the requested count: exporters must read hw_counters/ generically);
* a GID table of 128 slots, ALL populated with distinct non-zero GIDs and their
  gid_attrs/types + gid_attrs/ndevs. This is the worst case for rail_exporter (it reads every
  non-empty slot's three files; node_exporter reads no GID at all). A real port usually has a
  handful of entries and all-zero slots for the rest; --populated-gids N gives that shape.
  Entries come in RoCE v1 / RoCE v2 pairs, as the kernel creates them, per address:
  the link-local fe80:: address, then IPv4-mapped (::ffff:a.b.c.d) addresses, then ULA IPv6.

Each device has the identity files (node_guid, sys_image_guid, fw_ver, board_id, hca_type,
hw_rev, node_type, node_desc) and device/net/<netdev> for both ports' netdevs. Netdevs live in
class/net/<netdev> with operstate, carrier, mtu, speed, address, type and the 24 standard
statistics/* files.

By default the tree uses the real kernel's symlink layout: class/infiniband/<dev> and
class/net/<if> are symlinks into devices/pci0000:00/..., and <dev>/device points at the PCI
function, whose net/ holds the netdevs. --flat writes plain directories instead (like the
checked-in fixtures). A proc/ directory is created empty (no bonds on this host).

Usage: make_large_tree.py OUTDIR [--devices 16] [--ports 2] [--gids 128] [--hw-counters 50]
The output directory must not exist or be empty. Never commit a generated tree.
"""

import argparse
import os
import random
import sys

# The standard counters/ files, as in tests/fixtures/spark-dual-rail (an mlx5 RoCE port).
STANDARD_COUNTERS = [
    "VL15_dropped",
    "excessive_buffer_overrun_errors",
    "link_downed",
    "link_error_recovery",
    "local_link_integrity_errors",
    "multicast_rcv_packets",
    "multicast_xmit_packets",
    "port_rcv_constraint_errors",
    "port_rcv_data",
    "port_rcv_errors",
    "port_rcv_packets",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors",
    "port_xmit_data",
    "port_xmit_discards",
    "port_xmit_packets",
    "port_xmit_wait",
    "symbol_error",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
]

# hw_counters mlx5 creates on a RoCE port (drivers/infiniband/hw/mlx5/counters.c, recent kernels).
MLX5_HW_COUNTERS = [
    "duplicate_request",
    "implied_nak_seq_err",
    "lifespan",
    "local_ack_timeout_err",
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "req_cqe_error",
    "req_cqe_flush_error",
    "req_remote_access_errors",
    "req_remote_invalid_request",
    "req_rnr_retries_exceeded",
    "req_transport_retries_exceeded",
    "resp_cqe_error",
    "resp_cqe_flush_error",
    "resp_local_length_error",
    "resp_remote_access_errors",
    "rnr_nak_retry_err",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "rx_atomic_requests",
    "rx_dct_connect",
    "rx_icrc_encapsulated",
    "rx_read_requests",
    "rx_write_requests",
    "cc_rx_ce_pkts",
    "cc_rx_cnp_pkts",
    "cc_tx_cnp_pkts",
    "req_rnr_nak",
    "resp_rnr_nak",
]

NETDEV_STATISTICS = [
    "collisions",
    "multicast",
    "rx_bytes",
    "rx_compressed",
    "rx_crc_errors",
    "rx_dropped",
    "rx_errors",
    "rx_fifo_errors",
    "rx_frame_errors",
    "rx_length_errors",
    "rx_missed_errors",
    "rx_nohandler",
    "rx_over_errors",
    "rx_packets",
    "tx_aborted_errors",
    "tx_bytes",
    "tx_carrier_errors",
    "tx_compressed",
    "tx_dropped",
    "tx_errors",
    "tx_fifo_errors",
    "tx_heartbeat_errors",
    "tx_packets",
    "tx_window_errors",
]


def hw_counter_names(count):
    names = list(MLX5_HW_COUNTERS[:count])
    prio = 0
    while len(names) < count:
        # Vendor-style per-priority counters as padding: names the exporters have never seen.
        for direction in ("rx", "tx"):
            if len(names) < count:
                names.append(f"{direction}_prio{prio}_roce_packets")
        prio += 1
    return names


def write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def mkdirs(path):
    os.makedirs(path, exist_ok=True)


def gid_text(words):
    return ":".join(f"{w:04x}" for w in words) + "\n"


def mac_for(device, port):
    return [0x30, 0xC5, 0x99, 0x40 + device, 0x6A, 0x10 + port]


def link_local_words(mac):
    # Modified EUI-64 from the MAC, as the kernel derives the RoCE link-local GID.
    eui = [mac[0] ^ 0x02, mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]]
    return [0xFE80, 0, 0, 0] + [(eui[i] << 8) | eui[i + 1] for i in range(0, 8, 2)]


def gid_table(device, port, mac, slots, populated):
    """Returns [(gid words or None, type, ndev)] for every slot of the table."""
    addresses = [link_local_words(mac)]
    ipv4_count = (populated // 2) // 2  # half the addresses IPv4, the rest ULA IPv6
    for k in range(1, ipv4_count):
        a, b, c, d = 10, 16 * port + (device >> 4), ((device & 0xF) << 4) | (k >> 8), k & 0xFF
        addresses.append([0, 0, 0, 0, 0, 0xFFFF, (a << 8) | b, (c << 8) | d])
    k = 0
    while len(addresses) * 2 < populated:
        k += 1
        addresses.append([0xFD00, 0x0AB0 + port, device, 0x0100, 0, 0, k >> 16, k & 0xFFFF])
    entries = []
    for words in addresses:
        entries.append((words, "IB/RoCE v1"))
        entries.append((words, "RoCE v2"))
    entries = entries[:populated]
    table = []
    for slot in range(slots):
        if slot < len(entries):
            table.append((entries[slot][0], entries[slot][1]))
        else:
            table.append((None, None))
    return table


def build(out, args):
    rng = random.Random(args.seed)
    flat = args.flat
    sysd = os.path.join(out, "sys")
    mkdirs(os.path.join(out, "proc"))
    mkdirs(os.path.join(sysd, "class", "infiniband"))
    mkdirs(os.path.join(sysd, "class", "net"))
    hw_names = hw_counter_names(args.hw_counters)
    files = 0

    # PCI buses 0x1a, 0x28, ... (one every 0x0e, as on a board with a switch per NIC); closer
    # together when that many devices would run past bus 0xff.
    stride = 0x0E if 0x1A + (args.devices - 1) * 0x0E <= 0xFF else (0xFF - 0x1A) // args.devices
    if stride < 1:
        sys.exit(f"make_large_tree.py: {args.devices} devices do not fit on one PCI domain")
    for dev in range(args.devices):
        name = f"mlx5_{dev}"
        bus = 0x1A + dev * stride
        pci = f"0000:{bus:02x}:00.0"
        pci_rel = os.path.join("devices", "pci0000:00", "0000:00:01.0", pci)
        netdevs = [f"enp{bus}s0f{p}np{p}" for p in range(args.ports)]

        if flat:
            dev_dir = os.path.join(sysd, "class", "infiniband", name)
            mkdirs(os.path.join(dev_dir, "device", "net"))
            for nd in netdevs:
                write(os.path.join(dev_dir, "device", "net", nd), f"../../../../net/{nd}\n")
        else:
            pci_dir = os.path.join(sysd, pci_rel)
            dev_dir = os.path.join(pci_dir, "infiniband", name)
            mkdirs(dev_dir)
            mkdirs(os.path.join(pci_dir, "net"))
            os.symlink(os.path.join("..", "..", pci_rel, "infiniband", name),
                       os.path.join(sysd, "class", "infiniband", name))
            os.symlink(os.path.join("..", "..", "..", pci), os.path.join(dev_dir, "device"))

        guid = f"30c5:9903:00{0x40 + dev:02x}:6a10"
        identity = {
            "node_guid": guid,
            "sys_image_guid": guid,
            "fw_ver": "28.45.4028",
            "board_id": "MT_0000000838",
            "hca_type": "MT4129",
            "hw_rev": "0x0",
            "node_type": "1: CA",
            "node_desc": f"bighost {name}",
        }
        for file, value in identity.items():
            write(os.path.join(dev_dir, file), value + "\n")
            files += 1

        for p in range(1, args.ports + 1):
            netdev = netdevs[p - 1]
            mac = mac_for(dev, p)
            port_dir = os.path.join(dev_dir, "ports", str(p))
            for sub in ("counters", "hw_counters", "gids", "gid_attrs/types", "gid_attrs/ndevs"):
                mkdirs(os.path.join(port_dir, sub))
            port_files = {
                "state": "4: ACTIVE",
                "phys_state": "5: LinkUp",
                "rate": "400 Gb/sec (4X NDR)",
                "link_layer": "Ethernet",
                "lid": "0x0",
                "sm_lid": "0x0",
                "lid_mask_count": "0",
                "sm_sl": "0",
                "cap_mask": "0x00010000",
            }
            for file, value in port_files.items():
                write(os.path.join(port_dir, file), value + "\n")
                files += 1

            for counter in STANDARD_COUNTERS:
                if counter.endswith("_data"):
                    value = rng.randrange(1 << 36, 1 << 44)  # 4-byte words, past 32 bits
                elif counter.endswith("_packets"):
                    value = rng.randrange(1 << 28, 1 << 38)
                else:
                    value = rng.choice([0, 0, 0, rng.randrange(1, 50)])
                write(os.path.join(port_dir, "counters", counter), f"{value}\n")
                files += 1
            for counter in hw_names:
                value = 10 if counter == "lifespan" else rng.choice([0, rng.randrange(1, 1 << 30)])
                write(os.path.join(port_dir, "hw_counters", counter), f"{value}\n")
                files += 1

            for slot, (words, gtype) in enumerate(
                    gid_table(dev, p, mac, args.gids, min(args.populated_gids, args.gids))):
                if words is None:
                    # Empty slot: all-zero GID; its attributes answer EINVAL on a real kernel,
                    # which a plain file cannot express, so they are left empty.
                    write(os.path.join(port_dir, "gids", str(slot)), gid_text([0] * 8))
                    write(os.path.join(port_dir, "gid_attrs", "types", str(slot)), "")
                    write(os.path.join(port_dir, "gid_attrs", "ndevs", str(slot)), "")
                else:
                    write(os.path.join(port_dir, "gids", str(slot)), gid_text(words))
                    write(os.path.join(port_dir, "gid_attrs", "types", str(slot)), gtype + "\n")
                    write(os.path.join(port_dir, "gid_attrs", "ndevs", str(slot)), netdev + "\n")
                files += 3

            # The netdev of this port.
            if flat:
                nd_dir = os.path.join(sysd, "class", "net", netdev)
            else:
                nd_dir = os.path.join(sysd, pci_rel, "net", netdev)
                os.symlink(os.path.join("..", "..", pci_rel, "net", netdev),
                           os.path.join(sysd, "class", "net", netdev))
            mkdirs(os.path.join(nd_dir, "statistics"))
            nd_files = {
                "operstate": "up",
                "carrier": "1",
                "mtu": "9000",
                "speed": "400000",
                "address": ":".join(f"{b:02x}" for b in mac),
                "type": "1",
            }
            for file, value in nd_files.items():
                write(os.path.join(nd_dir, file), value + "\n")
                files += 1
            for stat in NETDEV_STATISTICS:
                if stat.endswith("_bytes"):
                    value = rng.randrange(1 << 40, 1 << 50)
                elif stat.endswith("_packets") or stat == "multicast":
                    value = rng.randrange(1 << 26, 1 << 36)
                else:
                    value = rng.choice([0, 0, rng.randrange(1, 1000)])
                write(os.path.join(nd_dir, "statistics", stat), f"{value}\n")
                files += 1
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", help="directory to create (must not exist, or be empty)")
    parser.add_argument("--devices", type=int, default=16)
    parser.add_argument("--ports", type=int, default=2, help="ports per device")
    parser.add_argument("--gids", type=int, default=128, help="GID table slots per port")
    parser.add_argument("--populated-gids", type=int, default=None,
                        help="non-empty slots per port (default: all of --gids, the worst case)")
    parser.add_argument("--hw-counters", type=int, default=50, help="hw_counters per port")
    parser.add_argument("--flat", action="store_true",
                        help="plain directories instead of the kernel's symlink layout")
    parser.add_argument("--seed", type=int, default=1, help="seed for counter values")
    args = parser.parse_args()
    if args.populated_gids is None:
        args.populated_gids = args.gids
    if os.path.exists(args.outdir) and os.listdir(args.outdir):
        sys.exit(f"make_large_tree.py: {args.outdir} exists and is not empty")
    files = build(args.outdir, args)
    print(f"{args.outdir}: {args.devices} devices x {args.ports} ports, {args.gids} GID slots "
          f"({args.populated_gids} populated) and {args.hw_counters} hw_counters per port, "
          f"{files} files", file=sys.stderr)


if __name__ == "__main__":
    main()
