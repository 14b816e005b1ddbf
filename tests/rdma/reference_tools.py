"""Test 6 of the RDMA lab: ib_write_bw, ucx_perftest ucp_put_bw and our ucx_throughput (put) on
rail0 of the guests, alternating, the medians and their ratios printed. Never asserted: the
guests are emulated (TCG) and share the machine's CPUs.
"""

import re
import statistics

import rdma_lab
from rdma_lab import DEVICE

# The UCX setting rxe needs with UCX 1.13 (rdma_lab_test.py's docstring): what a UCX application
# of our own (ucx_perftest) gets. The agents never do: their own workaround has to do it.
UCX_APPLICATION_ENV = {"UCX_UD_VERBS_ETH_DGID_CHECK": "n"}
ROUNDS = 3  # alternating rounds of the reference tools and our probe
ITERATIONS = 150  # messages of each reference tool's run (~10 MB: seconds at rxe's emulated rate)
CLIENT_TIMEOUT = 120  # seconds for a reference client in host a, its retries included


def _perftest_bandwidth(output, unit):
    """ib_write_bw's BW average (MB/sec, MB = 2^20 bytes) in bytes per second."""
    match = re.search(r"^\s*\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s*$", output, re.M)
    return float(match.group(1)) * unit if match and float(match.group(1)) > 0 else None


def _ucx_perftest_bandwidth(output, unit):
    """ucx_perftest's overall bandwidth of its Final line (MB/s, MB = 2^20 bytes)."""
    match = re.search(r"^Final:\s+(\S+\s+){5}([\d.]+)", output, re.M)
    return float(match.group(2)) * unit if match and float(match.group(2)) > 0 else None


class ReferenceToolTests:
    """Mixed into rdma_lab_test.RdmaLabTest (self.lab, self.scrape, self.probe, message_size)."""

    def reference_run(self, server, client, parse, attempts=3):
        """Starts server in host b, runs client in host a (retrying until the server listens):
        the figure parse() finds in the client's output, bytes per second, or None when
        `attempts` runs gave none (perftest's clock calibration fails now and then under TCG,
        "Correlation coefficient r^2 < 0.9", and it then reports 0 MB/s)."""
        for _ in range(attempts):
            self.lab.start("b", "reference-server", ["timeout", "90"] + server)
            output = self.lab.run(
                "a", "for i in $(seq 1 20); do out=$(timeout 60 %s 2>&1) && break; sleep 1; "
                "done; echo \"$out\"" % " ".join(client), timeout=CLIENT_TIMEOUT).stdout
            server_pid = self.lab.pid("reference-server")
            self.lab.run("b", "for i in $(seq 1 20); do kill -0 %d 2>/dev/null || exit 0; "
                         "sleep 1; done; kill %d" % (server_pid, server_pid), check=False)
            figure = parse(output)
            if figure:
                return figure
            print("no figure from `%s`:\n%s" % (" ".join(client), output[-600:]))
        return None

    def test_6_ratios_to_reference_tools(self):
        # Host a's agent stops, so that no scheduled probe runs beside the reference tools.
        self.scrape("a")
        self.lab.run("a", "kill %d" % self.lab.pid("agent-a"))
        device = DEVICE["rail0"]
        address = rdma_lab.rail_address("b", "rail0")
        gid = "1"  # rxe's RoCE v2 GID of the IPv4 address (checked by roce_gid and test 1)
        perftest = ["ib_write_bw", "-F", "-d", device, "-x", gid, "-s", str(self.message_size),
                    "-n", str(ITERATIONS)]
        ucx = ["env", "UCX_NET_DEVICES=%s:1" % device] + [
            "%s=%s" % item for item in UCX_APPLICATION_ENV.items()] + ["ucx_perftest"]
        mib = 1024 * 1024
        figures = {"ib_write_bw": [], "ucx_perftest": [], "rail_exporter": []}
        for _ in range(ROUNDS):
            figures["ib_write_bw"].append(self.reference_run(
                perftest, perftest + [address], lambda out: _perftest_bandwidth(out, mib)))
            figures["ucx_perftest"].append(self.reference_run(
                ucx, ucx + [address, "-t", "ucp_put_bw", "-s", str(self.message_size), "-n",
                            str(ITERATIONS)], lambda out: _ucx_perftest_bandwidth(out, mib)))
            runs = self.probe("ucx_throughput", "rail0")
            self.assertTrue(runs and runs[0]["success"], runs)
            figures["rail_exporter"].append(runs[0]["throughput_bytes_per_second"])
        medians = {tool: statistics.median([v for v in values if v]) if any(values) else None
                   for tool, values in figures.items()}
        print("rail0, %d B messages, %d alternating rounds (bytes/s; None: the tool gave no "
              "figure): %s" % (self.message_size, ROUNDS, {
                  tool: [round(v) if v else None for v in values]
                  for tool, values in figures.items()}))
        for tool in ("ib_write_bw", "ucx_perftest"):
            if medians[tool]:
                print("ratio of our ucx_throughput put to %s: %.2f (medians; reported, not "
                      "asserted)" % (tool, medians["rail_exporter"] / medians[tool]))
            else:
                print("no ratio to %s: it gave no figure in %d rounds" % (tool, ROUNDS))
        self.scrape("b")
