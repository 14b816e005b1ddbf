#!/usr/bin/python3
"""deploy/kubernetes/: the manifests agree with each other, with the agent and with the published
schemas.

* Schemas: tests/kubernetes/validate_manifests.js gives every document to the model class of its
  apiVersion/kind from npm kubernetes-models (Kubernetes' OpenAPI schemas) and
  @kubernetes-models/prometheus-operator (the operator's CRDs), pinned in tests/kubernetes; a
  kind neither knows fails. The DaemonSet is validated again with each `# >>> optional: NAME`
  block turned on, and broken copies (a wrong type, a missing required field, a bad duration, an
  unknown kind) must fail. Needs node and npm (Debian: nodejs, npm); that part skips without
  them and runs `npm ci` there when node_modules is missing or stale.
* Consistency (python3-yaml only): kustomization.yaml lists every manifest but the Secret
  placeholder, whose value is empty; the DaemonSet's flags are the agent's (`--help`), its
  mounts are the paths the flags and the ConfigMap's configuration name, its ports and probes
  are the Service's and the health endpoints, the security settings docs/deploy.md explains are
  all there, RDMA comes from a device plugin and GPUs only from an optional block; the Role
  grants only the EndpointSlice list the fleet discovery makes; the ServiceMonitor scrapes the
  Service's metrics port as job rail_exporter (what rail_rules.yml's alerts look for).
* The PrometheusRule equals what deploy/kubernetes/generate_prometheusrule.py writes from
  deploy/prometheus/rail_rules.yml, and a changed rule file changes the output.
* The agent on the ConfigMap's configuration (on a fixture tree) lists the Service's
  EndpointSlices from a stand-in API server, as the EndpointSlice controller would make them from
  service.yaml and the DaemonSet's ports, keeps the ready endpoints and finds itself among them.
"""

import copy
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import npm_pins  # noqa: E402

MANIFESTS = os.path.join(harness.REPO, "deploy", "kubernetes")
PACKAGE_DIR = os.path.join(harness.REPO, "tests", "kubernetes")
VALIDATOR = os.path.join(PACKAGE_DIR, "validate_manifests.js")
GENERATOR = os.path.join(MANIFESTS, "generate_prometheusrule.py")
RULES = os.path.join(harness.REPO, "deploy", "prometheus", "rail_rules.yml")
NAMESPACE = "rail-exporter"
NOT_APPLIED = {"secret.yaml"}  # created with kubectl create secret (secret.yaml says why)
NODE_TIMEOUT = 120.0  # seconds for one validator run
OPTIONAL_BEGIN = re.compile(r"^\s*# >>> optional: (?P<name>[a-z-]+)\s*$")
OPTIONAL_END = re.compile(r"^\s*# <<< optional: (?P<name>[a-z-]+)\s*$")

NODE = shutil.which("node")
NPM = shutil.which("npm")


def manifest_files():
    return sorted(f for f in os.listdir(MANIFESTS) if f.endswith(".yaml"))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def load_documents(path):
    return [d for d in yaml.safe_load_all(read(path)) if d is not None]


def optional_blocks(text):
    """The names of the optional blocks of a manifest, in order of first appearance."""
    names = []
    for line in text.splitlines():
        match = OPTIONAL_BEGIN.match(line)
        if match and match.group("name") not in names:
            names.append(match.group("name"))
    return names


def with_blocks(text, names):
    """text with the lines of the optional blocks `names` uncommented (as a user would)."""
    out, active = [], None
    for line in text.splitlines(keepends=True):
        begin, end = OPTIONAL_BEGIN.match(line), OPTIONAL_END.match(line)
        if begin:
            if active is not None:
                raise AssertionError("optional block %s opens inside %s" % (begin.group(1), active))
            active = begin.group("name")
        elif end:
            if end.group("name") != active:
                raise AssertionError("optional block end %s does not close %s"
                                     % (end.group("name"), active))
            active = None
        elif active in names:
            uncommented = re.sub(r"^(\s*)# ?", r"\1", line, count=1)
            if uncommented == line:
                raise AssertionError("line of optional block %s is not commented: %r"
                                     % (active, line))
            line = uncommented
        out.append(line)
    if active is not None:
        raise AssertionError("optional block %s is never closed" % active)
    return "".join(out)


def by_kind(documents):
    return {(d["kind"], d["metadata"]["name"]): d for d in documents}


def all_objects():
    objects = {}
    for name in manifest_files():
        if name == "kustomization.yaml":
            continue
        for document in load_documents(os.path.join(MANIFESTS, name)):
            objects[(document["kind"], document["metadata"]["name"])] = document
    return objects


class KustomizationTest(unittest.TestCase):
    def test_lists_every_manifest_but_the_secret(self):
        kustomization = load_documents(os.path.join(MANIFESTS, "kustomization.yaml"))[0]
        listed = kustomization["resources"]
        self.assertEqual(len(listed), len(set(listed)), listed)
        expected = set(manifest_files()) - {"kustomization.yaml"} - NOT_APPLIED
        self.assertEqual(set(listed), expected)
        self.assertNotIn("namespace", kustomization, "each manifest names its namespace itself, "
                         "so that kubectl apply -f works as well")

    def test_every_object_is_in_the_namespace(self):
        for (kind, name), document in all_objects().items():
            with self.subTest(kind=kind, name=name):
                if kind == "Namespace":
                    self.assertEqual(name, NAMESPACE)
                else:
                    self.assertEqual(document["metadata"].get("namespace"), NAMESPACE)
                self.assertEqual(document["metadata"]["labels"]["app.kubernetes.io/name"],
                                 "rail-exporter")

    def test_the_secret_placeholder_holds_no_secret(self):
        (secret,) = load_documents(os.path.join(MANIFESTS, "secret.yaml"))
        self.assertEqual(secret["kind"], "Secret")
        self.assertNotIn("data", secret)
        self.assertEqual(secret["stringData"], {"secret": ""})


class KustomizeBuildTest(unittest.TestCase):
    """`kubectl kustomize` (where a kubectl with kustomize v4 or later is installed; Debian 12's
    kubernetes-client is 1.20, too old) renders exactly the listed manifests."""

    def test_kustomize_renders_the_listed_objects(self):
        kubectl = shutil.which("kubectl")
        if not kubectl:
            self.skipTest("no kubectl on PATH (Debian 12's kubernetes-client 1.20 is too old)")
        version = subprocess.run([kubectl, "version", "--client"], capture_output=True,
                                 text=True, timeout=60, stdin=subprocess.DEVNULL)
        match = re.search(r"Kustomize Version: v(\d+)", version.stdout)
        if not match or int(match.group(1)) < 4:
            self.skipTest("kubectl without kustomize v4 or later:\n" + version.stdout)
        result = subprocess.run([kubectl, "kustomize", MANIFESTS], capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 0, result.stderr)
        rendered = by_kind(d for d in yaml.safe_load_all(result.stdout) if d)
        expected = {key: value for key, value in all_objects().items()
                    if key != ("Secret", "rail-exporter-peer")}
        self.assertEqual(rendered, expected)


class PrometheusRuleTest(unittest.TestCase):
    def test_committed_file_is_the_generators_output(self):
        result = subprocess.run([sys.executable, GENERATOR, "--check"], capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_groups_equal_rail_rules(self):
        (rule,) = load_documents(os.path.join(MANIFESTS, "prometheusrule.yaml"))
        self.assertEqual(rule["spec"]["groups"], yaml.safe_load(read(RULES))["groups"])

    def test_a_changed_rule_changes_the_output(self):
        # The --check above must be able to fail: render a rule file with one threshold moved.
        sys.path.insert(0, MANIFESTS)
        try:
            import generate_prometheusrule as generator
        finally:
            sys.path.remove(MANIFESTS)
        rules = read(RULES)
        changed = rules.replace("for: 5m", "for: 6m", 1)
        self.assertNotEqual(changed, rules)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rail_rules.yml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(changed)
            self.assertNotEqual(generator.render(path), generator.render(RULES))
        self.assertEqual(generator.render(RULES), read(generator.OUTPUT))


class ConsistencyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objects = all_objects()
        cls.daemonset = cls.objects[("DaemonSet", "rail-exporter")]
        cls.pod = cls.daemonset["spec"]["template"]["spec"]
        (cls.container,) = cls.pod["containers"]
        cls.service = cls.objects[("Service", "rail-exporter")]
        cls.config = yaml.safe_load(
            cls.objects[("ConfigMap", "rail-exporter")]["data"]["rail_exporter.yml"])

    def args(self):
        return dict(a[2:].split("=", 1) for a in self.container["args"])

    def mount_of(self, volume_name):
        (mount,) = [m for m in self.container["volumeMounts"] if m["name"] == volume_name]
        return mount

    def volume(self, name):
        (volume,) = [v for v in self.pod["volumes"] if v["name"] == name]
        return volume

    def test_flags_are_the_agents(self):
        harness.require_executable(self, harness.BINARY)
        result = harness.run_to_exit([harness.BINARY, "--help"])
        self.assertEqual(result.returncode, 0, result.stderr)
        for flag in self.args():
            with self.subTest(flag=flag):
                self.assertIn("--" + flag + " ", result.stdout)

    def test_namespace_admits_host_network_and_host_paths(self):
        labels = self.objects[("Namespace", NAMESPACE)]["metadata"]["labels"]
        self.assertEqual(labels["pod-security.kubernetes.io/enforce"], "privileged")

    def test_host_network_and_cluster_dns(self):
        self.assertIs(self.pod["hostNetwork"], True)
        self.assertEqual(self.pod["dnsPolicy"], "ClusterFirstWithHostNet")

    def test_sysfs_and_procfs_are_the_hosts_read_only(self):
        args = self.args()
        for flag, host_path in (("path.sysfs", "/sys"), ("path.procfs", "/proc")):
            with self.subTest(flag=flag):
                (mount,) = [m for m in self.container["volumeMounts"]
                            if m["mountPath"] == args[flag]]
                self.assertIs(mount["readOnly"], True)
                self.assertEqual(self.volume(mount["name"])["hostPath"]["path"], host_path)

    def test_no_host_path_but_sys_and_proc(self):
        paths = [v["hostPath"]["path"] for v in self.pod["volumes"] if "hostPath" in v]
        self.assertEqual(sorted(paths), ["/proc", "/sys"])

    def test_configuration_and_secret_are_where_the_agent_reads_them(self):
        args = self.args()
        directory, config_name = os.path.split(args["config.file"])
        secret_directory, secret_name = os.path.split(self.config["responder"]["secret_file"])
        self.assertEqual(secret_directory, directory)
        mount = [m for m in self.container["volumeMounts"] if m["mountPath"] == directory]
        self.assertEqual(len(mount), 1, "one volume at %s" % directory)
        self.assertIs(mount[0]["readOnly"], True)
        projected = self.volume(mount[0]["name"])["projected"]
        self.assertEqual(projected["defaultMode"], 0o440)
        paths = {}
        for source in projected["sources"]:
            (kind,) = [k for k in ("configMap", "secret") if k in source]
            for item in source[kind]["items"]:
                paths[item["path"]] = (kind, source[kind]["name"], item["key"])
        self.assertEqual(paths[config_name], ("configMap", "rail-exporter", config_name))
        self.assertEqual(paths[secret_name], ("secret", "rail-exporter-peer", "secret"))
        self.assertIn(("Secret", "rail-exporter-peer"),
                      by_kind(load_documents(os.path.join(MANIFESTS, "secret.yaml"))))

    def test_security_context(self):
        pod = self.pod["securityContext"]
        self.assertIs(pod["runAsNonRoot"], True)
        self.assertEqual((pod["runAsUser"], pod["runAsGroup"], pod["fsGroup"]),
                         (9840, 9840, 9840))
        self.assertEqual(pod["seccompProfile"], {"type": "RuntimeDefault"})
        container = self.container["securityContext"]
        self.assertIs(container["allowPrivilegeEscalation"], False)
        self.assertIs(container["readOnlyRootFilesystem"], True)
        self.assertEqual(container["capabilities"], {"drop": ["ALL"]})
        self.assertNotIn("privileged", container)
        self.assertNotIn("hostPID", self.pod)
        self.assertNotIn("hostIPC", self.pod)

    def test_devices_come_from_device_plugins(self):
        limits = self.container["resources"]["limits"]
        self.assertEqual(limits["rdma/rdma_shared_device_a"], 1)
        self.assertNotIn("nvidia.com/gpu", limits, "GPUs only through the optional block")
        text = read(os.path.join(MANIFESTS, "daemonset.yaml"))
        gpu = yaml.safe_load(with_blocks(text, ["gpu"]))
        self.assertEqual(gpu["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
                         ["nvidia.com/gpu"], 1)

    def test_resources(self):
        resources = self.container["resources"]
        self.assertIn("cpu", resources["requests"])
        self.assertIn("memory", resources["requests"])
        self.assertIn("memory", resources["limits"])
        self.assertNotIn("cpu", resources["limits"], "a CPU quota would throttle the probes")

    def test_every_node_and_rolling_update(self):
        self.assertEqual(self.pod["tolerations"], [{"operator": "Exists"}])
        strategy = self.daemonset["spec"]["updateStrategy"]
        self.assertEqual(strategy["type"], "RollingUpdate")
        self.assertEqual(strategy["rollingUpdate"]["maxUnavailable"], "10%")
        self.assertIn("terminationGracePeriodSeconds", self.pod)

    def test_ports_probes_and_service(self):
        ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        self.assertEqual(ports, {"metrics": 9840, "responder": 9841})
        self.assertEqual(self.args()["web.listen-address"], ":%d" % ports["metrics"])
        self.assertEqual(self.config["responder"]["listen_address"], ":%d" % ports["responder"])
        for probe, path in (("livenessProbe", "/-/healthy"), ("readinessProbe", "/-/ready")):
            with self.subTest(probe=probe):
                self.assertEqual(self.container[probe]["httpGet"]["path"], path)
                self.assertEqual(self.container[probe]["httpGet"]["port"], "metrics")
        spec = self.service["spec"]
        self.assertEqual(spec["clusterIP"], "None")
        self.assertEqual(spec["selector"],
                         self.daemonset["spec"]["template"]["metadata"]["labels"])
        self.assertEqual({p["name"]: (p["port"], p["targetPort"]) for p in spec["ports"]},
                         {name: (number, name) for name, number in ports.items()})

    def test_fleet_discovers_this_service(self):
        (source,) = self.config["fleet"]["discovery"]["kubernetes"]
        self.assertEqual(source["service"], self.service["metadata"]["name"])
        self.assertNotIn("namespace", source, "the pod's own namespace")
        self.assertIn(source["port_name"], [p["name"] for p in self.service["spec"]["ports"]])

    def test_rbac_allows_only_listing_endpointslices(self):
        role = self.objects[("Role", "rail-exporter-discovery")]
        self.assertEqual(role["rules"], [{"apiGroups": ["discovery.k8s.io"],
                                          "resources": ["endpointslices"], "verbs": ["list"]}])
        binding = self.objects[("RoleBinding", "rail-exporter-discovery")]
        self.assertEqual(binding["roleRef"]["name"], "rail-exporter-discovery")
        self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount",
                                                "name": self.pod["serviceAccountName"],
                                                "namespace": NAMESPACE}])
        self.assertIn(("ServiceAccount", self.pod["serviceAccountName"]), self.objects)

    def test_service_monitor_scrapes_the_metrics_port_as_the_rules_job(self):
        monitor = self.objects[("ServiceMonitor", "rail-exporter")]
        self.assertEqual(monitor["spec"]["selector"]["matchLabels"],
                         self.service["metadata"]["labels"])
        (endpoint,) = monitor["spec"]["endpoints"]
        self.assertEqual(endpoint["port"], "metrics")
        job = [r for r in endpoint["relabelings"] if r.get("targetLabel") == "job"]
        self.assertEqual([r["replacement"] for r in job], ["rail_exporter"])
        self.assertIn('up{job="rail_exporter"}', read(RULES))
        self.assertNotIn("PodMonitor", [kind for kind, _ in self.objects],
                         "a PodMonitor beside the ServiceMonitor scrapes every agent twice")

    def test_optional_blocks_are_well_formed(self):
        text = read(os.path.join(MANIFESTS, "daemonset.yaml"))
        names = optional_blocks(text)
        self.assertEqual(sorted(names), ["gpu", "rdma-nodes", "tls", "web-config"])
        everything = yaml.safe_load(with_blocks(text, names))
        container = everything["spec"]["template"]["spec"]["containers"][0]
        self.assertIn("--web.config.file=/etc/rail_exporter/web.yml", container["args"])
        self.assertEqual(container["livenessProbe"]["httpGet"]["scheme"], "HTTPS")


class FakeApiServer:
    """An HTTP stand-in for the API server: answers the EndpointSlice list of one Service with
    the slice the EndpointSlice controller would make for it, and records each request."""

    def __init__(self, slice_):
        self.requests = []
        body = json.dumps({"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1",
                           "metadata": {}, "items": [slice_]}).encode()
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the http.server name)
                requests.append((self.path, self.headers.get("Authorization")))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def endpoint_slice(service, container_ports, endpoints):
    """The slice of `service`: its port names with the container ports their targetPorts name."""
    ports = [{"name": p["name"], "protocol": p["protocol"],
              "port": container_ports[p["targetPort"]]} for p in service["spec"]["ports"]]
    return {"metadata": {"name": service["metadata"]["name"] + "-x1",
                         "namespace": service["metadata"]["namespace"],
                         "labels": {"kubernetes.io/service-name": service["metadata"]["name"]}},
            "addressType": "IPv4", "ports": ports, "endpoints": endpoints}


def endpoint(address, node, ready=True):
    return {"addresses": [address], "conditions": {"ready": ready}, "nodeName": node,
            "targetRef": {"kind": "Pod", "namespace": NAMESPACE, "name": "rail-exporter-" + node}}


class ConfigMapAgentTest(unittest.TestCase):
    """The agent on the ConfigMap's configuration finds the DaemonSet's agents through the
    Service's EndpointSlices, served by a stand-in API server, and itself among them."""

    def test_agent_discovers_the_service_endpoints_and_itself(self):
        harness.require_executable(self, harness.BINARY)
        objects = all_objects()
        config = yaml.safe_load(objects[("ConfigMap", "rail-exporter")]["data"]
                                ["rail_exporter.yml"])
        (container,) = objects[("DaemonSet", "rail-exporter")]["spec"]["template"]["spec"][
            "containers"]
        container_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        # This agent's responder on a free loopback port stands for the node's 9841.
        responder_port = harness.free_port()
        container_ports["responder"] = responder_port
        # Other loopback addresses than the agent's own 127.0.0.1 (an interface address of this
        # machine, so the agent finds itself by it): the agent plans probes of the peer, and
        # those must stay on this machine (nothing answers there).
        peer, not_ready = "127.0.0.2", "127.0.0.3"
        slice_ = endpoint_slice(objects[("Service", "rail-exporter")], container_ports,
                                [endpoint("127.0.0.1", "node-a"), endpoint(peer, "node-b"),
                                 endpoint(not_ready, "node-c", ready=False)])
        trees = dict(harness.fixture_trees())
        with tempfile.TemporaryDirectory() as tmp, FakeApiServer(slice_) as api:
            secret, token = os.path.join(tmp, "secret"), os.path.join(tmp, "token")
            for path, text in ((secret, "0123456789abcdef0123456789abcdef\n"),
                               (token, "service-account-token\n")):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                    f.write(text)
            config["responder"]["secret_file"] = secret
            config["responder"]["listen_address"] = "127.0.0.1:%d" % responder_port
            # What the pod has from its service account: the namespace, the token, the CA.
            (source,) = config["fleet"]["discovery"]["kubernetes"]
            source.update({"namespace": NAMESPACE, "api_server": api.url, "token_file": token,
                           "ca_file": secret, "refresh_interval": "1s"})
            path = os.path.join(tmp, "rail_exporter.yml")
            with open(path, "w", encoding="utf-8") as f:
                yaml.safe_dump(config, f)
            with harness.RailExporter(["--config.file=" + path]
                                      + harness.tree_flags(trees["hgx-8gpu"])) as agent:
                samples = self.wait_for_discovery(agent)
                log = agent.stderr_text()
        source_label = "kubernetes:%s/rail-exporter" % NAMESPACE
        self.assertEqual(samples.get(("rail_fleet_discovery_targets", source_label)), 2.0,
                         "two ready endpoints of three; the agent logged:\n" + log)
        self.assertEqual(samples.get(("rail_fleet_self_found", None)), 1.0,
                         "the agent logged:\n" + log)
        path, authorization = api.requests[0]
        self.assertTrue(path.startswith("/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices?"
                                        % NAMESPACE), path)
        self.assertIn("labelSelector=kubernetes.io%2Fservice-name%3Drail-exporter", path)
        self.assertEqual(authorization, "Bearer service-account-token")

    def wait_for_discovery(self, agent, timeout=15.0):
        deadline = time.monotonic() + timeout
        while True:
            samples = {}
            for line in agent.scrape().splitlines():
                match = re.match(r'^(rail_fleet_discovery_targets|rail_fleet_self_found)'
                                 r'(?:\{source="([^"]*)"\})? (\S+)$', line)
                if match:
                    samples[(match.group(1), match.group(2))] = float(match.group(3))
            if samples.get(("rail_fleet_self_found", None)) == 1.0 or time.monotonic() > deadline:
                return samples
            time.sleep(0.2)


@unittest.skipUnless(NODE and NPM, "needs node and npm (Debian packages nodejs, npm; "
                                   "scripts/install-deps installs them)")
class SchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        error = npm_pins.ensure_packages(PACKAGE_DIR)
        if error:
            raise AssertionError(error)
        cls.workdir = tempfile.mkdtemp(prefix="rail-k8s-manifests-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def validate(self, paths):
        result = subprocess.run([NODE, VALIDATOR] + list(paths), cwd=PACKAGE_DIR,
                                capture_output=True, text=True, timeout=NODE_TIMEOUT,
                                stdin=subprocess.DEVNULL)
        try:
            report = json.loads(result.stdout)
        except ValueError:
            self.fail("validator (rc=%d) printed no report:\n%s%s"
                      % (result.returncode, result.stdout, result.stderr))
        self.assertEqual(result.returncode, 1 if any(d["errors"] for d in report["documents"])
                         else 0, result.stderr)
        return report["documents"]

    def write(self, name, text):
        path = os.path.join(self.workdir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_every_manifest_is_valid(self):
        files = [os.path.join(MANIFESTS, f) for f in manifest_files() if f != "kustomization.yaml"]
        documents = self.validate(files)
        for document in documents:
            print("%s[%d] %s %s: %s" % (os.path.basename(document["file"]), document["index"],
                                        document["kind"], document["name"],
                                        document["errors"] or "valid"))
        self.assertEqual([d for d in documents if d["errors"]], [])
        kinds = sorted(d["kind"] for d in documents)
        self.assertEqual(kinds, sorted(kind for kind, _ in all_objects()))

    def test_optional_blocks_turned_on_are_valid(self):
        text = read(os.path.join(MANIFESTS, "daemonset.yaml"))
        names = optional_blocks(text)
        variants = [[name] for name in names] + [names]
        paths = [self.write("daemonset-%s.yaml" % "+".join(v), with_blocks(text, v))
                 for v in variants]
        documents = self.validate(paths)
        self.assertEqual(len(documents), len(variants))
        self.assertEqual([d for d in documents if d["errors"]], [])

    def test_broken_manifests_fail(self):
        """The check bites: each broken copy fails, with an error naming what is wrong."""
        objects = all_objects()

        def broken(key, mutate):
            document = copy.deepcopy(objects[key])
            mutate(document)
            return document

        def pod(d):
            return d["spec"]["template"]["spec"]

        def set_key(obj, key, value):
            obj[key] = value

        ds, sm = ("DaemonSet", "rail-exporter"), ("ServiceMonitor", "rail-exporter")
        cases = {
            "selector_missing": (broken(ds, lambda d: d["spec"].pop("selector")), "selector"),
            "host_network_string": (broken(ds, lambda d: set_key(pod(d), "hostNetwork", "true")),
                                    "hostNetwork"),
            "container_port_string": (broken(ds, lambda d: set_key(
                pod(d)["containers"][0]["ports"][0], "containerPort", "9840")), "containerPort"),
            "run_as_user_string": (broken(ds, lambda d: set_key(
                pod(d)["securityContext"], "runAsUser", "rail_exporter")), "runAsUser"),
            "scrape_interval_unparsable": (broken(sm, lambda d: set_key(
                d["spec"]["endpoints"][0], "interval", "15 seconds")), "interval"),
            "rule_without_expr": (broken(("PrometheusRule", "rail-exporter"), lambda d: d["spec"]
                                         ["groups"][0]["rules"][0].pop("expr")), "expr"),
            "role_verbs_string": (broken(("Role", "rail-exporter-discovery"), lambda d: set_key(
                d["rules"][0], "verbs", "list")), "verbs"),
            "unknown_kind": ({"apiVersion": "kustomize.config.k8s.io/v1beta1",
                              "kind": "Kustomization", "metadata": {"name": "x"}}, "no schema"),
            "unknown_api_version": (broken(ds, lambda d: set_key(d, "apiVersion", "apps/v2")),
                                    "no schema"),
        }
        paths = [self.write("broken-%s.yaml" % name, yaml.safe_dump(document))
                 for name, (document, _) in sorted(cases.items())]
        documents = self.validate(paths)
        self.assertEqual(len(documents), len(cases))
        for (name, (_, expected)), document in zip(sorted(cases.items()), documents):
            with self.subTest(variant=name):
                self.assertNotEqual(document["errors"], [], "the broken copy passed")
                self.assertIn(expected, " ".join(document["errors"]))


if __name__ == "__main__":
    harness.main()
