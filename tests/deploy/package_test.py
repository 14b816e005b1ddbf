"""The Debian package, installed and purged on this machine: `apt-get install ./rail-exporter_*.deb`
puts every file where docs/deploy.md says, creates the rail_exporter user, marks the
configuration as conffiles and enables the unit; the installed agent runs as that user with the
installed configuration, finds its probe worker and serves /metrics; `dpkg --purge` leaves
nothing behind but the user (Debian practice).

Root only (it installs a package); skips otherwise. The .deb: --deb (or $RAIL_DEB), else
`scripts/package --from-build` on --build-dir (the build ctest runs from): cpack on what is
already built.
"""

import grp
import os
import pwd
import re
import shutil
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402

PACKAGE = "rail-exporter"
USER = harness.PACKAGE_USER
AGENT = "/usr/bin/rail_exporter"
CONFIG = "/etc/rail_exporter/rail_exporter.yml"
SECRET = "/etc/rail_exporter/secret"
DEFAULTS = "/etc/default/rail-exporter"
UNIT = "/lib/systemd/system/rail-exporter.service"
WANTS = "/etc/systemd/system/multi-user.target.wants/rail-exporter.service"
INSTALLED = [
    AGENT,
    "/usr/lib/rail_exporter/rail_exporter_probe_worker",
    CONFIG,
    DEFAULTS,
    UNIT,
    "/usr/share/rail_exporter/prometheus/rail_rules.yml",
    "/usr/share/rail_exporter/prometheus/prometheus.example.yml",
    "/usr/share/doc/rail-exporter/copyright",
    "/usr/share/doc/rail-exporter/changelog.gz",
]
# What purge must leave no trace of.
GONE_AFTER_PURGE = ["/etc/rail_exporter", DEFAULTS, "/usr/lib/rail_exporter",
                    "/usr/share/rail_exporter", "/usr/share/doc/rail-exporter", AGENT, UNIT,
                    WANTS, "/etc/systemd/system/rail-exporter.service",
                    "/var/lib/systemd/deb-systemd-helper-enabled/rail-exporter.service.dsh-also",
                    "/var/lib/systemd/deb-systemd-helper-masked/rail-exporter.service"]
APT_TIMEOUT = 300  # seconds for apt-get to install the package and what it lacks
DPKG_LOCK_WAIT = "DPkg::Lock::Timeout=120"


def run(argv, timeout=120, check=True, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (" ".join(argv), result.returncode,
                                                     result.stdout, result.stderr))
    return result


def installed(package):
    result = run(["dpkg-query", "-W", "-f=${Status}", package], check=False)
    return result.returncode == 0 and "install ok installed" in result.stdout


def user_exists():
    try:
        pwd.getpwnam(USER)
        return True
    except KeyError:
        return False


def build_deb():
    """The .deb to test: --deb / $RAIL_DEB, else `scripts/package --from-build` on the build
    directory (cpack on what is already built)."""
    deb = harness.OPTIONS.get("deb") or os.environ.get("RAIL_DEB")
    if deb:
        return os.path.abspath(deb)
    build = harness.OPTIONS.get("build-dir")
    if not build:
        raise unittest.SkipTest("no --deb, $RAIL_DEB or --build-dir")
    result = run([os.path.join(harness.REPO, "scripts", "package"), "--from-build", build],
                 timeout=600)
    return result.stdout.splitlines()[-1]


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("installs a Debian package: root only")
        for tool in ("dpkg", "apt-get", "setpriv"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest("no %s" % tool)
        cls.started = time.monotonic()
        cls.directory = tempfile.mkdtemp(prefix="rail-package-")
        os.chmod(cls.directory, 0o755)  # the service user reads the test's configuration here
        cls.deb = build_deb()
        if installed(PACKAGE):  # left by an earlier run
            run(["dpkg", "--purge", PACKAGE])
        cls.user_existed = user_exists()

    @classmethod
    def tearDownClass(cls):
        if installed(PACKAGE):
            run(["dpkg", "--purge", PACKAGE], check=False)
        if not cls.user_existed and user_exists():
            run(["userdel", USER], check=False)
        shutil.rmtree(cls.directory, ignore_errors=True)
        print("package test: %.0f s" % (time.monotonic() - cls.started))

    def test_lintian_findings(self):
        """Reported, not asserted (lintian is not in scripts/install-deps: it is optional)."""
        if shutil.which("lintian") is None:
            self.skipTest("no lintian")
        result = run(["lintian", "--tag-display-limit", "0", self.deb], check=False, timeout=120)
        findings = [line for line in (result.stdout + result.stderr).splitlines()
                    if re.match(r"^[EWIP]: ", line)]
        print("lintian: %d finding(s)%s" % (len(findings), "".join("\n  " + f for f in findings)))

    def test_depends_on_what_is_opened_at_run_time(self):
        """dpkg-shlibdeps sees only what the two ELF files link; what they open at run time is
        named by hand (cmake/package.cmake): libcurl4 among it, since the agent no longer links
        libcurl."""
        depends = run(["dpkg-deb", "-f", self.deb, "Depends"]).stdout
        names = {re.split(r"[ (]", item.strip())[0] for item in depends.split(",")}
        for package in ("ibverbs-providers", "libucx0", "libcurl4", "libssl3"):
            self.assertIn(package, names, depends)
        self.assertFalse(any(name.startswith("libcurl3") for name in names), depends)

    def test_install_run_purge(self):
        # Only the package's dependencies, not its recommendations (rdma-core would stay).
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "-o", DPKG_LOCK_WAIT,
             self.deb], timeout=APT_TIMEOUT, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        self.assertTrue(installed(PACKAGE))
        with self.subTest("layout"):
            self.check_layout()
        with self.subTest("user"):
            self.check_user()
        with self.subTest("conffiles"):
            conffiles = run(["dpkg-query", "-W", "-f=${Conffiles}", PACKAGE]).stdout
            self.assertIn(CONFIG + " ", conffiles)
            self.assertIn(DEFAULTS + " ", conffiles)
        with self.subTest("version"):
            result = run([AGENT, "--version"])
            self.assertIn("0.1.0", result.stdout + result.stderr)
        with self.subTest("without the secret"):
            self.check_without_secret()
        with self.subTest("serving"):
            self.check_serving()
        with self.subTest("TLS"):
            self.check_tls()
        with self.subTest("removed, then installed again"):
            self.check_remove_and_reinstall()
        run(["dpkg", "--purge", PACKAGE])
        with self.subTest("purged"):
            self.assertFalse(installed(PACKAGE))
            left = [path for path in GONE_AFTER_PURGE if os.path.lexists(path)]
            self.assertEqual(left, [], "left behind by purge")
            self.assertTrue(user_exists(), "the user stays after purge (Debian practice)")

    def check_tls(self):
        """--web.config.file with TLS, as the service user: the endpoint answers over TLS, with
        the OpenSSL the agent links (libssl.so.3, from libssl3); nothing opens the unversioned
        names only libssl-dev provides (which the build machine has)."""
        if shutil.which("openssl") is None:
            self.skipTest("no openssl")
        key, crt = (os.path.join(self.directory, name) for name in ("tls.key", "tls.crt"))
        run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1"])
        web = os.path.join(self.directory, "web.yml")
        with open(web, "w", encoding="utf-8") as out:
            out.write("tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (crt, key))
        for path in (key, crt, web):
            os.chmod(path, 0o644)  # the test's throwaway key, read by the service user
        config = os.path.join(self.directory, "rail_exporter.yml")  # check_serving's
        agent = harness._Process(harness.as_user(USER) + [
            "env", "LD_DEBUG=files", AGENT, "--config.file=" + config,
            "--web.config.file=" + web, "--web.listen-address=127.0.0.1:0"], "rail_exporter")
        self.addCleanup(agent.stop)
        port = int(agent.wait_for_line(harness.LISTENING).group(1))
        context = ssl.create_default_context(cafile=crt)
        context.check_hostname = False
        status, body, _ = harness.http_get("https://127.0.0.1:%d/metrics" % port,
                                           context=context)
        self.assertEqual(status, 200)
        self.assertIn("rail_exporter_build_info", body)
        # OpenSSL is linked (libssl.so.3 at start), never opened by an unversioned name that only
        # the development package provides.
        log = agent.stderr_text()
        self.assertRegex(log, r"file=libssl\.so\.3 \[0\];\s+needed by")
        for name in ("libssl.so", "libcrypto.so"):
            self.assertNotRegex(log, r"file=%s \[" % re.escape(name))
        agent.stop()

    def check_remove_and_reinstall(self):
        """Removal keeps the configuration (an edit included) and masks the unit; installing
        again keeps the edit, lifts the mask and enables the unit again."""
        with open(CONFIG, "a", encoding="utf-8") as config:
            config.write("# edited by the package test\n")
        run(["dpkg", "--remove", PACKAGE])
        self.assertFalse(os.path.exists(AGENT))
        self.assertTrue(os.path.exists(CONFIG), "removal keeps conffiles")
        self.assertTrue(os.path.exists(SECRET), "removal keeps the secret")
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "-o", DPKG_LOCK_WAIT,
             "-o", "Dpkg::Options::=--force-confold", self.deb], timeout=APT_TIMEOUT,
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        with open(CONFIG, encoding="utf-8") as config:
            self.assertIn("# edited by the package test", config.read())
        self.assertFalse(os.path.lexists("/etc/systemd/system/rail-exporter.service"),
                         "the mask set on removal is lifted")
        if shutil.which("deb-systemd-helper"):
            self.assertTrue(os.path.islink(WANTS), "enabled again")

    def check_layout(self):
        listed = set(run(["dpkg", "-L", PACKAGE]).stdout.split())
        for path in INSTALLED:
            self.assertTrue(os.path.isfile(path), path)
            self.assertIn(path, listed)
        dashboards = [name for name in os.listdir("/usr/share/rail_exporter/dashboards")
                      if name.endswith(".json")]
        shipped = [name for name in os.listdir(os.path.join(harness.REPO, "dashboards"))
                   if name.endswith(".json")]
        self.assertEqual(sorted(dashboards), sorted(shipped))
        for path in (AGENT, "/usr/lib/rail_exporter/rail_exporter_probe_worker"):
            self.assertTrue(os.access(path, os.X_OK), path)
        # Not one file of the rule tests, and nothing under the build's paths.
        self.assertFalse([p for p in listed if p.endswith("_test.yml")])
        self.assertFalse([p for p in listed if p.startswith(("/usr/local", "/usr/etc"))])
        if shutil.which("deb-systemd-helper"):
            self.assertTrue(os.path.islink(WANTS), "postinst enables the unit")

    def check_user(self):
        user = pwd.getpwnam(USER)
        self.assertLess(user.pw_uid, 1000, "a system user")
        self.assertEqual(grp.getgrgid(user.pw_gid).gr_name, USER)
        self.assertEqual(user.pw_shell, "/usr/sbin/nologin")
        self.assertEqual(user.pw_dir, "/nonexistent")
        config_dir = os.stat("/etc/rail_exporter")
        self.assertEqual((config_dir.st_uid, config_dir.st_gid), (0, user.pw_gid))
        self.assertEqual(stat.S_IMODE(config_dir.st_mode), 0o750)

    def start_agent(self, config):
        agent = harness._Process(
            harness.as_user(USER) + [AGENT, "--config.file=" + config,
                                     "--web.listen-address=127.0.0.1:0"], "rail_exporter")
        self.addCleanup(agent.stop)
        return agent

    def check_without_secret(self):
        """The installed configuration as it is, before the secret is placed: the agent serves
        its inventory, without peer traffic, and says how to place the secret."""
        self.assertFalse(os.path.exists(SECRET), "the package ships no secret")
        agent = self.start_agent(CONFIG)
        port = int(agent.wait_for_line(harness.LISTENING).group(1))
        agent.wait_for_line(r"responder\.secret_file: .*" + re.escape(SECRET) +
                            r".*without peer traffic")
        status, body, _ = harness.http_get("http://127.0.0.1:%d/metrics" % port)
        self.assertEqual(status, 200)
        samples = harness.parse_samples(body)
        self.assertIn("rail_exporter_build_info", samples)
        self.assertEqual(list(samples["rail_exporter_peer_secret_loaded"].values()), [0.0])
        self.assertNotRegex(agent.stderr_text(), r"responder.*listening")
        agent.stop()

    def check_serving(self):
        """The secret placed as docs/deploy.md says; the responder on a port of the test's own."""
        with open(os.open(SECRET, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            out.write("package-test-secret-0123456789abcdef\n")
        user = pwd.getpwnam(USER)
        os.chown(SECRET, 0, user.pw_gid)  # root's, read through the service's group
        os.chmod(SECRET, 0o640)
        with open(CONFIG, encoding="utf-8") as installed_config:
            text = installed_config.read()
        self.assertIn('listen_address: ":9841"', text)
        config = os.path.join(self.directory, "rail_exporter.yml")
        with open(config, "w", encoding="utf-8") as out:
            out.write(text.replace('listen_address: ":9841"',
                                   'listen_address: "127.0.0.1:%d"' % harness.free_port()))
        os.chmod(config, 0o644)
        agent = self.start_agent(config)
        port = int(agent.wait_for_line(harness.LISTENING).group(1))
        agent.wait_for_line(r"probe worker running")  # found in /usr/lib/rail_exporter
        agent.wait_for_line(r"responder.*listening")
        with open("/proc/%d/status" % agent.proc.pid, encoding="ascii") as status_file:
            uids = re.search(r"^Uid:\s+(\d+)", status_file.read(), re.MULTILINE).group(1)
        self.assertEqual(int(uids), user.pw_uid)
        status, body, _ = harness.http_get("http://127.0.0.1:%d/metrics" % port)
        self.assertEqual(status, 200)
        samples = harness.parse_samples(body)
        self.assertIn("rail_exporter_build_info", samples)
        self.assertEqual(list(samples["rail_exporter_peer_secret_loaded"].values()), [1.0])
        # What a load balancer or kubelet asks; ready once the agent has started.
        self.assertEqual(harness.http_get("http://127.0.0.1:%d/-/healthy" % port)[:2],
                         (200, "OK\n"))
        agent.wait_http("http://127.0.0.1:%d/-/ready" % port)
        agent.stop()


if __name__ == "__main__":
    harness.main(path_options=("--deb", "--build-dir"))
