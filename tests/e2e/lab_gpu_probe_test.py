#!/usr/bin/python3
"""VRAM probes in the network-namespace lab, on the fake CUDA driver (tests/fake_cuda).

Two agents, each naming the fake libcuda.so.1 with --cuda.library (passed to its probe worker,
which alone loads it) and with the fake's configuration (RAIL_FAKE_CUDA_CONFIG: one GPU) in
their environment, which their probe workers inherit. Host a
probes host b with ucx_throughput over both veth rails twice: memory: host and memory: cuda.
Debian's UCX 1.13 takes host memory only, so the cuda runs are staged through pinned host memory
on both sides.

What it shows (issue 12, item 3): both series are published per rail, the cuda one with
memory_path="staged"; rail_probe_memory_throughput_ratio is present and > 0; the rails' own
counters carry the cuda runs' bytes on the probed rail; and only probe workers called into the
driver (RAIL_FAKE_CUDA_LOG names the pid of every call): the agents never load it.

Needs root (network namespaces) and the fake driver (built where the CUDA headers are); skips
with a message otherwise.
"""

import json
import os
import sys
import unittest

import harness
import lab

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlgpu")
PEER_B = lab.peer_address("b")
GPU = "0000:17:00.0"
SCHEDULE_TIMEOUT = 60.0  # seconds for the four bulk jobs to have run once


def fake_cuda_library():
    """The fake libcuda.so.1: RAIL_FAKE_CUDA_LIBRARY (set by CMake), else beside the build's
    tests; None when it was not built."""
    path = os.environ.get("RAIL_FAKE_CUDA_LIBRARY") or os.path.join(
        os.path.dirname(os.path.dirname(harness.BINARY)), "tests", "fake_cuda", "libcuda.so.1")
    return path if os.path.exists(path) else None


def find(samples, name, **labels):
    """[(labels, value)] of the samples of name with these labels (lab.find keeps no labels)."""
    return [(sample_labels, value) for sample_name, sample_labels, value in samples
            if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items())]


class LabGpuProbeTest(lab.LabTestCase):
    LAB_PREFIX = PREFIX

    @classmethod
    def set_up_lab(cls):
        library = fake_cuda_library()
        if library is None:
            raise unittest.SkipTest("no fake CUDA driver: it needs the CUDA headers "
                                    "(/usr/local/cuda/include/cuda.h)")
        secret = cls.lab.secret("secret", "lab-gpu-secret\n")
        config = cls.lab.write("fake_cuda.json", json.dumps(
            {"devices": [{"pci_bus_id": GPU, "name": "Fake GPU", "integrated": False,
                          "gpu_direct_rdma": False, "dma_buf": False}]}))
        cls.cuda_log = cls.lab.write("fake_cuda.log", "")
        os.chmod(cls.cuda_log, 0o666)
        env = {"RAIL_FAKE_CUDA_CONFIG": config, "RAIL_FAKE_CUDA_LOG": cls.cuda_log}
        driver = "--cuda.library=" + library
        probes = (
            "  - {kind: ucx_throughput, memory: host, duration: 1s, timeout: 5s, interval: 60s}\n"
            "  - {kind: ucx_throughput, memory: cuda, duration: 1s, timeout: 5s, interval: 60s}\n")
        config_b = cls.lab.config("b.yaml", "b", secret=secret)
        config_a = cls.lab.config("a.yaml", "a", secret=secret, peers={"b": PEER_B},
                                  probes=probes)
        cls.agent_b = cls.lab.start_agent("b", ["--config.file=" + config_b, driver], env=env)
        cls.agent_a = cls.lab.start_agent("a", ["--config.file=" + config_a, driver], env=env)

    def test_host_and_cuda_series_staged_with_their_ratio(self):
        def throughput(samples, rail, memory):
            return find(samples, "rail_probe_throughput_bytes_per_second",
                        kind="ucx_throughput", rail=rail, memory=memory)

        def ready(samples):
            return all(throughput(samples, rail, memory)
                       for rail in lab.RAILS for memory in ("host", "cuda")) and find(
                samples, "rail_probe_memory_throughput_ratio")

        done, samples = self.agent_a.wait_for(ready, SCHEDULE_TIMEOUT)
        failures = [(labels, value) for name, labels, value in samples
                    if name in ("rail_probe_success", "rail_probe_errors_total")
                    and labels.get("memory") == "cuda"]
        self.assertTrue(done, "host and cuda series of both rails and their ratio, within %ds; "
                        "cuda series: %s" % (SCHEDULE_TIMEOUT, failures))
        for rail in lab.RAILS:
            cuda = throughput(samples, rail, "cuda")
            self.assertEqual([labels["memory_path"] for labels, _ in cuda], ["staged"], rail)
            self.assertGreater(cuda[0][1], 0, rail)
            host = throughput(samples, rail, "host")
            self.assertEqual([labels["memory_path"] for labels, _ in host], ["host"], rail)
            ratio = find(samples, "rail_probe_memory_throughput_ratio", kind="ucx_throughput",
                         rail=rail, memory="cuda")
            self.assertEqual(len(ratio), 1, "%s: %s" % (rail, ratio))
            self.assertEqual(ratio[0][0]["memory_path"], "staged")
            self.assertGreater(ratio[0][1], 0, rail)
            print("%s: host %.2f Gbit/s, cuda (staged) %.2f Gbit/s, ratio %.2f" % (
                rail, host[0][1] * 8e-9, cuda[0][1] * 8e-9, ratio[0][1]), file=sys.stderr)
            # The rail's own counters (the veth's tx_bytes) carried the GPU run's bytes.
            moved = find(samples, "rail_probe_bytes", kind="ucx_throughput", rail=rail,
                         memory="cuda")
            counted = find(samples, "rail_probe_rail_transmit_bytes", kind="ucx_throughput",
                           rail=rail, memory="cuda")
            self.assertEqual(len(moved), 1, rail)
            self.assertEqual(len(counted), 1, rail)
            self.assertGreaterEqual(counted[0][1], moved[0][1], rail)

    def test_only_probe_workers_call_the_driver(self):
        agents = {self.agent_a.proc.pid, self.agent_b.proc.pid}
        workers = set(lab.children(self.agent_a.proc.pid)) | set(lab.children(self.agent_b.proc.pid))
        with open(self.cuda_log) as log:
            callers = {int(line.split()[0]) for line in log if line.strip()}
        self.assertTrue(callers, "no process called the fake driver")
        self.assertFalse(callers & agents, "an agent called the CUDA driver")
        # The workers loaded it for their GPU-memory probes; each worker's capabilities query (a
        # short-lived copy of it) did too, and is gone.
        self.assertTrue(callers & workers, "callers %s, probe workers %s" % (callers, workers))
        for pid in callers - workers:
            self.assertFalse(os.path.exists("/proc/%d" % pid),
                             "pid %d called the driver and still runs" % pid)


if __name__ == "__main__":
    harness.main()
