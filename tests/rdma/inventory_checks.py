"""Test 1 of the RDMA lab: each host's /metrics against the guest's own reading of its RDMA
devices and netdevs (`ibv_devinfo -v`, `rdma link`, `rdma dev`, `ip`, sysfs read with the shell's
read and globs), never against the agent's own parser.
"""

import ipaddress
import json
import re

import rdma_lab
from rdma_lab import find, series, DEVICE, NETDEV, RAILS

# IB speed names by the code ibv_devinfo prints in parentheses after active_speed.
SPEED_NAMES = {1: "SDR", 2: "DDR", 4: "QDR", 8: "FDR10", 16: "FDR", 32: "EDR", 64: "HDR",
               128: "NDR", 256: "XDR"}

# Shell builtins where they do (read, printf, globs): every process costs a third of a second in
# a TCG guest.
GUEST_COMMAND = (
    "for d in rxe0 rxe1; do echo \"=== ibv_devinfo $d\"; ibv_devinfo -v -d $d; "
    "P=/sys/class/infiniband/$d; echo \"=== sysfs $d\"; "
    "for f in fw_ver node_guid sys_image_guid node_type hca_type board_id; do "
    "v=; [ -e $P/$f ] && read -r v < $P/$f; printf '%s=%s\\n' $f \"$v\"; done; "
    "printf 'port_files='; for f in $P/ports/1/*; do printf '%s ' ${f##*/}; done; echo; "
    "printf 'hw_counters='; for f in $P/ports/1/hw_counters/*; do printf '%s ' ${f##*/}; "
    "done; echo; done; "
    "echo '=== rdma link'; rdma -j link show; echo; echo '=== rdma dev'; rdma -j dev show; "
    "echo; echo '=== ip'; ip -j addr show; echo; echo '=== netdev'; "
    "for n in eth0 eth1; do read -r speed < /sys/class/net/$n/speed; "
    "read -r mtu < /sys/class/net/$n/mtu; echo \"$n $speed $mtu\"; done; echo '=== end'")


def parse_device(devinfo, sysfs_text):
    """One device's section of `ibv_devinfo -v` and of the sysfs reading."""
    fields = {}
    for key, value in re.findall(r"^\s*(\w+):\s*(.*?)\s*$", devinfo, re.M):
        fields.setdefault(key, value)
    gids = [(int(index), address, kind) for index, address, kind in
            re.findall(r"GID\[\s*(\d+)\]:\s*([0-9a-fA-F:.]+),\s*(.+?)\s*$", devinfo, re.M)]
    sysfs = dict(line.split("=", 1) for line in sysfs_text.splitlines() if "=" in line)
    return {"ibv": fields, "gids": gids, "sysfs": sysfs}


def parse_guest_inventory(text):
    """GUEST_COMMAND's output: the devices, rdma link/dev, ip and the netdevs' speed and MTU."""
    sections = dict(re.findall(r"^=== ([^\n]+)\n(.*?)(?=^=== )", text, re.S | re.M))
    inventory = {"links": json.loads(sections["rdma link"]),
                 "devs": json.loads(sections["rdma dev"]), "ip": json.loads(sections["ip"]),
                 "netdevs": {}, "devices": {}}
    for line in sections["netdev"].splitlines():
        name, speed, mtu = line.split()
        inventory["netdevs"][name] = {"speed_mbps": int(speed), "mtu": int(mtu)}
    for device in DEVICE.values():
        inventory["devices"][device] = parse_device(sections["ibv_devinfo " + device],
                                                    sections["sysfs " + device])
    return inventory


def expected_gids(reading, netdev):
    """The GID table as ibv_devinfo lists it: (index, gid, type, netdev, IPv4 address)."""
    gids = set()
    for index, address, kind in reading["gids"]:
        ip = ipaddress.IPv6Address(address)
        ipv4 = str(ip.ipv4_mapped) if ip.ipv4_mapped else ""
        gid = ":".join(re.findall("....", ip.exploded.replace(":", "")))
        gids.add((str(index), gid, kind, netdev, ipv4))
    return gids


class InventoryTests:
    """Mixed into rdma_lab_test.RdmaLabTest (self.lab, self.scrape)."""

    def test_1_inventory_matches_the_guests_own_tools(self):
        for host in rdma_lab.HOSTS:
            with self.subTest(host=host):
                self.check_inventory(host)

    def test_1_an_address_added_to_a_rail_is_in_its_gid_table_without_waiting(self):
        """The agent follows its rails' netdevs over rtnetlink: an address added to rail1's
        netdev in host a, minutes before --collector.gid.refresh-interval (5m) re-reads the
        table, is published in rail_gid_info once the kernel's table has it (the guest's
        ibv_devinfo), and is gone once deleted."""
        rail = RAILS[-1]
        device, netdev = DEVICE[rail], NETDEV[rail]
        address = "10.77.0.%d" % rdma_lab.host_number("a")
        kernel = "ibv_devinfo -v -d %s | grep -c 'ffff:%s,' || true" % (device, address)

        def published():
            return address in {labels["ipv4"] for labels, _ in
                               series(self.scrape("a"), "rail_gid_info")
                               if labels["device"] == device}

        self.assertFalse(published())
        started = find(self.scrape("a"), "process_start_time_seconds")[0]
        self.lab.run("a", "ip addr add %s/32 dev %s" % (address, netdev))
        try:
            self.assertTrue(rdma_lab.wait_until(
                lambda: self.lab.run("a", kernel).stdout.strip() == "1", 30),
                "the kernel never listed %s in %s's GID table" % (address, device))
            self.assertTrue(rdma_lab.wait_until(published, 30),
                            "%s is in the kernel's table of %s, not in rail_gid_info" % (
                                address, device))
            agent_age = int(self.lab.run("a", "date +%s").stdout) - int(started)
            self.assertLess(agent_age, 280, "the 5m refresh could have read it: not a proof")
        finally:
            self.lab.run("a", "ip addr del %s/32 dev %s" % (address, netdev), check=False)
        self.assertTrue(rdma_lab.wait_until(lambda: not published(), 30),
                        "%s deleted, still in rail_gid_info" % address)
        print("host a: %s added to %s was in rail_gid_info without a refresh (agent %d s old), "
              "and left with its deletion" % (address, netdev, agent_age))

    def check_inventory(self, host):
        guest = parse_guest_inventory(self.lab.run(host, GUEST_COMMAND).stdout)
        samples = self.scrape(host)
        guest["links"] = {link["ifname"]: link for link in guest["links"]}
        guest["devs"] = {dev["ifname"]: dev for dev in guest["devs"]}
        self.assertEqual(find(samples, "rail_exporter_rdma_devices"),
                         [float(len(guest["devs"]))])
        for rail in RAILS:
            own = [s for s in samples if s[1].get("device") == DEVICE[rail]]
            self.check_device(guest, DEVICE[rail], own)
            self.check_port(guest, DEVICE[rail], own)
            self.check_gids(guest, DEVICE[rail], own)
            self.check_rail(guest, host, rail, samples)
            self.check_hw_counters(guest, DEVICE[rail], own)
        print("host %s: inventory of rxe0, rxe1 agrees with ibv_devinfo -v, rdma link/dev, ip "
              "and sysfs; port_files of rxe0: %s" % (
                  host, guest["devices"]["rxe0"]["sysfs"]["port_files"]))

    def check_device(self, guest, device, samples):
        ibv, sysfs = guest["devices"][device]["ibv"], guest["devices"][device]["sysfs"]
        info = series(samples, "rail_infiniband_device_info")
        self.assertEqual(len(info), 1, "%s: %s" % (device, info))
        labels = info[0][0]
        self.assertEqual(labels["node_guid"], ibv["node_guid"])
        self.assertEqual(labels["node_guid"], guest["devs"][device]["node_guid"])
        self.assertEqual(labels["sys_image_guid"], ibv["sys_image_guid"])
        for field in ("fw_ver", "hca_type", "board_id", "node_type"):
            self.assertEqual(labels[field], sysfs[field], field)
        self.assertEqual(guest["devs"][device]["node_type"], "ca")

    def check_port(self, guest, device, samples):
        """State, physical state, link layer, width and speed, rate, LIDs, byte source."""
        ibv = guest["devices"][device]["ibv"]
        port = {"device": device, "port": "1"}
        state = int(re.search(r"\((\d+)\)", ibv["state"]).group(1))
        physical = int(re.search(r"\((\d+)\)", ibv["phys_state"]).group(1))
        self.assertEqual(guest["links"][device]["state"], "ACTIVE")
        self.assertEqual(find(samples, "rail_port_state_id", **port), [float(state)])
        self.assertEqual(find(samples, "rail_port_physical_state_id", **port), [float(physical)])
        self.assertEqual(find(samples, "rail_port_active", **port),
                         [1.0 if (state, physical) == (4, 5) else 0.0])
        lanes = int(re.match(r"(\d+)X", ibv["active_width"]).group(1))
        speed = re.match(r"([\d.]+) Gbps \((\d+)\)", ibv["active_speed"])
        port_info = series(samples, "rail_port_info")
        self.assertEqual(len(port_info), 1, port_info)
        labels = port_info[0][0]
        self.assertEqual(labels["link_layer"], ibv["link_layer"])
        self.assertEqual(labels["width"], "%dX" % lanes)
        self.assertEqual(labels["speed"], SPEED_NAMES[int(speed.group(2))])
        self.assertEqual(labels["lid"], str(int(ibv["port_lid"], 0)))
        self.assertEqual(labels["sm_lid"], str(int(ibv["sm_lid"], 0)))
        self.assertEqual(find(samples, "rail_port_rate_bytes_per_second", **port),
                         [lanes * float(speed.group(1)) * 1e9 / 8])
        # No PMA on rxe: the port's bytes are its netdev's (ip -s link reads the same file).
        self.assertEqual(find(samples, "rail_port_bytes_source_info", source="netdev_statistics",
                              netdev=guest["links"][device]["netdev"], **port), [1.0])

    def check_gids(self, guest, device, samples):
        """Every entry ibv_devinfo lists is counted; the RoCE v2 ones with an IPv4 address are
        published (the default --collector.gid.entries), with their netdev."""
        gids = expected_gids(guest["devices"][device], guest["links"][device]["netdev"])
        agent_gids = {(labels["index"], labels["gid"], labels["type"], labels["netdev"],
                       labels["ipv4"]) for labels, _ in series(samples, "rail_gid_info")}
        self.assertTrue(agent_gids, "the rail's RoCE v2 IPv4 GID is published")
        self.assertEqual(agent_gids, {gid for gid in gids if gid[2] == "RoCE v2" and gid[4]})
        self.assertEqual(find(samples, "rail_gid_entries", device=device, port="1"),
                         [float(len(gids))])

    def check_rail(self, guest, host, rail, samples):
        """The rail's device, netdev (rdma link) and address (ip); the netdev's MTU and speed."""
        device, netdev = DEVICE[rail], NETDEV[rail]
        ibv = guest["devices"][device]["ibv"]
        rail_info = [labels for labels, _ in series(samples, "rail_info")
                     if labels["rail"] == rail]
        self.assertEqual(len(rail_info), 1, rail_info)
        labels = rail_info[0]
        self.assertEqual(labels["device"], device)
        self.assertEqual(labels["netdev"], guest["links"][device]["netdev"])
        self.assertEqual(labels["netdev"], netdev)
        addresses = {entry["ifname"]: [a["local"] for a in entry.get("addr_info", [])
                                       if a["family"] == "inet"] for entry in guest["ip"]}
        self.assertEqual([labels["ipv4"]], addresses[netdev])
        self.assertEqual(labels["ipv4"], rdma_lab.rail_address(host, rail))
        self.assertEqual(labels["link_layer"], ibv["link_layer"])
        self.assertEqual(labels["transport"], "rdma")
        self.assertEqual(find(samples, "rail_netdev_mtu_bytes", netdev=netdev),
                         [float(guest["netdevs"][netdev]["mtu"])])
        self.assertEqual(find(samples, "rail_netdev_speed_bytes_per_second", netdev=netdev),
                         [guest["netdevs"][netdev]["speed_mbps"] * 1e6 / 8])

    def check_hw_counters(self, guest, device, samples):
        """Every file of hw_counters/ is published as a counter, but lifespan: rxe's refresh
        interval of the others (ms), not a count of anything."""
        files = set(guest["devices"][device]["sysfs"]["hw_counters"].split())
        published = {labels["counter"] for labels, _ in
                     series(samples, "rail_port_hw_events_total")}
        self.assertIn("lifespan", files)
        self.assertEqual(published, files - {"lifespan"})
