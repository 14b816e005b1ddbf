"""`cmake --install` of the build into a DESTDIR with prefix /usr gives exactly the layout of
docs/deploy.md (cmake/install.cmake, the same rules the package and the image use), no installed
ELF file keeps a run path into the build tree, and the installed agent starts the installed
probe worker from ../lib/rail_exporter/.

No root needed.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness  # noqa: E402

REPO = harness.REPO


def expected_files():
    """The files (relative to DESTDIR) the install rules must give, from the source tree."""
    files = {
        "usr/bin/rail_exporter",
        "usr/lib/rail_exporter/rail_exporter_probe_worker",
        "etc/rail_exporter/rail_exporter.yml",
        "etc/default/rail-exporter",
        "lib/systemd/system/rail-exporter.service",
        "usr/share/doc/rail-exporter/copyright",
        "usr/share/doc/rail-exporter/changelog.gz",
    }
    if os.path.exists(os.path.join(REPO, "docs", "deploy.md")):
        files.add("usr/share/doc/rail-exporter/README.md")
    for path in glob.glob(os.path.join(REPO, "dashboards", "*.json")):
        files.add("usr/share/rail_exporter/dashboards/" + os.path.basename(path))
    for path in glob.glob(os.path.join(REPO, "deploy", "prometheus", "**", "*.yml"),
                          recursive=True):
        relative = os.path.relpath(path, os.path.join(REPO, "deploy", "prometheus"))
        if not relative.endswith("_test.yml"):
            files.add("usr/share/rail_exporter/prometheus/" + relative)
    provisioning = os.path.join(REPO, "deploy", "grafana", "provisioning")
    for root, _, names in os.walk(provisioning):
        for name in names:
            relative = os.path.relpath(os.path.join(root, name), provisioning)
            files.add("usr/share/rail_exporter/grafana/provisioning/" + relative)
    return files


def installed_files(destdir):
    files = set()
    for root, _, names in os.walk(destdir):
        for name in names:
            files.add(os.path.relpath(os.path.join(root, name), destdir))
    return files


class InstallLayoutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build = harness.OPTIONS.get("build-dir")
        if not build:
            raise unittest.SkipTest("no --build-dir")
        cls.destdir = tempfile.mkdtemp(prefix="rail-install-")
        result = subprocess.run(["cmake", "--install", build, "--prefix", "/usr"],
                                env=dict(os.environ, DESTDIR=cls.destdir), capture_output=True,
                                text=True, timeout=120)
        if result.returncode != 0:
            shutil.rmtree(cls.destdir)
            raise AssertionError("cmake --install failed:\n" + result.stdout + result.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.destdir, ignore_errors=True)

    def test_exactly_the_documented_files(self):
        installed = {path for path in installed_files(self.destdir)
                     if path not in ("secret", "test.yml")}  # the next test's own
        self.assertEqual(sorted(installed), sorted(expected_files()))

    def test_no_run_path_into_the_build(self):
        for relative in ("usr/bin/rail_exporter",
                         "usr/lib/rail_exporter/rail_exporter_probe_worker"):
            dynamic = subprocess.run(["readelf", "-d", os.path.join(self.destdir, relative)],
                                     capture_output=True, text=True, timeout=30, check=True)
            self.assertNotRegex(dynamic.stdout, r"\((RUNPATH|RPATH)\)", relative)

    def test_installed_agent_runs_installed_worker(self):
        """With the installed configuration (its secret and port the test's own): the worker runs
        for the responder."""
        agent_path = os.path.join(self.destdir, "usr", "bin", "rail_exporter")
        secret = os.path.join(self.destdir, "secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as out:
            out.write("install-layout-test-secret-0123456789\n")
        with open(os.path.join(self.destdir, "etc", "rail_exporter", "rail_exporter.yml"),
                  encoding="utf-8") as shipped:
            text = shipped.read()
        config = os.path.join(self.destdir, "test.yml")
        with open(config, "w", encoding="utf-8") as out:
            out.write(text.replace("/etc/rail_exporter/secret", secret).replace(
                '":9841"', '"127.0.0.1:%d"' % harness.free_port()))
        tree = os.path.join(harness.FIXTURES, "spark-dual-rail")
        with harness._Process([agent_path, "--web.listen-address=127.0.0.1:0",
                               "--config.file=" + config] + harness.tree_flags(tree),
                              "rail_exporter") as agent:
            worker_pid = int(agent.wait_for_line(r"probe worker running \(pid (\d+)").group(1))
            worker = os.readlink("/proc/%d/exe" % worker_pid)
            self.assertEqual(worker, os.path.join(self.destdir, "usr", "lib", "rail_exporter",
                                                  "rail_exporter_probe_worker"))
            port = int(agent.wait_for_line(harness.LISTENING).group(1))
            status, body, _ = harness.http_get("http://127.0.0.1:%d/metrics" % port)
            self.assertEqual(status, 200)
            self.assertRegex(body, re.compile(r"^rail_exporter_build_info\{", re.MULTILINE))

if __name__ == "__main__":
    harness.main(path_options=("--build-dir",))
