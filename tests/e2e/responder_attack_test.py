#!/usr/bin/python3
"""The real agent's responder under attack, on loopback only: a burst of 500 connections,
half-open and one-byte-per-second clients, oversized and malformed frames, a wrong HMAC, a
replayed hello, and strangers outside responder.allowed_networks. Each attack must be refused
and counted (rail_responder_errors_total{reason}), a legitimate peer (127.0.0.2) must complete
its handshake during and after the attacks, and the agent's RSS must not grow.

The legitimate peer speaks the control protocol itself (src/peer/auth.h): 4-byte big-endian
length + JSON, HMAC-SHA256 proofs over the two nonces under the shared secret."""

import hashlib
import hmac
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SPARK = "spark-dual-rail"
SECRET = b"e2e responder attack secret"
PER_IP = 4
HANDSHAKE_TIMEOUT = 5.0  # the responder's default
FLOOD = 500
RSS_GROWTH_LIMIT_KIB = 4096


def frame(message):
    payload = json.dumps(message).encode()
    return struct.pack(">I", len(payload)) + payload


def recv_exact(sock, count):
    data = b""
    while len(data) < count:
        try:
            chunk = sock.recv(count - len(data))
        except ConnectionResetError:  # closed before our bytes were read: a reset, not a FIN
            return None
        if not chunk:
            return None
        data += chunk
    return data


def recv_frame(sock):
    """The next message, or None when the responder closed the connection."""
    header = recv_exact(sock, 4)
    if header is None:
        return None
    payload = recv_exact(sock, struct.unpack(">I", header)[0])
    return None if payload is None else json.loads(payload)


def connect(port, source="127.0.0.1", timeout=HANDSHAKE_TIMEOUT + 5):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def hello(nonce):
    return {"v": 1, "type": "hello", "agent_version": "e2e", "ucx_version": "0",
            "nonce": nonce.hex()}


def handshake(port, secret=SECRET, source="127.0.0.2", nonce=None):
    """The responder's last message of a handshake: welcome on success, else its error."""
    nonce = nonce or os.urandom(32)
    with connect(port, source) as sock:
        try:
            sock.sendall(frame(hello(nonce)))
        except (BrokenPipeError, ConnectionResetError):
            return None
        challenge = recv_frame(sock)
        if challenge is None or challenge["type"] != "challenge":
            return challenge
        theirs = bytes.fromhex(challenge["nonce"])
        expected = hmac.new(secret, b"rail_exporter v1 responder" + nonce + theirs,
                            hashlib.sha256).hexdigest()
        if secret == SECRET and not hmac.compare_digest(expected, challenge["proof"]):
            raise AssertionError("the responder's proof does not verify")
        proof = hmac.new(secret, b"rail_exporter v1 initiator" + nonce + theirs,
                         hashlib.sha256).hexdigest()
        sock.sendall(frame({"v": 1, "type": "response", "proof": proof}))
        return recv_frame(sock)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class ResponderAttackTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rail-attack-e2e-")
        cls.secret_file = os.path.join(cls.tmp, "secret")
        with open(cls.secret_file, "wb") as f:
            f.write(SECRET)
        os.chmod(cls.secret_file, 0o600)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def start(self, extra_responder=""):
        harness.require_executable(self, harness.BINARY)
        port = harness.free_port()
        config = os.path.join(self.tmp, "config-%s.yml" % self._testMethodName)
        with open(config, "w") as f:
            f.write("responder:\n  listen_address: '127.0.0.1:%d'\n  secret_file: %s\n"
                    "  limits:\n    max_connections_per_ip: %d\n%s" %
                    (port, self.secret_file, PER_IP, extra_responder))
        agent = harness.RailExporter(harness.tree_flags(os.path.join(harness.FIXTURES, SPARK)) +
                                     ["--config.file=" + config])
        self.addCleanup(agent.stop)
        agent.wait_for_line(r"responder listening on port %d" % port)
        return agent, port

    def errors(self, agent):
        samples = harness.parse_samples(agent.scrape())
        return {dict(labels)["reason"]: value
                for labels, value in samples.get("rail_responder_errors_total", {}).items()}

    def wait_errors(self, agent, reason, at_least, timeout=HANDSHAKE_TIMEOUT + 5):
        deadline = time.monotonic() + timeout
        while True:
            got = self.errors(agent).get(reason, 0)
            if got >= at_least or time.monotonic() > deadline:
                return got
            time.sleep(0.1)

    def assert_legitimate_peer_served(self, port, when):
        reply = handshake(port)
        self.assertIsNotNone(reply, when + ": the responder closed on a legitimate peer")
        self.assertEqual(reply["type"], "welcome", "%s: %s" % (when, reply))

    def flood(self, port):
        """FLOOD connections at once from 127.0.0.1, held open; returns them."""
        socks = []
        for _ in range(FLOOD):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.bind(("127.0.0.1", 0))
            sock.connect_ex(("127.0.0.1", port))
            socks.append(sock)
        return socks

    def test_attacks_are_refused_counted_and_legitimate_peers_served(self):
        agent, port = self.start()
        self.assert_legitimate_peer_served(port, "before the attacks")

        # Burst of connections: PER_IP are admitted (and say nothing), the rest refused at accept.
        before = self.errors(agent).get("ip_limit", 0)
        started = time.monotonic()
        flood = self.flood(port)
        try:
            got = self.wait_errors(agent, "ip_limit", before + FLOOD - PER_IP)
            refused_after = time.monotonic() - started
            self.assertEqual(got - before, FLOOD - PER_IP)
            started = time.monotonic()
            self.assert_legitimate_peer_served(port, "during a %d-connection burst" % FLOOD)
            print("\n%d-connection burst: %d refused (ip_limit) within %.2f s; a legitimate "
                  "handshake during it took %.1f ms" % (FLOOD, got - before, refused_after,
                                                       (time.monotonic() - started) * 1000))
        finally:
            for sock in flood:
                sock.close()

        # Oversized frame (announces 16 MiB) and malformed JSON.
        for payload, reason in ((struct.pack(">I", 16 << 20) + b"{", "oversized"),
                                (struct.pack(">I", 8) + b"\x01garbage", "malformed")):
            with connect(port) as sock:
                sock.sendall(payload)
                reply = recv_frame(sock)
                self.assertEqual((reply or {}).get("reason"), reason, reply)

        # Wrong HMAC: the handshake of a peer with another secret.
        reply = handshake(port, secret=b"not the secret", source="127.0.0.1")
        self.assertEqual((reply or {}).get("reason"), "auth", reply)

        # Replayed hello: the same initiator nonce twice.
        nonce = os.urandom(32)
        with connect(port) as sock:
            sock.sendall(frame(hello(nonce)))
            self.assertEqual(recv_frame(sock)["type"], "challenge")
        with connect(port) as sock:
            sock.sendall(frame(hello(nonce)))
            reply = recv_frame(sock)
            self.assertEqual((reply or {}).get("reason"), "replay", reply)

        errors = self.errors(agent)
        for reason in ("oversized", "malformed", "auth", "replay"):
            self.assertGreaterEqual(errors.get(reason, 0), 1, "%s not counted: %s" % (reason,
                                                                                      errors))
        self.assert_legitimate_peer_served(port, "after the attacks")

    def test_half_open_and_slow_clients_are_dropped_without_blocking_others(self):
        agent, port = self.start()
        timeouts_before = self.errors(agent).get("timeout", 0)
        silent = [connect(port) for _ in range(2)]
        slow = [connect(port) for _ in range(2)]
        started = time.monotonic()
        stop = threading.Event()

        def dribble():  # one byte per second of a valid hello
            data = frame(hello(os.urandom(32)))
            for i in range(len(data)):
                if stop.is_set():
                    return
                for sock in slow:
                    try:
                        sock.sendall(data[i:i + 1])
                    except OSError:
                        return
                stop.wait(1.0)

        thread = threading.Thread(target=dribble, daemon=True)
        thread.start()
        try:
            self.assert_legitimate_peer_served(port, "while half-open and slow clients wait")
            for sock in silent + slow:
                reply = recv_frame(sock)
                self.assertEqual((reply or {}).get("reason"), "timeout", reply)
            elapsed = time.monotonic() - started
            self.assertLess(elapsed, HANDSHAKE_TIMEOUT + 3, "dropped only after %.1fs" % elapsed)
        finally:
            stop.set()
            thread.join(timeout=5)
            for sock in silent + slow:
                sock.close()
        self.assertGreaterEqual(self.wait_errors(agent, "timeout", timeouts_before + 4),
                                timeouts_before + 4)
        self.assert_legitimate_peer_served(port, "after the slow clients")

    def test_strangers_outside_allowed_networks_are_closed_at_accept(self):
        agent, port = self.start("  allowed_networks: [127.0.0.2/32, 'fd00::/8']\n")
        with connect(port, "127.0.0.1") as sock:
            self.assertIsNone(recv_frame(sock), "a stranger got a reply")
        self.assertEqual(handshake(port, source="127.0.0.1"), None)
        self.assertEqual(self.wait_errors(agent, "not_allowed", 2), 2)
        self.assert_legitimate_peer_served(port, "from an allowed network")

    def test_memory_does_not_grow_under_repeated_attacks(self):
        agent, port = self.start()

        def round_of_attacks():
            refused = self.errors(agent).get("ip_limit", 0)
            flood = self.flood(port)
            self.wait_errors(agent, "ip_limit", refused + FLOOD - PER_IP)
            for sock in flood:
                sock.close()
            for _ in range(20):
                handshake(port, secret=b"wrong", source="127.0.0.1")
                with connect(port) as sock:
                    sock.sendall(struct.pack(">I", 16 << 20))
                    recv_frame(sock)
            self.assert_legitimate_peer_served(port, "between rounds")

        round_of_attacks()  # warm-up: thread stacks, malloc arenas, caches reach their size
        time.sleep(0.5)
        before = rss_kib(agent.proc.pid)
        for _ in range(4):
            round_of_attacks()
        time.sleep(0.5)
        after = rss_kib(agent.proc.pid)
        print("\nresponder RSS after warm-up %d KiB, after 4 more rounds (%d connections) %d KiB"
              % (before, 4 * (FLOOD + 40), after))
        self.assertLess(after - before, RSS_GROWTH_LIMIT_KIB,
                        "RSS grew from %d to %d KiB" % (before, after))


if __name__ == "__main__":
    harness.main()
