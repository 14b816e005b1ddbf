"""Shared helpers of the end-to-end tests: locating the binary and the fixture trees, starting
and stopping rail_exporter and Debian's node_exporter, scraping and parsing exposition text.

Only the standard library and Debian's python3-prometheus-client are used. Every wait is bounded
and every child process is killed by stop() (call it from tearDown/addCleanup or use the agents
as context managers). RailExporter.scrape() checks every exposition it reads against the probe
figures' invariants (figure_invariants.py, issue 28).
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

import figure_invariants

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_EXPORTER = os.environ.get("RAIL_NODE_EXPORTER", "/usr/bin/prometheus-node-exporter")
PROMTOOL = os.environ.get("RAIL_PROMTOOL", "/usr/bin/promtool")

STARTUP_TIMEOUT = 15.0  # seconds for an agent to log its port / answer HTTP
STOP_TIMEOUT = 5.0  # seconds between SIGTERM and SIGKILL
HTTP_TIMEOUT = 10.0  # seconds per HTTP request
RUN_TIMEOUT = 20.0  # seconds for a process expected to exit by itself

# Filled by main(): command line first, then environment, then defaults next to the source tree.
BINARY = os.environ.get("RAIL_EXPORTER_BINARY",
                        os.path.join(REPO, "build-e2e", "src", "rail_exporter"))
FIXTURES = os.environ.get("RAIL_FIXTURES", os.path.join(REPO, "tests", "fixtures"))


# A test's own path options (main(path_options=...)), absolute, by name without the dashes:
# main(["--summary"]) and `--summary x.md` give OPTIONS["summary"]; absent when not given.
OPTIONS = {}

# The line every rail_exporter logs once its HTTP port is bound; group 1 is the port.
LISTENING = r"listening on port\(s\) (\d+)"


def main(path_options=()):
    """unittest.main() after taking --binary/--fixtures (and path_options) off the command line."""
    global BINARY, FIXTURES
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--binary", default=BINARY)
    parser.add_argument("--fixtures", default=FIXTURES)
    for option in path_options:
        parser.add_argument(option, dest=option.lstrip("-"))
    args, rest = parser.parse_known_args(sys.argv[1:])
    BINARY = os.path.abspath(args.binary)
    FIXTURES = os.path.abspath(args.fixtures)
    for option in path_options:
        value = getattr(args, option.lstrip("-"))
        if value:
            OPTIONS[option.lstrip("-")] = os.path.abspath(value)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


def fixture_trees():
    """(name, path) of every fixture tree that has a sys/ directory, sorted by name."""
    trees = []
    for name in sorted(os.listdir(FIXTURES)):
        path = os.path.join(FIXTURES, name)
        if os.path.isdir(os.path.join(path, "sys")):
            trees.append((name, path))
    return trees


def tree_flags(tree):
    """--path.sysfs/--path.procfs for a tree (proc/ may be absent: then a path that is)."""
    return ["--path.sysfs=" + os.path.join(tree, "sys"),
            "--path.procfs=" + os.path.join(tree, "proc")]


def agent_tree_flags(tree):
    """tree_flags, and rail_exporter's --path.ethtool where the tree records `ethtool -S` dumps
    (so that the agent never asks this machine's kernel about the tree's netdevs)."""
    flags = tree_flags(tree)
    if os.path.isdir(os.path.join(tree, "ethtool")):
        flags.append("--path.ethtool=" + os.path.join(tree, "ethtool"))
    return flags


def free_port():
    """A TCP port free on 127.0.0.1 right now (for programs that cannot bind port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=HTTP_TIMEOUT, context=None):
    """(status, body text, headers) of a GET; HTTP errors are returned, not raised. `context`:
    the ssl.SSLContext of an https URL."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as response:
            return response.status, response.read().decode("utf-8", "replace"), response.headers
    except urllib.error.HTTPError as error:
        body = error.read().decode("utf-8", "replace")
        return error.code, body, error.headers


def parse_samples(text):
    """{sample name: {frozenset(labels.items()): value}} of an exposition text."""
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return samples


def non_log_lines(text):
    """Lines of stderr that are neither logfmt (ts=...) nor JSON log lines."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("ts=") or stripped.startswith("{"):
            continue
        lines.append(stripped)
    return lines


def run_to_exit(args, timeout=RUN_TIMEOUT, **kwargs):
    """Runs rail_exporter with args until it exits; CompletedProcess with text output."""
    return subprocess.run([BINARY] + list(args), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, **kwargs)


class _Process:
    """A child process whose stderr is collected line by line by a thread."""

    def __init__(self, argv, name):
        self.name = name
        self.argv = argv
        self._lines = []
        self._cond = threading.Condition()
        self._eof = False
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, errors="replace")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stderr:
            with self._cond:
                self._lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def stderr_lines(self):
        with self._cond:
            return list(self._lines)

    def stderr_text(self):
        return "\n".join(self.stderr_lines())

    def wait_for_line(self, pattern, timeout=STARTUP_TIMEOUT):
        """The first re.search match of pattern in stderr; raises on timeout or early exit."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self._cond:
            while True:
                for line in self._lines[seen:]:
                    match = regex.search(line)
                    if match:
                        return match
                seen = len(self._lines)
                if self._eof:
                    raise RuntimeError("%s exited (rc=%s) before logging /%s/:\n%s" % (
                        self.name, self.proc.poll(), pattern, "\n".join(self._lines)))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("%s did not log /%s/ within %.0fs:\n%s" % (
                        self.name, pattern, timeout, "\n".join(self._lines)))
                self._cond.wait(remaining)

    def alive(self):
        return self.proc.poll() is None

    def wait_http(self, url, timeout=STARTUP_TIMEOUT, interval=0.05, context=None, status=200):
        """Polls GET url until it answers `status`; raises when the process exits or on
        timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if http_get(url, timeout=2, context=context)[0] == status:
                    return
            except OSError:
                pass
            if not self.alive():
                raise RuntimeError("%s exited:\n%s" % (self.name, self.stderr_text()))
            if time.monotonic() > deadline:
                raise TimeoutError("%s did not answer %s with %d within %.0fs:\n%s" % (
                    self.name, url, status, timeout, self.stderr_text()))
            time.sleep(interval)

    def stop(self):
        """SIGTERM, then SIGKILL after STOP_TIMEOUT; returns the exit code. Idempotent."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT)
        self._reader.join(timeout=STOP_TIMEOUT)
        if self.proc.stderr:
            self.proc.stderr.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class RailExporter(_Process):
    """rail_exporter on 127.0.0.1, port 0; the port comes from its "listening on" log line."""

    def __init__(self, args, listen=True):
        argv = [BINARY] + list(args)
        if listen and not any(a.startswith("--web.listen-address") for a in args):
            argv.append("--web.listen-address=127.0.0.1:0")
        super().__init__(argv, "rail_exporter")
        try:
            match = self.wait_for_line(LISTENING)
        except BaseException:
            self.stop()
            raise
        self.port = int(match.group(1))
        self.base_url = "http://127.0.0.1:%d" % self.port

    def get(self, path="/metrics"):
        return http_get(self.base_url + path)

    def scrape(self, path="/metrics"):
        """The body of a GET that must answer 200; an exposition (text/plain, any path but the
        /-/ endpoints) must obey the figure invariants (figure_invariants.py), or
        AssertionError."""
        status, body, headers = self.get(path)
        if status != 200:
            raise AssertionError("GET %s%s: HTTP %d\n%s" % (self.base_url, path, status, body))
        if ((headers.get("Content-Type") or "").startswith("text/plain") and
                not path.startswith("/-/")):
            figure_invariants.assert_invariants(body, "GET %s%s" % (self.base_url, path))
        return body


class NodeExporter(_Process):
    """Debian's node_exporter on a free 127.0.0.1 port, ready when / answers. `tls_context`:
    the client's ssl.SSLContext when args give it a web config with TLS; `ready_status` 401
    when it has basic auth."""

    def __init__(self, args, attempts=3, tls_context=None, ready_status=200):
        last_error = None
        for _ in range(attempts):  # another process may grab the free port in between
            self.port = free_port()
            self.base_url = "%s://127.0.0.1:%d" % ("https" if tls_context else "http", self.port)
            super().__init__([NODE_EXPORTER] + list(args) +
                             ["--web.listen-address=127.0.0.1:%d" % self.port], "node_exporter")
            try:
                self.wait_for_line(r'msg="Listening on"')
                self.wait_http(self.base_url + "/", context=tls_context, status=ready_status)
                return
            except (RuntimeError, TimeoutError) as error:
                last_error = error
                self.stop()
        raise last_error

    def scrape(self):
        status, body, _ = http_get(self.base_url + "/metrics")
        if status != 200:
            raise AssertionError("node_exporter /metrics: HTTP %d\n%s" % (status, body))
        return body


# The system user the Debian package creates and its unit runs the agent as (cmake/package.cmake).
PACKAGE_USER = "rail_exporter"


def as_user(user):
    """The argv prefix that runs a command as `user` with no capability and no way to gain one
    (what the package's unit allows); [] for None."""
    if user is None:
        return []
    return ["setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs"]


def require_executable(test, path):
    """Fails (not skips) when a tool the suite depends on is missing."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        test.fail("%s is not installed (scripts/install-deps installs it)" % path)
