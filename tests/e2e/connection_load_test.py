#!/usr/bin/python3
"""Scrapes while the port is held by 500 idle TCP connections and 20 slowloris clients (one
header byte per second, never finishing), against rail_exporter (plain HTTP, then TLS + basic
auth) and, in the same run, Debian's node_exporter with the same two web configs.

Connections the server closes are opened again, as an attacker would; how many it closed is
reported. Every scrape of rail_exporter must answer 200 with the full exposition within 1 s (a
stall behind held connections is 10-20 s; a scrape here takes milliseconds), and the agent may
run no more than 32 threads while it holds them: connections must not cost a thread each (the
endpoint serves them on one event loop and two handler threads; civetweb needed 1,000). The
figures (median and max scrape seconds, scrapes answered, RSS and threads while the connections
are held) are printed as a table.

RAIL_LOAD_SCRAPES (default 30) sets the scrapes per pass and RAIL_LOAD_AGENT_FLAGS adds agent
flags (--web.max-connections=100 shows what happens beyond the ceiling); --binary may name any
build, such as one from before the ceiling, to measure it. Its assertions then fail after the
table."""

import base64
import os
import resource
import shutil
import ssl
import statistics
import sys
import tempfile
import time
import unittest
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import proc_status  # noqa: E402
from held_connections import SLOW_BYTE, IdleConnections, Slowloris  # noqa: E402
from node_exporter_compare_test import NODE_FLAGS  # noqa: E402
from web_config_test import Pki, bcrypt  # noqa: E402

SPARK = "spark-dual-rail"
IDLE = 500
SLOW = 20
SCRAPES = int(os.environ.get("RAIL_LOAD_SCRAPES", "30"))
AGENT_FLAGS = os.environ.get("RAIL_LOAD_AGENT_FLAGS", "").split()
SCRAPE_PAUSE = 0.5  # seconds between scrapes: the passes span several header timeouts
SCRAPE_TIMEOUT = 20.0  # per scrape; a stall behind held connections is 10-20 s
STALL = 1.0  # a scrape slower than this waited behind the held connections
THREAD_CEILING = 32  # the agent's threads while it holds the connections
SETTLE_TIMEOUT = 20.0  # for the idle connections to be established
# Held connections must not cost more: a TLS engine made at accept for each idle connection (two
# 17 KiB record buffers and OpenSSL's state) took it from 19 to 80 MiB.
RSS_BOUND_MIB = 48
PASSWORD = "s3cret"


def raise_open_files():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * (IDLE + SLOW) + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))


def rss_and_threads(pid):
    """(VmRSS in MiB, thread count) of a running process."""
    values = proc_status.status(pid, ("VmRSS", "Threads"))
    return values["VmRSS"] / 1024.0, values["Threads"]


class ConnectionLoadTest(unittest.TestCase):
    rows = []

    @classmethod
    def setUpClass(cls):
        raise_open_files()
        cls.tmp = tempfile.mkdtemp(prefix="rail-connload-")
        cls.pki = Pki(cls.tmp)
        cls.secure_config = os.path.join(cls.tmp, "web.yml")
        with open(cls.secure_config, "w") as f:
            f.write("tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                    "basic_auth_users:\n  prometheus: '%s'\n" %
                    (cls.pki.server_crt, cls.pki.server_key, bcrypt(PASSWORD)))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if cls.rows:
            print("\n| server | web | idle held | closed by server (idle / slowloris) | "
                  "scrapes answered | median s | max s | RSS MiB before → held | threads held |")
            print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
            for row in cls.rows:
                print("| %s | %s | %d | %d / %d | %d/%d | %.4f | %.4f | %.1f → %.1f | %d |" % row)

    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        self.flags = harness.tree_flags(os.path.join(harness.FIXTURES, SPARK))

    def client_context(self):
        return ssl.create_default_context(cafile=self.pki.ca_crt)

    def scrape_once(self, url, context):
        request = urllib.request.Request(url)
        if context:
            request.add_header("Authorization", "Basic " + base64.b64encode(
                ("prometheus:" + PASSWORD).encode()).decode())
        start = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=SCRAPE_TIMEOUT, context=context) as r:
                return r.status, r.read().decode("utf-8", "replace"), time.monotonic() - start
        except Exception as error:  # a refused, reset or timed-out scrape is a failed one
            return repr(error), "", time.monotonic() - start

    def run_load(self, name, web, process, port, scheme, context, families):
        """Holds the connections, scrapes SCRAPES times; records and returns the figures."""
        url = "%s://127.0.0.1:%d/metrics" % (scheme, port)
        rss_before, _ = rss_and_threads(process.proc.pid)
        idle = IdleConnections(port, IDLE)
        slow = Slowloris(port, SLOW, context)
        idle.start()
        slow.start()
        try:
            deadline = time.monotonic() + SETTLE_TIMEOUT
            while idle.held() < IDLE and time.monotonic() < deadline:
                time.sleep(0.1)
            held = idle.held()
            time.sleep(2 * SLOW_BYTE)  # the slowloris clients are mid-header now
            results = []
            for _ in range(SCRAPES):
                results.append(self.scrape_once(url, context))
                time.sleep(SCRAPE_PAUSE)
            rss_held, threads_held = rss_and_threads(process.proc.pid)
        finally:
            idle.stop()
            slow.stop()
        answered = [r for r in results if r[0] == 200 and families(r[1])]
        seconds = [r[2] for r in results]
        self.rows.append((name, web, held, idle.closed_by_server, slow.closed(), len(answered),
                          len(results), statistics.median(seconds), max(seconds), rss_before,
                          rss_held, threads_held))
        print("%s %s: %d idle held, %d/%d answered, median %.4f s, max %.4f s, RSS %.1f MiB "
              "held (%d threads); closed by the server: %d idle, %d slowloris" % (
                  name, web, held, len(answered), len(results), statistics.median(seconds),
                  max(seconds), rss_held, threads_held, idle.closed_by_server, slow.closed()))
        return held, results, answered, rss_held, threads_held

    def assert_served(self, figures):
        held, results, answered, rss_held, threads_held = figures
        self.assertGreaterEqual(held, IDLE, "the idle connections were not all accepted")
        failed = [r[0] for r in results if r[0] != 200]
        self.assertEqual(failed, [], "scrapes that did not answer 200")
        self.assertEqual(len(answered), len(results), "scrapes without the full exposition")
        stalled = [round(r[2], 2) for r in results if r[2] >= STALL]
        self.assertEqual(stalled, [], "scrapes that waited behind the held connections")
        self.assertLess(rss_held, RSS_BOUND_MIB)
        self.assertLessEqual(threads_held, THREAD_CEILING,
                             "the agent ran a thread per held connection")

    def agent_pass(self, web, extra, scheme, context):
        with harness.RailExporter(self.flags + AGENT_FLAGS + extra) as agent:
            expected = set(f.name for f in text_string_to_metric_families(
                self.scrape_once("%s://127.0.0.1:%d/metrics" % (scheme, agent.port),
                                 context)[1]))
            self.assertIn("rail_exporter_build_info", expected)

            def full(body):
                return set(f.name for f in text_string_to_metric_families(body)) == expected

            figures = self.run_load("rail_exporter", web, agent, agent.port, scheme, context, full)
            self.assertTrue(agent.alive())
        self.assert_served(figures)

    def node_pass(self, web, extra, scheme, context):
        if not os.access(harness.NODE_EXPORTER, os.X_OK):
            self.skipTest("%s is not installed (scripts/install-deps installs it)" %
                          harness.NODE_EXPORTER)
        tree = os.path.join(harness.FIXTURES, SPARK)
        node = harness.NodeExporter(harness.tree_flags(tree) + NODE_FLAGS + extra,
                                    tls_context=context, ready_status=401 if context else 200)
        self.addCleanup(node.stop)
        self.run_load("node_exporter", web, node, node.port, scheme, context,
                      lambda body: "node_exporter_build_info" in body)

    def test_1_agent_plain(self):
        self.agent_pass("HTTP", [], "http", None)

    def test_2_agent_tls_and_basic_auth(self):
        self.agent_pass("TLS + auth", ["--web.config.file=" + self.secure_config], "https",
                        self.client_context())

    def test_3_node_exporter_plain(self):
        self.node_pass("HTTP", [], "http", None)

    def test_4_node_exporter_tls_and_basic_auth(self):
        self.node_pass("TLS + auth", ["--web.config.file=" + self.secure_config], "https",
                       self.client_context())


if __name__ == "__main__":
    harness.main()
