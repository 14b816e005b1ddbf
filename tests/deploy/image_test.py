#!/usr/bin/python3
"""The container image (scripts/image) run by podman in the network-namespace lab.

Needs root (network namespaces, podman's storage), podman, buildah and runc; skips with the reason
when it cannot run a container here (a trivial container is started first). It builds the image
with scripts/image, from the package scripts/package builds (or uses the image named by
$RAIL_IMAGE), then runs it as a deployment would (docs/deploy.md): read-only root filesystem, every
capability dropped, no new privileges, as the image's user 9840, the configuration mounted
read-only and the shared secret as a podman secret (owned by 9840, mode 0400). Each container
joins one lab host's network namespace (`--network ns:/run/netns/<prefix>-<host>`), so the rails
it sees are that host's veths.

What it shows (issue 14): the agent in the image serves /metrics with its build information, and
the probe worker starts inside the image and loads UCX (the build information's UCX version is the
one this machine's UCX reports); the agent and its worker run as 9840 without capabilities; the
agent in host a's container probes the responder in host b's container with ucx_rtt and
ucx_throughput over UCX's tcp transport (UCX_TLS=tcp, the probes' ucx_transports), on both rails,
successfully; every module loaded at run time (libibverbs providers, UCX transports, NSS)
resolves with the image's own loader; the image as shipped (its command, its example
configuration, no secret) serves /metrics and /-/ready without peer traffic; a scrape over TLS
works in the image (the OpenSSL the agent links). It prints the image's size (not asserted)
and its own timing. Containers are always removed; an image it built is removed too unless
$RAIL_KEEP_IMAGE is set.
"""

import argparse
import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

import harness  # noqa: E402
import lab  # noqa: E402
from lab import all_ones, find  # noqa: E402

PREFIX = os.environ.get("RAIL_LAB_PREFIX", "rlimg")
SOLO_NS = PREFIX + "-solo"  # a namespace for a container on its own
# crun refuses this machine's hybrid cgroups; the hard limits here are below podman's defaults.
PODMAN = ["podman", "--runtime", "runc"]
LIMITS = ["--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096"]
# How a deployment runs the image: nothing writable but the tmpfs podman mounts, no capabilities.
HARDENING = ["--read-only", "--cap-drop=all", "--security-opt=no-new-privileges",
             "--user", "9840:9840"]
IMAGE_UID = 9840
CONFIG_PATH = "/etc/rail_exporter/rail_exporter.yml"  # the image's default --config.file
SECRET_PATH = "/etc/rail_exporter/secret"
METRICS_PORT = 9840  # the agent's default --web.listen-address, in each host's namespace
BUILD_TIMEOUT = 900.0  # seconds for scripts/image, the package build included
PODMAN_TIMEOUT = 60.0  # seconds for one podman command
STARTUP_TIMEOUT = 20.0  # seconds for an agent in a container to answer /metrics
STOP_ATTEMPTS = 5  # podman rm attempts for one container
PROBE_TIMEOUT = 60.0  # seconds for every UCX probe to have succeeded once on both rails
UCX_KINDS = ("ucx_rtt", "ucx_throughput")
PROBES = (
    "  - {kind: ucx_rtt, duration: 1s, timeout: 5s, interval: 10s, ucx_transports: tcp}\n"
    "  - {kind: ucx_throughput, operation: put, duration: 1s, timeout: 5s, interval: 60s,"
    " ucx_transports: tcp}\n")

LOADER = "/lib64/ld-linux-x86-64.so.2"
MULTIARCH = "x86_64-linux-gnu"
BUILD_DIR = os.path.join(REPO, "build")  # --build-dir: where scripts/image stages its files


def podman(*args, timeout=PODMAN_TIMEOUT, check=True):
    """Runs podman (with runc) and returns the CompletedProcess, text output."""
    return subprocess.run(PODMAN + list(args), capture_output=True, text=True, timeout=timeout,
                          check=check, stdin=subprocess.DEVNULL)


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def podman_runs_containers():
    """None when podman can run a trivial container here, else why not. The container is a root
    filesystem holding only Debian's static ldconfig, so that nothing of the image under test is
    needed to answer."""
    if os.geteuid() != 0:
        return "needs root (podman's storage, network namespaces)"
    missing = [tool for tool in ("podman", "buildah", "runc", "ip", "curl")
               if shutil.which(tool) is None]
    if missing:
        return "needs " + ", ".join(missing) + " (scripts/install-deps)"
    ldconfig = "/sbin/ldconfig"
    rootfs = tempfile.mkdtemp(prefix="rail-image-probe-")
    try:
        shutil.copy(ldconfig, rootfs)
        result = podman("run", "--rm", "--network", "none", *LIMITS, "--rootfs", rootfs,
                        "/ldconfig", "--version", check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return "podman cannot run a container here: %s" % error
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    if result.returncode != 0 or "ldconfig" not in result.stdout:
        return "podman cannot run a container here: %s" % last_line(result.stderr)
    return None


def host_ucx_version():
    """The UCX version this machine's ucx_info reports (the image carries the same library), or
    None without ucx_info."""
    if shutil.which("ucx_info") is None:
        return None
    output = subprocess.run(["ucx_info", "-v"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"[Vv]ersion (\d+\.\d+\.\d+)", output)
    return match.group(1) if match else None


def proc_status(pid):
    """{field: value} of /proc/<pid>/status."""
    with open("/proc/%d/status" % pid) as handle:
        return dict(line.rstrip("\n").split(":\t", 1) for line in handle if ":\t" in line)


class Container:
    """The image started detached in network namespace ns; stop() removes it. volumes: (host
    path, path in the container), mounted read-only; secret: a podman secret, placed at
    SECRET_PATH for the image's user; args: instead of the image's command; https: it serves
    TLS (a certificate curl does not check)."""

    def __init__(self, image, name, ns, volumes=(), secret=None, args=(), https=False):
        self.name = name
        self.ns = ns
        self.base_url = "%s://127.0.0.1:%d" % ("https" if https else "http", METRICS_PORT)
        options = []
        for source, target in volumes:
            options += ["--volume", "%s:%s:ro" % (source, target)]
        if secret:
            options += ["--secret", "%s,target=%s,uid=%d,gid=%d,mode=0400" % (
                secret, SECRET_PATH, IMAGE_UID, IMAGE_UID)]
        try:
            podman("run", "--detach", "--name", name, "--network", "ns:/run/netns/" + ns,
                   *LIMITS, *HARDENING, *options, image, *args)
        except subprocess.CalledProcessError as error:
            self.stop()  # podman may have created it before failing to start it
            raise AssertionError("podman run %s failed: %s" % (name, error.stderr)) from None

    def logs(self):
        result = podman("logs", self.name, check=False)
        return result.stdout + result.stderr

    def pid(self):
        """The agent's pid in this machine's pid namespace (0 when it is not running)."""
        return int(podman("inspect", "--format", "{{.State.Pid}}", self.name).stdout.strip())

    def scrape(self, path="/metrics"):
        """A GET through curl in the container's namespace: the body, or None when it fails."""
        result = lab.in_ns(self.ns, ["curl", "-sfk", "--max-time", "5", self.base_url + path],
                           check=False)
        return result.stdout if result.returncode == 0 else None

    def samples(self):
        text = self.scrape()
        if text is None:
            raise AssertionError("%s does not answer /metrics:\n%s" % (self.name, self.logs()))
        return [(name, dict(labels), value)
                for name, series in harness.parse_samples(text).items()
                for labels, value in series.items()]

    def running(self):
        return podman("inspect", "--format", "{{.State.Running}}", self.name,
                      check=False).stdout.strip() == "true"

    def wait_until_serving(self):
        # An agent that exits (a bad configuration, a missing library) fails at once.
        if not lab.wait_until(lambda: not self.running() or self.scrape() is not None,
                              STARTUP_TIMEOUT, 0.5) or not self.running():
            raise AssertionError("%s never answered /metrics:\n%s" % (self.name, self.logs()))

    def stop(self):
        # A container that exited on its own can still be in podman's cleanup, when rm may fail:
        # try again (bounded), and say so when it stays.
        for _ in range(STOP_ATTEMPTS):
            result = podman("rm", "--force", "--time", "2", self.name, check=False)
            if podman("container", "exists", self.name, check=False).returncode != 0:
                return
            time.sleep(0.5)
        print("could not remove container %s: %s" % (self.name, last_line(result.stderr)))


@unittest.skipUnless(os.geteuid() == 0, "needs root (podman's storage, network namespaces)")
class ImageTest(unittest.TestCase):
    maxDiff = None  # the unresolved modules, in full

    @classmethod
    def setUpClass(cls):
        cls.started = time.monotonic()
        why_not = podman_runs_containers()
        if why_not:
            raise unittest.SkipTest(why_not)
        cls.built = False
        cls.containers = []
        cls.image = os.environ.get("RAIL_IMAGE") or cls.build_image()
        cls.lab = lab.Lab(PREFIX, tmp_prefix="rail-image-")
        try:
            cls.lab.up()
            cls.start_agents()
        except BaseException:
            cls.tear_down()
            raise

    @classmethod
    def build_image(cls):
        start = time.monotonic()
        # The package of the tree ctest runs from (cpack alone, stripped): no second build.
        package = subprocess.run([os.path.join(REPO, "scripts", "package"), "--from-build",
                                  BUILD_DIR], capture_output=True, text=True,
                                 timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL)
        if package.returncode != 0:
            raise AssertionError("scripts/package failed:\n%s\n%s" % (package.stdout[-3000:],
                                                                        package.stderr[-3000:]))
        result = subprocess.run([os.path.join(REPO, "scripts", "image"), last_line(package.stdout)],
                                capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                                stdin=subprocess.DEVNULL,
                                env=dict(os.environ, RAIL_BUILD_DIR=BUILD_DIR))
        if result.returncode != 0:
            raise AssertionError("scripts/image failed:\n%s\n%s" % (result.stdout[-3000:],
                                                                    result.stderr[-3000:]))
        cls.built = True
        image = last_line(result.stdout)
        print("scripts/image: %s in %.1f s" % (image, time.monotonic() - start))
        return image

    @classmethod
    def start_agents(cls):
        """b answers (a responder), a probes b over both rails; each has the secret."""
        cls.secret_name = "rail-image-test-%d" % os.getpid()
        podman("secret", "create", cls.secret_name,
               cls.lab.secret("secret", "image-lab-shared-secret\n"))
        configs = {
            "b": cls.lab.config("b.yaml", "b", secret=SECRET_PATH),
            "a": cls.lab.config("a.yaml", "a", secret=SECRET_PATH,
                                peers={"b": lab.peer_address("b")}, probes=PROBES),
        }
        for host in ("b", "a"):
            name = "rail-image-test-%s-%d" % (host, os.getpid())
            container = Container(cls.image, name, cls.lab.ns[host],
                                  volumes=[(configs[host], CONFIG_PATH)], secret=cls.secret_name)
            cls.containers.append(container)
            container.wait_until_serving()
        cls.agent_b, cls.agent_a = cls.containers

    @classmethod
    def tear_down(cls):
        for container in reversed(getattr(cls, "containers", [])):
            container.stop()
        if getattr(cls, "secret_name", None):
            podman("secret", "rm", cls.secret_name, check=False)
        cls.lab.down()
        if cls.built and not os.environ.get("RAIL_KEEP_IMAGE"):
            podman("rmi", cls.image, re.sub(r":[^:/]*$", ":latest", cls.image), check=False)
        print("image test: %.1f s in all" % (time.monotonic() - cls.started))

    @classmethod
    def tearDownClass(cls):
        cls.tear_down()

    def test_1_agent_in_the_image_serves_its_build_and_the_workers_ucx(self):
        samples = self.agent_a.samples()
        builds = [labels for name, labels, _ in samples if name == "rail_exporter_build_info"]
        self.assertEqual(len(builds), 1, builds)
        build = builds[0]
        self.assertRegex(build.get("version", ""), r"^\d+\.\d+\.\d+")
        # The worker answered --ucx-version inside the image: it started and loaded UCX there.
        expected = host_ucx_version()
        if expected:
            self.assertEqual(build.get("ucx_version"), expected, build)
        else:
            self.assertRegex(build.get("ucx_version", ""), r"^\d+\.\d+", build)
        labels = podman("image", "inspect", "--format",
                        "{{index .Labels \"org.opencontainers.image.version\"}}",
                        self.image).stdout.strip()
        self.assertEqual(labels, build["version"], "the image's version label")

    def test_2_agent_and_worker_run_as_the_image_user_without_capabilities(self):
        agent = self.agent_a.pid()
        workers = lab.children(agent)
        self.assertTrue(workers, "the agent in the container has no probe worker")
        for pid in [agent] + workers:
            status = proc_status(pid)
            what = "%s (pid %d)" % (status["Name"], pid)
            self.assertEqual(status["Uid"].split(), [str(IMAGE_UID)] * 4, what)
            self.assertEqual(status["Gid"].split(), [str(IMAGE_UID)] * 4, what)
            self.assertEqual(int(status["CapEff"], 16), 0, what + ": effective capabilities")
            self.assertEqual(int(status["CapPrm"], 16), 0, what + ": permitted capabilities")
            self.assertEqual(status.get("NoNewPrivs"), "1", what)

    def test_3_ucx_probes_over_tcp_between_two_containers(self):
        def missing(samples):
            return [(kind, rail) for kind in UCX_KINDS for rail in lab.RAILS
                    if not all_ones(find(samples, "rail_probe_success", kind=kind, rail=rail))]
        samples = []

        def all_succeeded():
            samples[:] = self.agent_a.samples()
            return not missing(samples)
        lab.wait_until(all_succeeded, PROBE_TIMEOUT, 1.0)
        self.assertEqual(missing(samples), [], "UCX probes without a successful run:\n%s\n"
                         "a:\n%s\nb:\n%s" % (
                             "\n".join(line for line in (self.agent_a.scrape() or "").splitlines()
                                       if line.startswith("rail_probe_success")),
                             self.agent_a.logs()[-3000:], self.agent_b.logs()[-3000:]))
        for kind in UCX_KINDS:
            for rail, (netdev, _) in lab.RAILS.items():
                transports = find(samples, "rail_probe_transport_info", kind=kind, rail=rail,
                                  transport="tcp", device=netdev)
                self.assertTrue(all_ones(transports),
                                "%s on %s did not report tcp over %s" % (kind, rail, netdev))
        rates = find(samples, "rail_probe_throughput_bytes_per_second", kind="ucx_throughput")
        self.assertTrue(rates and all(rate > 0 for rate in rates), rates)
        print("ucx_throughput between the containers, Gbit/s: %s" % ", ".join(
            "%.2f" % (rate * 8e-9) for rate in rates))

    def test_4_run_time_modules_resolve_inside_the_image(self):
        # What is opened at run time, which ldd of the agent cannot show: each must be in the
        # image with every library it needs. The image's own loader lists them, chrooted into the
        # image's files, so that nothing resolves from this machine.
        triplet = "/usr/lib/" + MULTIARCH
        modules = (sorted(glob.glob(triplet + "/libibverbs/*.so")) +
                   sorted(glob.glob(triplet + "/ucx/*.so.[0-9]")) +
                   [triplet + "/libnss_files.so.2", triplet + "/libnss_dns.so.2",
                    triplet + "/libcurl.so.4",  # the Kubernetes discovery opens it
                    "/usr/lib/rail_exporter/rail_exporter_probe_worker"])
        drivers = [os.path.basename(path) for path in glob.glob("/etc/libibverbs.d/*.driver")]
        self.assertTrue(drivers, "this machine has no libibverbs provider to compare with")
        root = podman("image", "mount", self.image).stdout.strip()
        try:
            self.assertEqual(sorted(os.listdir(root + "/etc/libibverbs.d")), sorted(drivers))
            unresolved = {}
            for module in modules:
                listed = subprocess.run(["chroot", root, LOADER, "--list", module],
                                        capture_output=True, text=True, timeout=30)
                if listed.returncode != 0 or "not found" in listed.stdout:
                    unresolved[module] = last_line(listed.stdout + listed.stderr)
            self.assertEqual(unresolved, {}, "modules that would not load in the image")
        finally:
            podman("image", "unmount", self.image, check=False)
        print("%d run-time modules load inside the image" % len(modules))

    @contextlib.contextmanager
    def solo_container(self, **kwargs):
        """The image alone in a network namespace of its own (loopback only), serving; removed
        with the namespace afterwards. kwargs: Container's."""
        subprocess.run(["ip", "netns", "del", SOLO_NS], capture_output=True)  # a crashed run's
        subprocess.run(["ip", "netns", "add", SOLO_NS], check=True)
        container = None
        try:
            subprocess.run(["ip", "-n", SOLO_NS, "link", "set", "lo", "up"], check=True)
            container = Container(self.image, "rail-image-test-solo-%d" % os.getpid(), SOLO_NS,
                                  **kwargs)
            container.wait_until_serving()
            yield container
        finally:
            if container:
                container.stop()
            subprocess.run(["ip", "netns", "del", SOLO_NS], capture_output=True)

    def test_5_image_as_shipped_serves_without_a_secret(self):
        # Its own command and example configuration, nothing mounted: no peer traffic, but
        # /metrics, and ready.
        with self.solo_container() as container:
            samples = container.samples()
            self.assertEqual(find(samples, "rail_exporter_peer_secret_loaded"), [0.0])
            self.assertEqual(container.scrape("/-/ready"), "OK\n")
            self.assertIn("secret", container.logs())

    def test_6_tls_in_the_image(self):
        # A scrape over TLS in the image: the OpenSSL the agent links (ldd's closure) is there and
        # serves the handshake.
        tls = os.path.join(self.lab.tmp, "tls")
        os.mkdir(tls, 0o755)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-keyout", os.path.join(tls, "key.pem"),
                        "-out", os.path.join(tls, "cert.pem")], check=True, capture_output=True,
                       timeout=60)
        os.chmod(os.path.join(tls, "key.pem"), 0o644)  # for the image's user; a test key
        with open(os.path.join(tls, "web.yml"), "w") as handle:
            handle.write("tls_server_config:\n  cert_file: /tls/cert.pem\n"
                         "  key_file: /tls/key.pem\n")
        with self.solo_container(volumes=[(tls, "/tls")], https=True,
                                 args=["--config.file=" + CONFIG_PATH,
                                       "--web.config.file=/tls/web.yml"]) as container:
            self.assertEqual(len(find(container.samples(), "rail_exporter_build_info")), 1)

    def test_7_image_size(self):
        size = int(podman("image", "inspect", "--format", "{{.Size}}", self.image).stdout)
        self.assertGreater(size, 0)
        print("image %s: %d bytes (%.1f MB)" % (self.image, size, size / 1e6))


def main():
    global BUILD_DIR
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--build-dir", default=BUILD_DIR)
    args, rest = parser.parse_known_args(sys.argv[1:])
    BUILD_DIR = os.path.abspath(args.build_dir)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
