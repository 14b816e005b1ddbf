#!/usr/bin/python3
"""--web.config.file against the real binary with a real client (curl): TLS, client certificates
(mTLS), the minimum TLS version, basic auth (200/401 and the failure counter), plain HTTP to a
TLS port, repeated --web.listen-address, and bad web configs refused at start with one line.

Certificates are made at test time with the openssl CLI; bcrypt hashes with Python's crypt
module (libxcrypt), or htpasswd when that module is gone."""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPARK = "spark-dual-rail"
CURL = "/usr/bin/curl"
OPENSSL = "/usr/bin/openssl"
EXIT_TIMEOUT = 8.0
CURL_TIMEOUT = 10


def bcrypt(password):
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt
        if crypt.METHOD_BLOWFISH in crypt.methods:
            return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 6))
    except ImportError:
        pass
    htpasswd = shutil.which("htpasswd")
    if not htpasswd:
        raise unittest.SkipTest("neither Python's crypt module nor htpasswd can make bcrypt")
    out = subprocess.run([htpasswd, "-nbBC", "6", "u", password], capture_output=True, text=True,
                         check=True).stdout
    return out.strip().split(":", 1)[1]


class Pki:
    """A CA, a server certificate for 127.0.0.1/localhost, a client certificate from the CA and
    one from an unrelated CA."""

    def __init__(self, directory):
        self.dir = directory
        self.ca_crt, self.ca_key = self._self_signed("ca", "rail test CA")
        self.rogue_ca_crt, self.rogue_ca_key = self._self_signed("rogue-ca", "rogue CA")
        self.server_crt, self.server_key = self._signed(
            "server", "localhost", self.ca_crt, self.ca_key,
            "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost")
        self.client_crt, self.client_key = self._signed("client", "prometheus", self.ca_crt,
                                                        self.ca_key, "extendedKeyUsage=clientAuth")
        self.rogue_crt, self.rogue_key = self._signed("rogue", "intruder", self.rogue_ca_crt,
                                                      self.rogue_ca_key,
                                                      "extendedKeyUsage=clientAuth")

    def _path(self, name):
        return os.path.join(self.dir, name)

    def _run(self, *args):
        subprocess.run([OPENSSL] + list(args), check=True, capture_output=True,
                       timeout=CURL_TIMEOUT)

    def _self_signed(self, name, cn):
        crt, key = self._path(name + ".crt"), self._path(name + ".key")
        self._run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                  "-nodes", "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=" + cn,
                  "-addext", "basicConstraints=critical,CA:TRUE",
                  "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        return crt, key

    def _signed(self, name, cn, ca_crt, ca_key, extension):
        crt, key, csr = (self._path(name + ".crt"), self._path(name + ".key"),
                         self._path(name + ".csr"))
        ext = self._path(name + ".ext")
        with open(ext, "w") as f:
            f.write(extension + "\n")
        self._run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                  "-keyout", key, "-out", csr, "-subj", "/CN=" + cn)
        self._run("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
                  "-out", crt, "-days", "1", "-extfile", ext)
        return crt, key


class WebConfigTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rail-web-e2e-")
        cls.pki = Pki(cls.tmp)
        cls.hash = bcrypt("s3cret")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        harness.require_executable(self, harness.BINARY)
        harness.require_executable(self, CURL)
        self.flags = harness.tree_flags(os.path.join(harness.FIXTURES, SPARK))

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start(self, web_config, *extra):
        path = self.write("web-%s.yml" % self._testMethodName, web_config)
        agent = harness.RailExporter(self.flags + ["--web.config.file=" + path] + list(extra))
        self.addCleanup(agent.stop)
        return agent

    def tls_config(self, extra=""):
        return ("tls_server_config:\n  cert_file: %s\n  key_file: %s\n" %
                (self.pki.server_crt, self.pki.server_key)) + extra

    def curl(self, url, *args):
        """(curl exit code, HTTP status or 0, body, headers text)."""
        result = subprocess.run(
            [CURL, "-sS", "--max-time", str(CURL_TIMEOUT), "-D", "-", "-o", "-",
             "-w", "\n%{http_code}", url] + list(args),
            capture_output=True, timeout=CURL_TIMEOUT + 5)
        # Bytes, decoded by hand: text mode would turn the header block's \r\n into \n.
        out, _, status = result.stdout.decode("utf-8", "replace").rpartition("\n")
        headers, _, body = out.partition("\r\n\r\n")
        return result.returncode, int(status or 0), body, headers

    def https(self, agent, path="/metrics", *args):
        return self.curl("https://127.0.0.1:%d%s" % (agent.port, path), "--cacert",
                         self.pki.ca_crt, *args)

    def assert_ok(self, result, what):
        code, status, body, _ = result
        self.assertEqual((code, status), (0, 200), "%s: curl exit %d, HTTP %d\n%s" % (
            what, code, status, body[:500]))

    def assert_refused(self, result, what):
        code, status, body, _ = result
        self.assertNotEqual(code, 0, "%s: the handshake succeeded (HTTP %d)" % (what, status))
        self.assertEqual(status, 0, "%s: got an HTTP answer" % what)

    def test_tls_serves_metrics_and_the_landing_page(self):
        agent = self.start(self.tls_config())
        self.assert_ok(self.https(agent), "TLS /metrics")
        self.assertIn("rail_exporter_build_info", self.https(agent)[2])
        self.assert_ok(self.https(agent, "/"), "TLS landing page")
        # A client that does not trust the server's CA refuses the server.
        self.assert_refused(self.curl("https://127.0.0.1:%d/metrics" % agent.port),
                            "untrusted server certificate")

    def test_plain_http_to_the_tls_port_fails_cleanly_and_the_agent_keeps_serving(self):
        agent = self.start(self.tls_config())
        for _ in range(3):
            code, status, _, _ = self.curl("http://127.0.0.1:%d/metrics" % agent.port)
            self.assertNotEqual(status, 200, "plain HTTP got metrics from a TLS port")
            self.assertNotEqual(code, 0)
        # Raw bytes that are not a TLS record: the connection is closed, no HTTP answer.
        with socket.create_connection(("127.0.0.1", agent.port), timeout=5) as raw:
            raw.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            data = raw.recv(4096)
            self.assertFalse(data.startswith(b"HTTP/"), data[:100])
        self.assertTrue(agent.alive())
        self.assert_ok(self.https(agent), "TLS after plain HTTP")

    def test_min_version_tls13_refuses_tls12_clients(self):
        agent = self.start(self.tls_config("  min_version: TLS13\n"))
        self.assert_refused(self.https(agent, "/metrics", "--tls-max", "1.2"), "TLS 1.2 client")
        self.assert_ok(self.https(agent, "/metrics", "--tlsv1.3"), "TLS 1.3 client")

    def test_default_min_version_tls12_serves_tls12_clients(self):
        agent = self.start(self.tls_config())
        self.assert_ok(self.https(agent, "/metrics", "--tls-max", "1.2"), "TLS 1.2 client")

    def test_require_and_verify_client_cert(self):
        agent = self.start(self.tls_config(
            "  client_ca_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n" %
            self.pki.ca_crt))
        self.assert_refused(self.https(agent), "no client certificate")
        self.assert_refused(self.https(agent, "/metrics", "--cert", self.pki.rogue_crt, "--key",
                                       self.pki.rogue_key), "client certificate of another CA")
        self.assert_ok(self.https(agent, "/metrics", "--cert", self.pki.client_crt, "--key",
                                  self.pki.client_key), "client certificate of the CA")
        self.assert_ok(self.https(agent, "/", "--cert", self.pki.client_crt, "--key",
                                  self.pki.client_key), "landing page with client certificate")

    def test_verify_client_cert_if_given(self):
        agent = self.start(self.tls_config(
            "  client_ca_file: %s\n  client_auth_type: VerifyClientCertIfGiven\n" %
            self.pki.ca_crt))
        self.assert_ok(self.https(agent), "no client certificate")
        self.assert_refused(self.https(agent, "/metrics", "--cert", self.pki.rogue_crt, "--key",
                                       self.pki.rogue_key), "client certificate of another CA")
        self.assert_ok(self.https(agent, "/metrics", "--cert", self.pki.client_crt, "--key",
                                  self.pki.client_key), "client certificate of the CA")

    def test_require_any_client_cert(self):
        agent = self.start(self.tls_config("  client_auth_type: RequireAnyClientCert\n"))
        self.assert_refused(self.https(agent), "no client certificate")
        self.assert_ok(self.https(agent, "/metrics", "--cert", self.pki.rogue_crt, "--key",
                                  self.pki.rogue_key), "any client certificate")

    def test_basic_auth(self):
        agent = self.start("basic_auth_users:\n  prometheus: '%s'\n" % self.hash)
        base = "http://127.0.0.1:%d" % agent.port
        for path in ("/metrics", "/", "/nothing-here"):
            _, status, _, headers = self.curl(base + path)
            self.assertEqual(status, 401, path)
            self.assertRegex(headers, r"(?i)www-authenticate: basic realm=")
        self.assertEqual(self.curl(base + "/metrics", "-u", "prometheus:wrong")[1], 401)
        self.assertEqual(self.curl(base + "/metrics", "-u", "nobody:s3cret")[1], 401)
        self.assertEqual(self.curl(base + "/metrics", "-H", "Authorization: Basic !!")[1], 401)
        self.assert_ok(self.curl(base + "/", "-u", "prometheus:s3cret"), "landing page")
        code, status, body, _ = self.curl(base + "/metrics", "-u", "prometheus:s3cret")
        self.assertEqual((code, status), (0, 200))
        samples = harness.parse_samples(body)
        failures = samples.get("rail_exporter_http_auth_failures_total", {})
        by_reason = {dict(labels)["reason"]: value for labels, value in failures.items()}
        self.assertEqual(by_reason, {"missing": 3.0, "invalid": 2.0, "malformed": 1.0})
        # Six failures within a second: one warning, the rest counted in the next one.
        warnings = [l for l in agent.stderr_lines() if "authentication failed" in l]
        self.assertEqual(len(warnings), 1, "\n".join(warnings))

    def test_basic_auth_over_tls(self):
        agent = self.start(self.tls_config() +
                           "basic_auth_users:\n  prometheus: '%s'\n" % self.hash)
        self.assertEqual(self.https(agent)[1], 401)
        self.assert_ok(self.https(agent, "/metrics", "-u", "prometheus:s3cret"), "TLS + auth")

    def test_listen_address_may_be_repeated(self):
        agent = self.start(self.tls_config(), "--web.listen-address=127.0.0.1:0",
                           "--web.listen-address=127.0.0.1:0")
        line = agent.wait_for_line(r"listening on port\(s\) (\d+(?:,\d+)*)").group(1)
        ports = [int(p) for p in line.split(",")]
        self.assertEqual(len(ports), 2, line)
        self.assertNotEqual(ports[0], ports[1])
        for port in ports:
            self.assert_ok(self.curl("https://127.0.0.1:%d/metrics" % port, "--cacert",
                                     self.pki.ca_crt), "port %d" % port)

    def test_bad_web_config_fails_at_start_naming_the_key(self):
        missing = os.path.join(self.tmp, "missing.crt")
        cases = [
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  bogus: 1\n",
             "tls_server_config.bogus: unknown key"),
            ("tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (missing,
                                                                     self.pki.server_key),
             "tls_server_config.cert_file: cannot read"),
            ("tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (self.pki.server_crt,
                                                                     self.pki.client_key),
             "tls_server_config.key_file"),
            (self.tls_config("  client_auth_type: Sometimes\n"),
             "tls_server_config.client_auth_type: unknown value 'Sometimes'"),
            (self.tls_config("  min_version: TLS11\n"), "tls_server_config.min_version"),
            ("basic_auth_users:\n  prometheus: plaintext\n",
             "basic_auth_users.prometheus: not a bcrypt hash"),
            ("basic_auth_users:\n  prometheus: '$2y$10$tooshort'\n",
             "basic_auth_users.prometheus: malformed bcrypt hash"),
        ]
        for i, (text, expected) in enumerate(cases):
            path = self.write("bad-%d.yml" % i, text)
            self.assert_one_line_failure(["--web.config.file=" + path], expected)
        self.assert_one_line_failure(["--web.config.file=" + os.path.join(self.tmp, "none.yml")],
                                     "none.yml: cannot read the file")

    def assert_one_line_failure(self, args, expected):
        result = harness.run_to_exit(self.flags + ["--web.listen-address=127.0.0.1:0"] + args,
                                     timeout=EXIT_TIMEOUT)
        self.assertNotEqual(result.returncode, 0, "%s: exit 0\n%s" % (args, result.stderr))
        lines = harness.non_log_lines(result.stderr)
        self.assertEqual(len(lines), 1, "%s: expected one line, got:\n%s" % (args, result.stderr))
        self.assertIn(expected, lines[0])


if __name__ == "__main__":
    harness.main()
