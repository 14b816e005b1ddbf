#!/usr/bin/python3
"""Faults in the files the agent reads (issue 5), in a copy of the spark-dual-rail fixture tree:
an RDMA device directory vanishing between two scrapes and coming back, the same directory
flapping while scrapes run, and counters going backwards (a device reset), rewritten in place
and replaced by rename(). The agent keeps answering, reports what is there now, and counts
read errors only for what it failed to read. No root needed.
"""

import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

import harness


def find(samples, name, **labels):
    return [value for sample_name, sample_labels, value in samples
            if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items())]


DEVICE = "rocep1s0f1"
COUNTERS = "sys/class/infiniband/%s/ports/1/counters" % DEVICE
# The agent re-checks a directory's identity at most once a second (sysfs/filesystem.cc):
# after a rename or a re-created directory, a scrape that much later reads the new files.
SETTLE = 1.2


class FixtureFaultsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rail-faults-tree-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.pristine = os.path.join(harness.FIXTURES, "spark-dual-rail")
        self.tree = os.path.join(self.tmp, "tree")
        shutil.copytree(self.pristine, self.tree, symlinks=True)
        config = os.path.join(self.tmp, "rails.yaml")
        with open(config, "w") as handle:
            handle.write("rails:\n  - {name: rail0, device: rocep1s0f0}\n"
                         "  - {name: rail1, device: %s}\n" % DEVICE)
        self.agent = harness.RailExporter(harness.tree_flags(self.tree) +
                                          ["--config.file=" + config])
        self.addCleanup(self.agent.stop)

    def samples(self):
        return [(name, dict(labels), value)
                for name, series in harness.parse_samples(self.agent.scrape()).items()
                for labels, value in series.items()]

    def read_errors(self, samples):
        return {labels.get("reason", ""): value for name, labels, value in samples
                if name == "rail_exporter_read_errors_total"}

    def device_dir(self):
        return os.path.join(self.tree, "sys", "class", "infiniband", DEVICE)

    def restore_device(self):
        """The device's directory copied anew from the fixture: new inodes, as a re-probe."""
        shutil.copytree(os.path.join(self.pristine, "sys", "class", "infiniband", DEVICE),
                        self.device_dir(), symlinks=True)

    def test_rdma_device_directory_vanishes_between_scrapes(self):
        before = self.samples()
        transmit = find(before, "rail_port_transmit_bytes_total", device=DEVICE)
        self.assertEqual(len(transmit), 1)
        self.assertEqual(find(before, "rail_present", rail="rail1"), [1.0])
        self.assertEqual(find(before, "rail_exporter_rdma_devices"), [4.0])
        errors_before = self.read_errors(before)

        shutil.rmtree(self.device_dir())
        time.sleep(SETTLE)
        gone = self.samples()
        self.assertEqual(find(gone, "rail_present", rail="rail1"), [0.0])
        self.assertEqual(find(gone, "rail_active", rail="rail1"), [0.0])
        self.assertEqual(find(gone, "rail_info", rail="rail1", device=DEVICE), [1.0])
        self.assertEqual(find(gone, "rail_present", rail="rail0"), [1.0])
        self.assertEqual(find(gone, "rail_exporter_rdma_devices"), [3.0])
        self.assertEqual([name for name, labels, _ in gone if labels.get("device") == DEVICE
                          and name.startswith("rail_port_")], [],
                         "no port series of a device that is gone")
        self.assertEqual(find(gone, "rail_exporter_scrape_collector_success",
                              collector="infiniband"), [1.0])
        # Between two scrapes the device is simply not listed: nothing failed to read.
        self.assertEqual(self.read_errors(gone), errors_before)

        self.restore_device()
        time.sleep(SETTLE)
        back = self.samples()
        self.assertEqual(find(back, "rail_present", rail="rail1"), [1.0])
        self.assertEqual(find(back, "rail_port_transmit_bytes_total", device=DEVICE), transmit)
        self.assertEqual(find(back, "rail_exporter_rdma_devices"), [4.0])
        self.assertEqual(self.read_errors(back), errors_before)

    def test_rdma_device_directory_flapping_during_scrapes(self):
        """Removed and restored while scrapes run: a scrape may catch the device half gone
        (counted as read errors), but every scrape answers and the end state is right."""
        stop = threading.Event()

        def flap():
            while not stop.is_set():
                shutil.rmtree(self.device_dir())
                time.sleep(0.01)
                self.restore_device()
                time.sleep(0.01)
        flapper = threading.Thread(target=flap, daemon=True)
        flapper.start()
        statuses = []
        deadline = time.monotonic() + 3
        try:
            while time.monotonic() < deadline:
                statuses.append(self.agent.get()[0])
        finally:
            stop.set()
            flapper.join(timeout=10)
        self.assertTrue(os.path.isdir(self.device_dir()))
        self.assertEqual(set(statuses), {200}, statuses)
        self.assertTrue(self.agent.alive())
        time.sleep(SETTLE)
        after = self.samples()
        print("%d scrapes while the device flapped; read errors %s" % (
            len(statuses), self.read_errors(after)))
        self.assertEqual(find(after, "rail_present", rail="rail1"), [1.0])
        self.assertEqual(find(after, "rail_exporter_rdma_devices"), [4.0])

    def rewrite(self, relative, value, replace=False):
        """Writes value to a fixture file: in place (same inode), or by rename() (new inode,
        as a re-created device directory has)."""
        path = os.path.join(self.tree, relative)
        if replace:
            with open(path + ".new", "w") as handle:
                handle.write("%d\n" % value)
            os.rename(path + ".new", path)
        else:
            with open(path, "w") as handle:
                handle.write("%d\n" % value)

    def test_counters_going_backwards(self):
        before = self.samples()
        transmit = find(before, "rail_port_transmit_bytes_total", device=DEVICE)[0]
        cnp = find(before, "rail_port_hw_events_total", device=DEVICE, counter="np_cnp_sent")
        netdev_tx = find(before, "rail_netdev_transmit_bytes_total", netdev="enp1s0f1np1")[0]
        self.assertEqual(len(cnp), 1)
        self.assertGreater(transmit, 4000)
        self.assertGreater(netdev_tx, 5)
        hw = "sys/class/infiniband/%s/ports/1/hw_counters/np_cnp_sent" % DEVICE
        tx = "sys/class/net/enp1s0f1np1/statistics/tx_bytes"

        # A reset: every counter starts again from a small value, rewritten in place.
        self.rewrite(COUNTERS + "/port_xmit_data", 1000)
        self.rewrite(hw, 1)
        self.rewrite(tx, 5)
        reset = self.samples()
        self.assertEqual(find(reset, "rail_port_transmit_bytes_total", device=DEVICE), [4000.0])
        self.assertEqual(find(reset, "rail_port_hw_events_total", device=DEVICE,
                              counter="np_cnp_sent"), [1.0])
        self.assertEqual(find(reset, "rail_netdev_transmit_bytes_total", netdev="enp1s0f1np1"),
                         [5.0])

        # Counting again after the reset, the files replaced (new inodes) rather than rewritten.
        self.rewrite(COUNTERS + "/port_xmit_data", 2000, replace=True)
        self.rewrite(hw, 3, replace=True)
        time.sleep(SETTLE)
        again = self.samples()
        self.assertEqual(find(again, "rail_port_transmit_bytes_total", device=DEVICE), [8000.0])
        self.assertEqual(find(again, "rail_port_hw_events_total", device=DEVICE,
                              counter="np_cnp_sent"), [3.0])
        self.assertEqual(self.read_errors(again), self.read_errors(before))
        self.assertTrue(self.agent.alive())
        # The exposition stays valid for Prometheus, which sees a counter reset.
        check = subprocess.run([harness.PROMTOOL, "check", "metrics"], input=self.agent.scrape(),
                               capture_output=True, text=True, timeout=30)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)


if __name__ == "__main__":
    harness.main()
