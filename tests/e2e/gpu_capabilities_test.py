#!/usr/bin/env python3
"""The agent and the CUDA driver: only the probe worker ever loads it (cuInit opens /dev/nvidia*
and holds it; a long-lived agent holding it would block GPU resets and driver upgrades).

The agent runs a responder (so that its probe worker starts) with --cuda.library naming the fake
libcuda.so.1 the tests build (tests/fake_cuda), which logs "<pid> cuInit" to RAIL_FAKE_CUDA_LOG.
Skips when the fake was not built (no CUDA headers at /usr/local/cuda).
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import harness

SPARK = "spark-dual-rail"


def parent_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        # The command may hold spaces and parentheses: the fields after its last ')' count.
        return int(f.read().rsplit(")", 1)[1].split()[1])


class GpuCapabilitiesTest(unittest.TestCase):
    def setUp(self):
        self.fake = harness.OPTIONS.get("fake-cuda")
        if not self.fake or not os.path.exists(self.fake):
            self.skipTest("the fake CUDA driver was not built (no CUDA headers at "
                          "/usr/local/cuda/include/cuda.h)")
        harness.require_executable(self, harness.BINARY)
        self.tmp = tempfile.mkdtemp(prefix="rail-gpu-e2e-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.log = os.path.join(self.tmp, "calls.log")
        config = os.path.join(self.tmp, "fake.json")
        with open(config, "w") as f:
            json.dump({"driver_version": 12080, "devices": [
                {"pci_bus_id": "0000:17:00.0", "name": "Fake H100", "gpu_direct_rdma": True,
                 "dma_buf": True}]}, f)
        for name, value in (("RAIL_FAKE_CUDA_LOG", self.log), ("RAIL_FAKE_CUDA_CONFIG", config)):
            self.addCleanup(os.environ.pop, name, None)
            os.environ[name] = value

    def start_agent(self):
        port = harness.free_port()
        config = os.path.join(self.tmp, "config.yml")
        with open(config, "w") as f:
            f.write("responder:\n  listen_address: '127.0.0.1:%d'\n" % port)
        agent = harness.RailExporter(harness.tree_flags(os.path.join(harness.FIXTURES, SPARK)) +
                                     ["--config.file=" + config, "--peer.insecure",
                                      "--cuda.library=" + self.fake])
        self.addCleanup(agent.stop)
        agent.wait_for_line(r"responder listening on port %d" % port)
        return agent

    def cuinit_callers(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [int(line.split()[0]) for line in f if line.split()[1:] == ["cuInit"]]

    def test_only_the_worker_initialises_cuda(self):
        agent = self.start_agent()
        deadline = time.monotonic() + harness.STARTUP_TIMEOUT
        while not self.cuinit_callers() and time.monotonic() < deadline:
            time.sleep(0.05)
        callers = self.cuinit_callers()
        self.assertEqual(len(callers), 1, callers)
        worker = callers[0]
        self.assertNotEqual(worker, agent.proc.pid)
        self.assertEqual(parent_of(worker), agent.proc.pid, "cuInit came from no child of ours")
        with open("/proc/%d/cmdline" % worker, "rb") as f:
            self.assertIn(b"rail_exporter_probe_worker", f.read())
        with open("/proc/%d/maps" % agent.proc.pid) as f:
            self.assertNotIn(self.fake, f.read(), "the agent mapped the CUDA driver")

    def test_metrics_carry_the_workers_capabilities(self):
        agent = self.start_agent()
        samples = harness.parse_samples(agent.scrape())
        self.assertEqual(set(samples["rail_gpu_cuda_driver_info"]),
                         {frozenset({("loaded", "true"), ("version", "12.8")})})
        supported = samples["rail_gpu_direct_rdma_supported"]
        for mechanism in ("peer_memory", "dma_buf"):
            self.assertIn(frozenset({("mechanism", mechanism), ("pci_bus_id", "0000:17:00.0")}),
                          supported)
        self.assertEqual(samples["rail_ucx_memory_type_supported"][frozenset({("memory", "host")})],
                         1)

    def test_worker_prints_its_capabilities(self):
        worker = os.path.join(os.path.dirname(harness.BINARY), "rail_exporter_probe_worker")
        out = subprocess.run([worker, "--capabilities", "--cuda.library=" + self.fake],
                             capture_output=True, text=True, timeout=harness.RUN_TIMEOUT, check=True)
        capabilities = json.loads(out.stdout)
        self.assertTrue(capabilities["cuda"]["loaded"], capabilities)
        self.assertEqual(capabilities["cuda"]["driver_version"], 12080)
        self.assertEqual([d["name"] for d in capabilities["cuda"]["devices"]], ["Fake H100"])

    def test_no_executable_links_libcuda(self):
        worker = os.path.join(os.path.dirname(harness.BINARY), "rail_exporter_probe_worker")
        for path in (harness.BINARY, worker):
            dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                                     check=True).stdout
            self.assertIn("NEEDED", dynamic)
            self.assertIsNone(re.search(r"libcuda", dynamic), path)


if __name__ == "__main__":
    harness.main(path_options=["--fake-cuda"])
