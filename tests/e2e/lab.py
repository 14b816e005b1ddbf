"""The network-namespace lab of the end-to-end tests (scripts/lab), held once for every lab test.

A lab of prefix P is two hosts, a and b (namespaces P-a and P-b), joined by two rails: veth pairs
ra0-rb0 (10.200.0.1 and .2) and ra1-rb1 (10.201.0.1 and .2). A lab of 3 to 8 hosts (Lab(...,
hosts=N), LabTestCase.LAB_HOSTS) has hosts a, b, c, ... on one bridge per rail instead: host i
(1-based) has r<host><rail> at 10.20<rail>.0.<i>. `mgmt-up` adds a management link from the root
namespace to each host (LAB_MGMT_NET.1 for a, .2 for b, ...). Every lab needs root.

* Lab: one lab of one prefix. up() and down(); exec() runs a command in a host; throttle(),
  unthrottle(), rail_del(), rail_add(), status() run scripts/lab; write(), secret() and config()
  write files into the lab's temporary directory; start_agent() starts a LabAgent in a host, and
  down() stops every agent (and every process given to track()) before removing the lab.
* LabAgent: rail_exporter inside a host's namespace, scraped through curl in the same namespace
  (a namespace's loopback is its own), every scrape checked against the probe figures'
  invariants (figure_invariants.py, issue 28); wait_for() polls its samples until a condition
  holds.
* LabTestCase: a TestCase class with one lab for all its tests, up in setUpClass (the class's
  set_up_lab() then starts what it needs), down in tearDownClass and when setUpClass fails;
  skipped with a message when not root, or when a tool of TOOLS is missing.
* agent_config(): the YAML of an agent of a host; rail_address(), netdev() and peer_address()
  name a host's rails and responder; find() and all_ones() read samples;
  wait_until() is the bounded poll every wait uses.
"""

import grp
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import unittest

import figure_invariants
import harness

SCRIPT = os.path.join(harness.REPO, "scripts", "lab")
SCRIPT_TIMEOUT = 60.0  # seconds for one scripts/lab command
EXEC_TIMEOUT = 60.0  # seconds for a command run in a host, unless the caller says otherwise
HOST_NAMES = "abcdefgh"  # host i (1-based) of a lab is HOST_NAMES[i - 1]; scripts/lab allows 8
HOSTS = ("a", "b")  # the hosts of the default, point-to-point lab
RAILS = {"rail0": ("ra0", "rb0"), "rail1": ("ra1", "rb1")}  # rail: (host a's, host b's netdev)
RAIL_NAMES = tuple(RAILS)  # every lab host has these rails, whatever the host count


def rail_index(rail):
    """0 for "rail0", 1 for "rail1"."""
    return RAIL_NAMES.index(rail)


def host_number(host):
    """1 for host a, 2 for b, ...: the last octet of the host's addresses."""
    return HOST_NAMES.index(host) + 1


def rail_address(host, rail):
    """host's address on rail ("rail0", "rail1"): 10.20<rail>.0.<host number>."""
    return "10.%d.0.%d" % (200 + rail_index(rail), host_number(host))


def netdev(host, rail):
    """host's netdev on rail: r<host><rail> (ra0, rb1, rc0, ...)."""
    return "r%s%d" % (host, rail_index(rail))


RAIL0_ADDRESS = {host: rail_address(host, "rail0") for host in HOSTS}
RESPONDER_PORT = 9841
# The bulk budget of every probing lab agent: room for short bulk runs on each rail.
BUDGET = "budget: {max_bulk_time_fraction_per_rail: 0.5, max_bytes_per_hour: 100000000000000}\n"
TOOL_PACKAGES = {"ip": "iproute2"}  # Debian package of a tool, where its name differs

needs_root = unittest.skipUnless(os.geteuid() == 0,
                                 "needs root for network namespaces (scripts/lab)")


def require_tools(*tools):
    """Raises SkipTest unless every tool is on PATH."""
    if any(shutil.which(tool) is None for tool in tools):
        raise unittest.SkipTest("needs " + " and ".join(TOOL_PACKAGES.get(tool, tool)
                                                        for tool in tools))


def peer_address(host):
    """Where the other hosts reach host's responder: its rail 0 address and RESPONDER_PORT."""
    return "%s:%d" % (rail_address(host, "rail0"), RESPONDER_PORT)


def in_ns(ns, argv, timeout=EXEC_TIMEOUT, check=True):
    """Runs argv inside network namespace ns; a CompletedProcess with text output."""
    return subprocess.run(["ip", "netns", "exec", ns] + list(argv), capture_output=True,
                          text=True, timeout=timeout, check=check, stdin=subprocess.DEVNULL)


def tx_bytes(ns, netdev):
    """statistics/tx_bytes of a netdev of namespace ns."""
    return int(in_ns(ns, ["cat", "/sys/class/net/%s/statistics/tx_bytes" % netdev]).stdout)


def children(pid):
    """Pids whose parent is pid (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def running(pid):
    """pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def find(samples, name, **labels):
    """The values of the samples ([(name, labels, value)]) of name with these labels."""
    return [value for sample_name, sample_labels, value in samples
            if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items())]


def all_ones(values):
    """At least one series, every one of them 1."""
    return bool(values) and all(value == 1.0 for value in values)


def wait_until(check, timeout, interval=1.0):
    """Calls check() until it returns something truthy or timeout seconds have passed (it is
    called at least once); returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def ensure_system_user(name):
    """The system user and group `name`, made as the package's postinst makes them when
    missing; (uid, gid)."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True, timeout=EXEC_TIMEOUT)
        entry = pwd.getpwnam(name)
    return entry.pw_uid, grp.getgrnam(name).gr_gid


def rails_yaml(host, transport=None):
    """The rails: list of a host (rail0 and rail1 on its veths)."""
    extra = ", transport: %s" % transport if transport else ""
    return "rails:\n" + "".join("  - {name: %s, netdev: %s%s}\n" % (rail, netdev(host, rail),
                                                                    extra)
                                for rail in RAIL_NAMES)


def agent_config(host, secret=None, limits=None, peers=None, probes=None, budget=BUDGET,
                 transport=None, responder_name=None):
    """The configuration of an agent of a host: its rails, a responder on RESPONDER_PORT
    (with secret_file `secret`, `limits`, a flow mapping's inside, and the name it gives itself in
    its welcome, `responder_name`, when given: the lab's hosts share the machine's host name,
    the default), `peers`
    ({name: address}), and, when `probes` (the lines of the probes: list) are given, the
    `budget` line and the probes."""
    text = rails_yaml(host, transport) + "responder:\n  listen_address: ':%d'\n" % RESPONDER_PORT
    if secret:
        text += "  secret_file: %s\n" % secret
    if limits:
        text += "  limits: {%s}\n" % limits
    if responder_name:
        text += "  name: %s\n" % responder_name
    if peers:
        text += "peers:\n" + "".join("  - {name: %s, address: '%s'}\n" % item
                                     for item in peers.items())
    if probes is not None:
        text += (budget or "") + "probes:\n" + probes
    return text


class LabAgent(harness._Process):
    """rail_exporter inside namespace ns, listening on address, port 0 (the port comes from its
    log); binary: another build than harness.BINARY; env: more environment (through env(1))."""

    def __init__(self, ns, args, binary=None, env=(), address="127.0.0.1", name=None, user=None):
        self.ns = ns
        env_argv = ["env"] + ["%s=%s" % item for item in dict(env).items()] if env else []
        super().__init__(["ip", "netns", "exec", ns] + harness.as_user(user) + env_argv +
                         [binary or harness.BINARY] +
                         list(args) + ["--web.listen-address=%s:0" % address],
                         name or "rail_exporter@" + ns)
        try:
            self.port = int(self.wait_for_line(harness.LISTENING).group(1))
        except BaseException:
            self.stop()
            raise
        self.target = "%s:%d" % (address, self.port)  # host:port, as Prometheus scrapes it

    def scrape(self):
        """/metrics, its figure invariants asserted (every scrape of a lab agent comes here)."""
        result = in_ns(self.ns, ["curl", "-sf", "--max-time", "10",
                                 "http://%s/metrics" % self.target], check=False)
        if result.returncode != 0:
            raise AssertionError("scrape of %s failed: curl exit %d" % (self.ns,
                                                                       result.returncode))
        return figure_invariants.assert_invariants(
            result.stdout, "the scrape of %s (%s)" % (self.name, self.target))

    def samples(self):
        """[(name, labels, value)] of a scrape."""
        return [(name, dict(labels), value)
                for name, series in harness.parse_samples(self.scrape()).items()
                for labels, value in series.items()]

    def wait_for(self, predicate, timeout, interval=1.0):
        """Scrapes until predicate(samples) is truthy or timeout passes: (its last value, the
        last samples)."""
        last = []

        def check():
            last[:] = self.samples()
            return predicate(last)
        return wait_until(check, timeout, interval), last


class Lab:
    """The lab of one prefix (namespaces <prefix>-a, <prefix>-b, ...), and what runs in it.
    hosts: the host count (2: point to point; 3 to 8: one bridge per rail)."""

    def __init__(self, prefix, mgmt_net=None, tmp_prefix="rail-lab-", hosts=len(HOSTS),
                 agent_user=None):
        if not len(HOSTS) <= hosts <= len(HOST_NAMES):
            raise ValueError("a lab has 2 to %d hosts, not %d" % (len(HOST_NAMES), hosts))
        self.prefix = prefix
        self.mgmt_net = mgmt_net  # LAB_MGMT_NET of the management links; None: the default
        self.tmp_prefix = tmp_prefix
        self.hosts = tuple(HOST_NAMES[:hosts])
        self.ns = {host: "%s-%s" % (prefix, host) for host in self.hosts}
        self.ns_a, self.ns_b = self.ns["a"], self.ns["b"]
        self.tmp = None
        self.processes = []
        self.agent_user = agent_user  # None: agents run as root
        self.agent_ids = ensure_system_user(agent_user) if agent_user else None

    def script(self, *args, timeout=SCRIPT_TIMEOUT, check=True):
        """Runs scripts/lab for this prefix (and management net)."""
        env = dict(os.environ, LAB_PREFIX=self.prefix)
        if self.mgmt_net:
            env["LAB_MGMT_NET"] = self.mgmt_net
        return subprocess.run([SCRIPT] + [str(arg) for arg in args], env=env,
                              capture_output=True, text=True, timeout=timeout, check=check)

    def up(self, mgmt=False):
        """A fresh lab: what an earlier run left of this prefix removed, the hosts and rails
        made (and the management links, with mgmt), a new temporary directory. Everything is
        taken down again when a step fails. Returns the lab."""
        try:
            self.tmp = tempfile.mkdtemp(prefix=self.tmp_prefix)
            if self.agent_ids:  # the agents read their configurations and secrets here
                os.chown(self.tmp, 0, self.agent_ids[1])
                os.chmod(self.tmp, 0o750)
            self.script("down")
            self.script("up", len(self.hosts))
            if mgmt:
                self.script("mgmt-up")
        except BaseException:
            self.down()
            raise
        return self

    def down(self):
        """Stops every started or tracked process (the last first), copies their logs into
        $RAIL_KEEP_LOGS when that names a directory, removes the lab and the temporary
        directory. Safe to call again."""
        processes, self.processes = self.processes, []
        for process in reversed(processes):
            process.stop()
        keep = os.environ.get("RAIL_KEEP_LOGS")
        if keep and processes:  # for debugging a failed run
            os.makedirs(keep, exist_ok=True)
            for process in processes:
                with open(os.path.join(keep, process.name + ".log"), "w") as handle:
                    handle.write(process.stderr_text() + "\n")
        try:
            self.script("down")
        finally:
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None

    # -- the hosts and rails ----------------------------------------------------------------

    def exec(self, host, argv, timeout=EXEC_TIMEOUT, check=True):
        """Runs argv in a host (a, b, ...)."""
        return in_ns(self.ns[host], argv, timeout=timeout, check=check)

    def tx_bytes(self, host, netdev):
        return tx_bytes(self.ns[host], netdev)

    def throttle(self, rail, rate, host=None):
        """Shapes both ends of rail (0 or 1) to rate, e.g. "1gbit"; with host, only that host's
        port on the rail (both directions; in the two-host lab the link is both hosts' port)."""
        self.script("throttle", rail, rate, *([host] if host else []))

    def unthrottle(self, rail, host=None):
        self.script("unthrottle", rail, *([host] if host else []))

    def rail_del(self, rail, host=None):
        """Deletes the rail's veths (of host's port only, with host), as a NIC vanishing."""
        self.script("rail-del", rail, *([host] if host else []))

    def rail_add(self, rail, host=None):
        self.script("rail-add", rail, *([host] if host else []))

    def status(self):
        """scripts/lab status: namespaces, addresses and qdiscs, for a failure message."""
        return self.script("status", timeout=30, check=False).stdout

    def mgmt_address(self, host):
        """host's end of its management link (after up(mgmt=True))."""
        return "%s.%d" % (self.mgmt_net or "10.210.0", host_number(host))

    # -- files and processes ----------------------------------------------------------------

    def write(self, name, text, mode=0o644):
        """A file of the lab's temporary directory; its path."""
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(path, mode)
        return path

    def secret(self, name, text):
        """A secret file (mode 0600, as the agent requires), the agents' user's when they have
        one."""
        path = self.write(name, text, 0o600)
        if self.agent_ids:
            os.chown(path, *self.agent_ids)
        return path

    def config(self, name, host, **kwargs):
        """An agent configuration file of a host: agent_config(host, **kwargs)."""
        return self.write(name, agent_config(host, **kwargs))

    def track(self, process):
        """A process that down() stops."""
        self.processes.append(process)
        return process

    def start_agent(self, host, args, **kwargs):
        """A LabAgent in a host (kwargs: LabAgent's), stopped by down()."""
        kwargs.setdefault("user", self.agent_user)
        return self.track(LabAgent(self.ns[host], args, **kwargs))

    def start_probing_pair(self, secret, probes, peer_name=None, mgmt=False):
        """An agent in each host that probes the other's responder (over rail 0) with these
        probes; {host: agent}. Each calls its peer peer_name (default: the peer's host name).
        mgmt: they listen on their management addresses, and are named by host."""
        agents = {}
        for host, peer in (("a", "b"), ("b", "a")):
            config = self.config(host + ".yaml", host, secret=secret,
                                 peers={peer_name or peer: peer_address(peer)}, probes=probes)
            where = {"address": self.mgmt_address(host),
                     "name": "rail_exporter@" + host} if mgmt else {}
            agents[host] = self.start_agent(host, ["--config.file=" + config], **where)
        return agents


@needs_root
class LabTestCase(unittest.TestCase):
    """Tests that share one lab: up before the first test, down after the last.

    A subclass sets LAB_PREFIX (its namespaces; each test module has its own default, so that a
    lab left behind by one cannot disturb another), LAB_HOSTS, MGMT_NET for management links,
    TMP_PREFIX, TOOLS, and starts what it needs in set_up_lab() (cls.lab is up by then).
    """

    LAB_PREFIX = "rl"
    LAB_HOSTS = len(HOSTS)  # 3 to 8: the switched lab
    MGMT_NET = None  # a LAB_MGMT_NET: the lab gets management links
    TMP_PREFIX = "rail-lab-"
    TOOLS = ("ip", "curl")  # skip without them
    AGENT_USER = None  # harness.PACKAGE_USER: the agents run as that user, not root

    @classmethod
    def setUpClass(cls):
        require_tools(*cls.TOOLS)
        cls.lab = Lab(cls.LAB_PREFIX, cls.MGMT_NET, cls.TMP_PREFIX, cls.LAB_HOSTS,
                      cls.AGENT_USER)
        cls.lab.up(mgmt=cls.MGMT_NET is not None)
        # tearDownClass does not run when setUpClass fails: take the lab down here then.
        try:
            cls.set_up_lab()
        except BaseException:
            cls.lab.down()
            raise

    @classmethod
    def set_up_lab(cls):
        """Starts the class's agents (cls.lab.start_agent) and whatever else it needs."""

    @classmethod
    def tearDownClass(cls):
        cls.lab.down()
