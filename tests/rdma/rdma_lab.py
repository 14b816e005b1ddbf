"""The RDMA lab of the tests (scripts/rdma-lab): two QEMU guests, hosts a and b, each with two
Soft-RoCE rails (rxe0 on eth0, 10.200.0.<n>; rxe1 on eth1, 10.201.0.<n>; n = 1 for a, 2 for b).

The guests see this machine's / read-only, so they run the build tree's binaries in place; files
the tests write for them (configurations, secrets, scripts) go into the lab's shared directory,
/lab in the guests.

* RdmaLab: up() and down(); run() runs a shell command line in a guest; write() puts a file
  where both sides see it; start() starts a long-lived process in a guest (an agent) with its
  log in the shared directory; scrape() reads an agent's /metrics from inside its guest, and
  asserts the probe figures' invariants on it (tests/e2e/figure_invariants.py, issue 28).
* RdmaLabTestCase: one lab for every test of the class, up in setUpClass (the class's
  set_up_lab() then starts what it needs), down in tearDownClass. Where the lab cannot run
  (not root, no QEMU, no Debian kernel with rdma_rxe) the class is skipped with the reason, and
  that skip is a failure when RAIL_REQUIRE_RDMA_LAB=1 (CI sets it: there the lab must run).
  skip_step() does the same for one test that needs more than the lab (a kernel module).
* parse(): the samples of an exposition text as (name, labels, value).
"""

import os
import shlex
import subprocess
import sys
import time
import unittest

from prometheus_client.parser import text_string_to_metric_families

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The checker every scrape goes through, shared with the network-namespace lab's tests.
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import figure_invariants  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "rdma-lab")
LAB_DIR = os.environ.get("RDMA_LAB_DIR", "/tmp/rail-rdma-lab-tests")
GUEST_SHARED = "/lab"  # the shared directory inside the guests
REQUIRE = "RAIL_REQUIRE_RDMA_LAB"  # =1: a lab that cannot run fails instead of skipping
BOOT_TIMEOUT = 600  # seconds for both guests to boot and reach each other (scripts/rdma-lab up)
RUN_TIMEOUT = 120  # seconds for a command in a guest, unless the caller says otherwise
HOSTS = ("a", "b")
RAILS = ("rail0", "rail1")
DEVICE = {"rail0": "rxe0", "rail1": "rxe1"}
NETDEV = {"rail0": "eth0", "rail1": "eth1"}
METRICS_PORT = 9840
RESPONDER_PORT = 9841


def host_number(host):
    return HOSTS.index(host) + 1


def rail_address(host, rail):
    return "10.%d.0.%d" % (200 + RAILS.index(rail), host_number(host))


def peer_address(host):
    """Where other hosts reach host's responder: its rail 0 address."""
    return "%s:%d" % (rail_address(host, "rail0"), RESPONDER_PORT)


def parse(text):
    """[(name, labels, value)] of an exposition text."""
    return [(sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(text) for sample in family.samples]


def find(samples, name, **labels):
    """The values of name's samples that carry these labels."""
    return [value for sample_name, sample_labels, value in samples
            if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items())]


def series(samples, name):
    """The label sets and values of name's samples: [(labels, value)]."""
    return [(labels, value) for sample_name, labels, value in samples if sample_name == name]


def wait_until(check, timeout, interval=2.0):
    """Calls check() until it returns something truthy or timeout seconds have passed (at least
    once); its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def unavailable_reason():
    """Why this machine cannot run the lab (scripts/rdma-lab check), or None."""
    result = subprocess.run([SCRIPT, "check"], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    if result.returncode == 0:
        return None
    return "; ".join(line for line in (result.stdout + result.stderr).splitlines() if line)


class RdmaLab:
    """The lab of one directory (RDMA_LAB_DIR): two guests and what runs in them."""

    def __init__(self, lab_dir=LAB_DIR):
        self.lab_dir = lab_dir
        self.shared = os.path.join(lab_dir, "shared")
        self.env = dict(os.environ, RDMA_LAB_DIR=lab_dir)
        self.up_seconds = None

    def script(self, *args, timeout=60, check=True, env=None):
        return subprocess.run([SCRIPT] + [str(arg) for arg in args], env=env or self.env,
                              capture_output=True, text=True, timeout=timeout, check=check,
                              stdin=subprocess.DEVNULL)

    def up(self):
        """Both guests booted and their rails reachable; taken down again when that fails."""
        start = time.monotonic()
        env = dict(self.env, RDMA_LAB_BOOT_TIMEOUT=str(BOOT_TIMEOUT))
        try:
            self.script("down", check=False)
            result = self.script("up", timeout=BOOT_TIMEOUT + 120, check=False, env=env)
            if result.returncode != 0:
                raise AssertionError("scripts/rdma-lab up failed:\n" + result.stdout +
                                     result.stderr)
        except BaseException:
            self.down()
            raise
        self.up_seconds = time.monotonic() - start
        return self

    def down(self):
        """Both guests powered off (what ran in them goes with them). Safe to call again."""
        self.script("down", check=False)

    def run(self, host, command, timeout=RUN_TIMEOUT, check=True):
        """Runs a shell command line in a guest as root: a CompletedProcess whose stdout holds
        its output and stderr together."""
        env = dict(self.env, RDMA_LAB_EXEC_TIMEOUT=str(int(timeout)))
        result = subprocess.run([SCRIPT, "exec", host, command], env=env, capture_output=True,
                                text=True, timeout=timeout + 60, stdin=subprocess.DEVNULL)
        if check and result.returncode != 0:
            raise AssertionError("in host %s, `%s` failed (exit %d):\n%s%s" % (
                host, command, result.returncode, result.stdout, result.stderr))
        return result

    def write(self, name, text, mode=0o644):
        """A file of the shared directory; its path inside the guests."""
        path = os.path.join(self.shared, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(path, mode)
        return GUEST_SHARED + "/" + name

    def read(self, name):
        """A file of the shared directory ("" when it is missing)."""
        try:
            with open(os.path.join(self.shared, name), encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def start(self, host, name, argv, env=()):
        """Starts argv in a guest in a session of its own (it outlives the command that started
        it), its output in <name>.log of the shared directory and its pid in <name>.pid."""
        log = "%s/%s.log" % (GUEST_SHARED, name)
        pid = "%s/%s.pid" % (GUEST_SHARED, name)
        words = ["env"] + ["%s=%s" % item for item in dict(env).items()] + list(argv)
        inner = "echo $$ > %s; exec %s > %s 2>&1 < /dev/null" % (
            pid, " ".join(shlex.quote(word) for word in words), log)
        self.run(host, "rm -f %s; setsid -f sh -c %s; for i in $(seq 1 100); do [ -s %s ] && "
                 "exit 0; sleep 0.1; done; exit 1" % (pid, shlex.quote(inner), pid))
        return name

    def pid(self, name):
        text = self.read(name + ".pid").strip()
        return int(text) if text else None

    def scrape(self, host, port=METRICS_PORT, path="/metrics"):
        """An agent's /metrics (or another path), read with curl inside its guest; /metrics with
        its figure invariants asserted (every scrape of the RDMA lab's tests comes here)."""
        text = self.run(host, "curl -sf --max-time 30 http://127.0.0.1:%d%s" % (port, path),
                        timeout=60).stdout
        if path == "/metrics":
            figure_invariants.assert_invariants(text, "the scrape of host %s's agent (port %d)"
                                                % (host, port))
        return text

    def wait_http(self, host, name, port=METRICS_PORT, timeout=120):
        """Polls (inside the guest, bounded) until the agent started as `name` answers /metrics;
        fails with its log when it exits first or does not answer in time."""
        result = self.run(host, "for i in $(seq 1 %d); do curl -sf -o /dev/null --max-time 5 "
                          "http://127.0.0.1:%d/metrics && exit 0; kill -0 %d || exit 3; "
                          "sleep 0.5; done; exit 1" % (timeout * 2, port, self.pid(name)),
                          timeout=timeout + 30, check=False)
        if result.returncode != 0:
            raise AssertionError("%s in host %s %s:\n%s" % (
                name, host, "exited" if result.returncode == 3 else "did not answer",
                self.read(name + ".log")[-4000:]))


class RdmaLabTestCase(unittest.TestCase):
    """Tests that share one RDMA lab: up before the first test, down after the last."""

    @classmethod
    def setUpClass(cls):
        reason = unavailable_reason()
        if reason:
            if os.environ.get(REQUIRE) == "1":
                raise AssertionError("the RDMA lab cannot run here and %s=1 requires it: %s"
                                     % (REQUIRE, reason))
            raise unittest.SkipTest("the RDMA lab cannot run here: " + reason)
        cls.lab = RdmaLab().up()
        print("rdma lab up in %.0f s" % cls.lab.up_seconds, flush=True)
        try:
            cls.set_up_lab()
        except BaseException:
            cls.lab.down()
            raise

    @classmethod
    def set_up_lab(cls):
        """Starts what the class needs in the guests (cls.lab is up by then)."""

    @classmethod
    def tearDownClass(cls):
        cls.lab.down()

    def skip_step(self, reason):
        """Skips this test with the reason, or fails it when RAIL_REQUIRE_RDMA_LAB=1."""
        if os.environ.get(REQUIRE) == "1":
            self.fail("%s, and %s=1 requires every step to run" % (reason, REQUIRE))
        self.skipTest(reason)
