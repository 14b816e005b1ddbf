#!/usr/bin/python3
"""`rail_exporter doctor` on fixture trees: a healthy DGX Spark (two rails, the integrated GB10) and
a broken HGX (mlx5_5 trained at x8), in text and JSON against golden files; exit codes 0, 1 and 2.

The probe worker answers --capabilities with the fake CUDA driver (tests/fake_cuda, given as
--fake-cuda) configured like each host's GPUs; without the fake (no CUDA headers at build time)
the golden comparisons skip and only what does not depend on the driver is checked. The UCX
memory types are this host's UCX's: the golden files hold a UCX without CUDA support (Debian's);
with a CUDA-enabled UCX the comparison skips.

RAIL_UPDATE_GOLDEN=1 rewrites tests/e2e/golden/doctor-*.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")

SPARK_CONFIG = """rails:
  - {name: rail0, device: rocep1s0f0}
  - {name: rail1, device: rocep1s0f1}
discover_rails: false
"""
SPARK_CUDA = {"driver_version": 13000, "devices": [
    {"pci_bus_id": "000f:01:00.0", "name": "NVIDIA GB10", "integrated": True,
     "gpu_direct_rdma": False, "dma_buf": True}]}
HGX_GPUS = ["0000:03:00.0", "0000:04:00.0", "0000:12:00.0", "0000:13:00.0", "0000:83:00.0",
            "0000:84:00.0", "0000:c3:00.0", "0000:c4:00.0"]
HGX_CUDA = {"driver_version": 12040, "devices": [
    {"pci_bus_id": bdf, "name": "NVIDIA H100 80GB HBM3", "integrated": False,
     "gpu_direct_rdma": True, "dma_buf": False} for bdf in HGX_GPUS]}


class DoctorTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        self.tmp = tempfile.mkdtemp(prefix="rail-doctor-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.fake_cuda = harness.OPTIONS.get("fake-cuda")
        if self.fake_cuda and not os.path.exists(self.fake_cuda):
            self.fake_cuda = None

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def doctor(self, tree, cuda, *extra):
        env = dict(os.environ)
        tree_path = os.path.join(harness.FIXTURES, tree) if tree else None
        args = ["doctor"] + (harness.agent_tree_flags(tree_path) if tree else [])
        if self.fake_cuda:
            env["RAIL_FAKE_CUDA_CONFIG"] = self.write("cuda.json", json.dumps(cuda))
            args.append("--cuda.library=" + self.fake_cuda)
        return harness.run_to_exit(args + list(extra), timeout=60, env=env)

    def compare_golden(self, name, text):
        path = os.path.join(GOLDEN, name)
        if os.environ.get("RAIL_UPDATE_GOLDEN") == "1":
            with open(path, "w") as f:
                f.write(text)
        with open(path) as f:
            self.assertEqual(text, f.read(), "doctor output differs from %s" % path)

    def golden_applies(self, findings):
        if not self.fake_cuda:
            self.skipTest("golden comparison: the fake CUDA driver was not built (no CUDA headers)")
        capabilities = [f for f in findings if f["check"] == "capabilities"]
        if capabilities and "UCX memory types:" in capabilities[0]["summary"] and \
                "cuda" in capabilities[0]["summary"].split("UCX memory types:")[1]:
            self.skipTest("golden comparison: this host's UCX supports CUDA memory; the golden "
                          "files hold one without")

    def run_both(self, tree, cuda, *extra):
        text = self.doctor(tree, cuda, *extra)
        as_json = self.doctor(tree, cuda, "--output=json", *extra)
        self.assertEqual(text.returncode, as_json.returncode, as_json.stderr)
        return text, as_json, json.loads(as_json.stdout)

    def test_healthy_spark_passes(self):
        config = self.write("spark.yml", SPARK_CONFIG)
        text, as_json, findings = self.run_both("spark-dual-rail", SPARK_CUDA,
                                                "--config.file=" + config)
        self.assertEqual(text.returncode, 0, text.stdout + text.stderr)
        self.assertFalse([f for f in findings if f["status"] == "FAIL"])
        checks = {f["check"] for f in findings if f["status"] == "PASS"}
        self.assertIn("pcie_link", checks)
        gid_indexes = [f for f in findings if f["check"] == "roce_gid_index"]
        self.assertEqual([f["rail"] for f in gid_indexes], ["rail0", "rail1"])
        self.assertIn("UCX_IB_GID_INDEX=", gid_indexes[0]["summary"])
        self.assertIn("every check passed", text.stdout)
        self.golden_applies(findings)
        gpu = [f for f in findings if f["check"] == "gpu"]
        self.assertIn("integrated", gpu[0]["summary"])
        self.assertEqual([f["status"] for f in findings if f["check"] == "gpu_direct"], ["PASS"])
        self.compare_golden("doctor-spark-dual-rail.txt", text.stdout)
        self.compare_golden("doctor-spark-dual-rail.json", as_json.stdout)

    def test_hgx_with_an_x8_nic_fails_pcie_link(self):
        text, as_json, findings = self.run_both("hgx-8gpu", HGX_CUDA)
        self.assertEqual(text.returncode, 1, text.stdout + text.stderr)
        pcie = [f for f in findings if f["check"] == "pcie_link" and f["status"] == "FAIL"]
        self.assertEqual([f["rail"] for f in pcie], ["mlx5_5:1"])
        self.assertIn("at 32 GT/s x8, can train at 32 GT/s x16", pcie[0]["summary"])
        self.assertIn("bus/pci/devices/0000:86:00.0", pcie[0]["evidence"])
        self.assertIn("lspci", pcie[0]["fix"])
        self.assertIn("FAIL pcie_link rail=mlx5_5:1: mlx5_5 (0000:86:00.0) at 32 GT/s x8",
                      text.stdout)
        self.assertFalse([f for f in findings
                          if f["check"] == "gpu_nic_affinity" and f["status"] == "FAIL"])
        self.golden_applies(findings)
        # nv_mem in the tree and the driver's GPUDirect attribute: the mechanism works; only
        # UCX's missing CUDA support may fail gpu_direct.
        for finding in findings:
            if finding["check"] == "gpu_direct" and finding["status"] == "FAIL":
                self.assertNotIn("mechanism", finding["summary"])
        self.compare_golden("doctor-hgx-8gpu.txt", text.stdout)
        self.compare_golden("doctor-hgx-8gpu.json", as_json.stdout)

    def test_peer_hello_reports_versions_and_mtus(self):
        """--peer: the peer's agent answers the hello; peer_version and peer_mtu judge it (same
        binary, same fixture: both pass). A peer that does not answer is a FAIL."""
        secret = self.write("secret", "doctor-e2e-secret-0123456789abcdef\n")
        os.chmod(secret, 0o600)
        port = harness.free_port()
        config = self.write("responder.yml", SPARK_CONFIG + (
            "responder:\n  listen_address: '127.0.0.1:%d'\n  secret_file: %s\n" % (port, secret)))
        agent = harness.RailExporter(
            harness.tree_flags(os.path.join(harness.FIXTURES, "spark-dual-rail")) +
            ["--config.file=" + config])
        self.addCleanup(agent.stop)
        agent.wait_for_line(r"responder listening on port %d" % port)
        result = self.doctor("spark-dual-rail", SPARK_CUDA, "--config.file=" + config,
                             "--peer=127.0.0.1:%d" % port, "--output=json")
        findings = json.loads(result.stdout)
        peer = {(f["check"], f["rail"]): f["status"] for f in findings if f["peer"]}
        self.assertEqual(peer.get(("peer_hello", "")), "PASS", result.stdout)
        self.assertEqual(peer.get(("peer_version", "")), "PASS", result.stdout)
        self.assertEqual(peer.get(("peer_mtu", "rail0")), "PASS", result.stdout)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

        agent.stop()
        result = self.doctor("spark-dual-rail", SPARK_CUDA, "--config.file=" + config,
                             "--peer=127.0.0.1:%d" % port)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("FAIL peer_hello peer=127.0.0.1:%d: no hello from" % port, result.stdout)

    def test_fleet_self_not_among_the_targets_fails(self):
        """A fleet.self that discovery does not list is a configuration error: doctor runs the
        discovery once and fails fleet_self, naming it; each source gets a finding of its own."""
        fleet = ("fleet:\n  self: '10.9.9.9:9841'\n  discovery:\n"
                 "    static: ['10.0.0.1:9841', '10.0.0.2:9841']\n")
        config = self.write("fleet.yml", SPARK_CONFIG + fleet)
        result = self.doctor("spark-dual-rail", SPARK_CUDA, "--config.file=" + config,
                             "--output=json")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        findings = {f["check"]: f for f in json.loads(result.stdout)
                    if f["check"].startswith("fleet_")}
        self.assertEqual(findings["fleet_discovery"]["status"], "PASS", result.stdout)
        self.assertEqual(findings["fleet_discovery"]["summary"], "static: 2 targets")
        self.assertEqual(findings["fleet_self"]["status"], "FAIL", result.stdout)
        self.assertIn("not among the 2 discovered targets: fleet.self 10.9.9.9:9841 is not one "
                      "of them", findings["fleet_self"]["summary"])

        config = self.write("fleet.yml", SPARK_CONFIG + fleet.replace("10.9.9.9", "10.0.0.2"))
        result = self.doctor("spark-dual-rail", SPARK_CUDA, "--config.file=" + config,
                             "--output=json")
        statuses = {f["check"]: f["status"] for f in json.loads(result.stdout)}
        self.assertEqual(statuses.get("fleet_self"), "PASS", result.stdout)

    def test_cannot_run_exits_2(self):
        for tree, args in (("spark-dual-rail", ["--output=yaml"]),
                           (None, ["--path.sysfs=" + os.path.join(self.tmp, "nowhere")]),
                           ("spark-dual-rail",
                            ["--config.file=" + os.path.join(self.tmp, "missing.yml")])):
            with self.subTest(args=args):
                result = self.doctor(tree, SPARK_CUDA, *args)
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                lines = harness.non_log_lines(result.stderr)
                self.assertEqual(len(lines), 1, result.stderr)
                self.assertIn("rail_exporter doctor:", lines[0])
                self.assertEqual(result.stdout, "")


if __name__ == "__main__":
    harness.main(path_options=["--fake-cuda"])
