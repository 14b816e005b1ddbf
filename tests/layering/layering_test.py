#!/usr/bin/env python3
"""The layering of docs/architecture.md, held against the code.

Layers come in one order; a layer may use (include, link) only itself and the layers before it:

  base -> sysfs -> nic -> lldp -> inventory -> gpu -> peer -> fleet -> schedule -> probe -> probing
       -> health -> collectors -> web -> agent -> commands -> main

Checked for every file under src/<layer>/ and include/rail/<layer>/, src/main.cc and
tests/unit/<layer>/:
  * `#include "rail/<layer>/..."` names a layer it may use; `#include "<layer>/..."` (a layer's
    private header under src/) names its own layer only;
  * third-party headers that belong to one layer stay there (UCX in probe, CUDA in gpu, Boost in
    web, CLI11 in main, ...);
  * the code is in namespace rail::<layer> (a lower layer's namespace only to forward-declare);
and in src/CMakeLists.txt and tests/CMakeLists.txt every target_link_libraries of a rail_<layer>
library or a unit test binary names only the libraries its layer may link.

The agent layer only composes: its code (src/agent/, include/rail/agent/) starts no thread, reads
no clock (it hands the one it makes to the layers that keep time) and issues no verdict of its
own (health's checks judge; the commands layer reports).

The same test holds the size rule: no file of src/ or include/ over MAX_FILE_LINES lines and no
function over MAX_FUNCTION_LINES (a definition that starts at column 0, as clang-format lays them
out, up to its closing brace at column 0).

Run as `layering_test.py --root <source dir>`; `--check-only` prints the violations without the
unittest wrapper (a person adding an edge sees each one with its file and line).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest

LAYERS = ["base", "sysfs", "nic", "lldp", "inventory", "gpu", "peer", "fleet", "schedule",
          "probe", "probing", "health", "collectors", "web", "agent", "commands"]
MAIN = "main"

# Third-party headers (by include prefix) and libraries (CMake names) that only some layers may
# use. Anything not listed here (the C++ and C libraries, spdlog, fmt, nlohmann/json) is
# available everywhere.
# UCX belongs to the probe layer's UCX half only (PROBE_UCX: src/probe/ucx/, the library
# rail_probe_ucx and the worker executable): the agent process never loads it.
PROBE_UCX = "probe_ucx"
UCX_HALF_DIR = os.path.join("src", "probe", "ucx") + os.sep
WORKER_MAIN = os.path.join("src", "probe_worker_main.cc")
UCX_HALF_TARGETS = {"rail_probe_ucx": "probe", "rail_exporter_probe_worker": "probe"}
EXTERNAL_HEADERS = {
    "ucp/": {PROBE_UCX}, "ucs/": {PROBE_UCX}, "uct/": {PROBE_UCX},
    "cuda": {"gpu"},
    "infiniband/": {PROBE_UCX, "gpu"},
    "boost/": {"web"},  # Beast and Asio: the HTTP endpoint
    "zlib.h": {"web"},  # gzip of the exposition
    "prometheus/": {"collectors", "web", MAIN},
    "yaml-cpp/": {"fleet", "web", "agent"},  # fleet: file_sd files (JSON or YAML)
    "CLI/": {MAIN},
    "openssl/": {"peer", "web"},
    # fleet: DNS discovery, the plan's hash, Kubernetes discovery
    "ares.h": {"fleet"}, "ares_": {"fleet"}, "xxhash.h": {"fleet", "web"}, "curl/": {"fleet"},
    "libmnl/": {"nic"},  # netlink
    "lldpctl.h": {"lldp"}, "lldp-const.h": {"lldp"},  # lldpd's client library
}
EXTERNAL_LIBRARIES = {
    "ucx::": {PROBE_UCX},
    "Boost::": {"web"},
    "ZLIB::": {"web"},
    "prometheus-cpp::": {"collectors", "web"},
    "yaml-cpp": {"fleet", "web", "agent"},
    "CLI11::": {MAIN},
    "OpenSSL::": {"peer", "web"},
    "PkgConfig::IBVERBS": {PROBE_UCX, "gpu"},
    "PkgConfig::CARES": {"fleet"}, "PkgConfig::XXHASH": {"fleet", "web"}, "PkgConfig::CURL": {"fleet"},
    "PkgConfig::MNL": {"nic"},
    "PkgConfig::LLDPCTL": {"lldp"},
}

# What the agent layer never does, each with what gives it away in its code.
AGENT_NEVER = [
    ("starts a thread", re.compile(r"std::j?thread\b|pthread_create|std::async\b")),
    ("reads a clock", re.compile(r"\b(steady_clock|system_clock|high_resolution_clock)::now\b|"
                                 r"(->|\.)(Wall)?Now\(\)|\bsleep_(for|until)\b")),
    ("issues a verdict", re.compile(r"\bCheckResult\b|\bFindingStatus::kFail\b")),
]

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
# A line that can start a function definition at namespace scope.
DEFINITION = re.compile(r"^(?!(namespace|class|struct|enum|union|using|template|typedef|extern|"
                        r"static_assert)\b)[A-Za-z_][^;]*\(")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
NAMESPACE = re.compile(r"^namespace\s+([A-Za-z_][\w:]*)\s*\{")
LINK = re.compile(r"target_link_libraries\(\s*([\w${}]+)(.*?)\)", re.S)


def allowed(layer):
    """Layers `layer` may use, itself included."""
    if layer == MAIN:
        return set(LAYERS)
    return set(LAYERS[:LAYERS.index(layer) + 1])


def source_files(root):
    """(layer, path) of every C++ file the layering governs."""
    for layer in LAYERS:
        for top in (os.path.join(root, "src", layer), os.path.join(root, "include", "rail", layer),
                    os.path.join(root, "tests", "unit", layer)):
            for folder, _, names in os.walk(top):
                for name in sorted(names):
                    if name.endswith((".cc", ".h")):
                        yield layer, os.path.join(folder, name)
    main = os.path.join(root, "src", "main.cc")
    if os.path.exists(main):
        yield MAIN, main
    worker_main = os.path.join(root, WORKER_MAIN)
    if os.path.exists(worker_main):
        yield "probe", worker_main


def part_of(root, layer, path):
    """What the third-party rules know a file as: the UCX half of the probe layer, or its layer."""
    relative = os.path.relpath(path, root)
    if relative.startswith(UCX_HALF_DIR) or relative == WORKER_MAIN:
        return PROBE_UCX
    return layer


def include_violations(root, layer, path):
    problems = []
    part = part_of(root, layer, path)
    in_tests = os.path.join(root, "tests") + os.sep in path
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quote, target = match.groups()
            where = "%s:%d" % (os.path.relpath(path, root), number)
            first = target.split("/")[0]
            if quote == '"' and target.startswith("rail/"):
                used = target.split("/")[1]
                if used not in LAYERS:
                    problems.append("%s: %s is not in a layer's folder" % (where, target))
                elif used not in allowed(layer):
                    problems.append("%s: layer %s includes %s (layer %s comes after it)"
                                    % (where, layer, target, used))
            elif quote == '"' and first in LAYERS:
                if first != layer:
                    problems.append("%s: layer %s includes %s, a private header of layer %s"
                                    % (where, layer, target, first))
            elif quote == '"' and first in ("support", "unit") and not in_tests:
                problems.append("%s: production code includes test header %s" % (where, target))
            for prefix, layers in EXTERNAL_HEADERS.items():
                if target.startswith(prefix) and part not in layers:
                    problems.append("%s: %s includes <%s>, which only %s may use"
                                    % (where, part, target, ", ".join(sorted(layers))))
    return problems


def namespace_violations(root, layer, path):
    if layer == MAIN:
        return []
    problems = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            match = NAMESPACE.match(line)
            if not match:
                continue
            name = match.group(1)
            if not name.startswith("rail"):
                continue
            parts = name.split("::")
            # Its own namespace, or a lower layer's for a forward declaration.
            if len(parts) < 2 or parts[1] not in allowed(layer):
                problems.append("%s:%d: namespace %s in layer %s (expected rail::%s)"
                                % (os.path.relpath(path, root), number, name, layer, layer))
    return problems


def link_violations(root, cmake_path):
    """Every target_link_libraries of a layer library or unit test binary in one CMake file."""
    if not os.path.exists(cmake_path):
        return []
    with open(cmake_path, encoding="utf-8") as handle:
        text = re.sub(r"#[^\n]*", "", handle.read())
    problems = []
    for target, arguments in LINK.findall(text):
        part = None
        if target in UCX_HALF_TARGETS:
            layer, part = UCX_HALF_TARGETS[target], PROBE_UCX
        elif target.startswith("rail_") and target[5:] in LAYERS:
            layer = target[5:]
        elif target == "rail_exporter":
            layer = MAIN
        elif target == "${layer}_tests":
            layer = None  # the unit test loop: checked below
        else:
            continue
        for word in arguments.split():
            if word in ("PUBLIC", "PRIVATE", "INTERFACE"):
                continue
            where = "%s: target_link_libraries(%s)" % (os.path.relpath(cmake_path, root), target)
            if layer is None:
                if word.startswith("rail_") and word != "rail_${layer}":
                    problems.append("%s links %s: a unit test binary links its own layer only"
                                    % (where, word))
                continue
            if word == "rail_probe_ucx" and target != "rail_exporter_probe_worker":
                problems.append("%s: %s links rail_probe_ucx: only the probe worker executable "
                                "may load UCX" % (where, target))
            if word.startswith("rail_") and word[5:] in LAYERS and word[5:] not in allowed(layer):
                problems.append("%s: %s links %s (layer %s comes after it)"
                                % (where, target, word, word[5:]))
            for prefix, layers in EXTERNAL_LIBRARIES.items():
                if word.startswith(prefix) and (part or layer) not in layers:
                    problems.append("%s: %s links %s, which only %s may link"
                                    % (where, target, word, ", ".join(sorted(layers))))
    return problems


def agent_violations(root):
    """The agent layer's code that starts a thread, reads a clock or issues a verdict."""
    problems = []
    for layer, path in source_files(root):
        if layer != "agent" or os.path.join(root, "tests") + os.sep in path:
            continue
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                code = line.split("//", 1)[0]
                for what, pattern in AGENT_NEVER:
                    if pattern.search(code):
                        problems.append("%s:%d: the agent %s; it only composes"
                                        % (os.path.relpath(path, root), number, what))
    return problems


def violations(root):
    problems = agent_violations(root)
    for layer, path in source_files(root):
        problems += include_violations(root, layer, path)
        if os.path.join(root, "tests") + os.sep not in path:
            problems += namespace_violations(root, layer, path)
    problems += link_violations(root, os.path.join(root, "src", "CMakeLists.txt"))
    problems += link_violations(root, os.path.join(root, "tests", "CMakeLists.txt"))
    return problems


def function_lengths(lines):
    """(first line, length) of every function definition in clang-formatted C++: at column 0,
    or at column 2 inside a class body, up to its closing brace at the same column."""
    i = 0
    while i < len(lines):
        indent = len(lines[i]) - len(lines[i].lstrip(" "))
        if (indent in (0, 2) and DEFINITION.match(lines[i][indent:]) and
                not lines[i].rstrip().endswith(";") and not lines[i].lstrip().startswith("//")):
            end_of_signature = i
            while (end_of_signature < len(lines) and
                   not lines[end_of_signature].rstrip().endswith(("{", ";"))):
                end_of_signature += 1
            if end_of_signature < len(lines) and lines[end_of_signature].rstrip().endswith("{"):
                closing = (" " * indent + "}", " " * indent + "};")
                close = end_of_signature + 1
                while close < len(lines) and lines[close] not in closing:
                    close += 1
                if close < len(lines):
                    yield i + 1, close - i + 1
                    i = close
        i += 1


def size_violations(root):
    problems = []
    for top in ("src", "include"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    lines = handle.read().split("\n")
                where = os.path.relpath(path, root)
                if len(lines) - 1 > MAX_FILE_LINES:
                    problems.append("%s: %d lines (at most %d)"
                                    % (where, len(lines) - 1, MAX_FILE_LINES))
                for first, length in function_lengths(lines):
                    if length > MAX_FUNCTION_LINES:
                        problems.append("%s:%d: a function of %d lines (at most %d)"
                                        % (where, first, length, MAX_FUNCTION_LINES))
    return problems


# The CUDA loader (src/gpu/driver.cc): only the probe worker may hold it. Its symbols, as
# `nm -C` prints them.
CUDA_LOADER_SYMBOLS = re.compile(r"rail::gpu::(CudaDriver::|ReadDriverReport\()")


def cuda_loader_references(path, undefined=False):
    """The CUDA loader's symbols that `path` (an executable or a static library) defines, or with
    `undefined` refers to."""
    flag = "--undefined-only" if undefined else "--defined-only"
    listing = subprocess.run(["nm", "-C", flag, path], capture_output=True, text=True, check=True)
    return sorted({line.split(None, 2)[-1] for line in listing.stdout.splitlines()
                   if CUDA_LOADER_SYMBOLS.search(line)})


def needed_libraries(path):
    """The NEEDED entries of an ELF file's dynamic section (`readelf -d`)."""
    listing = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", listing.stdout)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


class LayeringTest(unittest.TestCase):
    root = None

    def test_the_tree_keeps_to_the_layer_order(self):
        problems = violations(self.root)
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_files_and_functions_stay_small(self):
        problems = size_violations(self.root)
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_size_rule_measures_functions(self):
        body = "\n".join("  ++x;" for _ in range(MAX_FUNCTION_LINES))
        text = ("namespace rail::base {\n\nint Short(int x) {\n  return x;\n}\n\n"
                "int Long(int x,\n         int y) {\n%s\n  return x + y;\n}\n\n"
                "}  // namespace rail::base\n" % body)
        self.assertEqual(list(function_lengths(text.split("\n"))),
                         [(3, 3), (7, MAX_FUNCTION_LINES + 4)])
        in_class = ("class A {\n public:\n  void Collect() {\n%s\n  }\n};\n" % body)
        self.assertEqual(list(function_lengths(in_class.split("\n"))),
                         [(3, MAX_FUNCTION_LINES + 2)])

    def test_every_layer_folder_is_known(self):
        for top in ("src", os.path.join("include", "rail"), os.path.join("tests", "unit")):
            folder = os.path.join(self.root, top)
            for name in sorted(os.listdir(folder)):
                if os.path.isdir(os.path.join(folder, name)):
                    self.assertIn(name, LAYERS, "%s/%s is not a layer" % (top, name))

    def test_checker_finds_each_kind_of_forbidden_edge(self):
        # The checker itself, on a small tree with one edge of each kind it must refuse.
        with tempfile.TemporaryDirectory() as tree:
            write(os.path.join(tree, "src", "sysfs", "a.cc"),
                  '#include "rail/health/checks.h"\n#include "collectors/families.h"\n'
                  '#include <ucp/api/ucp.h>\nnamespace rail::health {\n}\n')
            write(os.path.join(tree, "src", "peer", "b.cc"),
                  '#include "rail/base/clock.h"\n#include "peer/private.h"\n'
                  'namespace rail::peer {\n}\n')
            write(os.path.join(tree, "src", "CMakeLists.txt"),
                  "target_link_libraries(rail_inventory PUBLIC rail_web)\n"
                  "target_link_libraries(rail_health PRIVATE ucx::ucp)\n"
                  "target_link_libraries(rail_probe PUBLIC rail_peer PRIVATE ucx::ucs)\n"
                  "target_link_libraries(rail_probe_ucx PUBLIC rail_probe PRIVATE ucx::ucp)\n"
                  "target_link_libraries(rail_agent PUBLIC rail_probe rail_probe_ucx)\n")
            write(os.path.join(tree, "src", "probe", "c.cc"),
                  '#include <ucp/api/ucp.h>\nnamespace rail::probe {\n}\n')
            write(os.path.join(tree, "src", "probe", "ucx", "d.cc"),
                  '#include <ucp/api/ucp.h>\nnamespace rail::probe {\n}\n')
            write(os.path.join(tree, "tests", "CMakeLists.txt"),
                  "target_link_libraries(${layer}_tests PRIVATE rail_${layer} rail_agent)\n")
            write(os.path.join(tree, "src", "agent", "e.cc"),
                  "namespace rail::agent {\nvoid F() {\n  std::thread([] {}).detach();\n"
                  "  const auto t = clock_->Now();  // a clock read\n"
                  "  health::CheckResult verdict;\n}\n}  // namespace rail::agent\n")
            write(os.path.join(tree, "src", "commands", "f.cc"),
                  '#include "rail/agent/config.h"\nnamespace rail::commands {\n'
                  "void G() { std::thread([] {}).join(); }\n}  // namespace rail::commands\n")
            problems = "\n".join(violations(tree))
        self.assertIn("layer sysfs includes rail/health/checks.h", problems)
        self.assertIn("private header of layer collectors", problems)
        self.assertIn("<ucp/api/ucp.h>", problems)
        self.assertIn("namespace rail::health in layer sysfs", problems)
        self.assertIn("rail_inventory links rail_web", problems)
        self.assertIn("rail_health links ucx::ucp", problems)
        # UCX stays in the probe layer's UCX half, out of the agent's process.
        self.assertIn("src/probe/c.cc:1: probe includes <ucp/api/ucp.h>", problems)
        self.assertIn("rail_probe links ucx::ucs", problems)
        self.assertIn("rail_agent links rail_probe_ucx", problems)
        self.assertNotIn("src/probe/ucx/d.cc", problems)
        self.assertNotIn("rail_probe_ucx links", problems)
        self.assertIn("links rail_agent: a unit test binary links its own layer only", problems)
        self.assertNotIn("src/peer/b.cc", problems, "allowed edges are not reported")
        self.assertNotIn("rail_probe links rail_peer", problems, "allowed links are not reported")
        # The agent only composes; the commands layer above it may start threads.
        self.assertIn("src/agent/e.cc:3: the agent starts a thread", problems)
        self.assertIn("src/agent/e.cc:4: the agent reads a clock", problems)
        self.assertIn("src/agent/e.cc:5: the agent issues a verdict", problems)
        self.assertNotIn("src/commands/f.cc", problems)


class CudaLoaderTest(unittest.TestCase):
    """Built artifacts (--build-dir): the agent never links the CUDA loader (the worker does),
    nor libcurl."""
    build = None

    def setUp(self):
        if not self.build:
            self.skipTest("no --build-dir given: the built agent cannot be checked")

    def artifact(self, *parts):
        path = os.path.join(self.build, *parts)
        if not os.path.exists(path):
            self.fail("%s was not built" % path)
        return path

    def test_the_agent_does_not_link_the_cuda_loader(self):
        self.assertEqual(cuda_loader_references(self.artifact("src", "rail_exporter")), [])
        for library in ("librail_agent.a", "librail_commands.a"):
            self.assertEqual(cuda_loader_references(self.artifact("src", library),
                                                    undefined=True), [])

    def test_the_check_sees_the_loader_in_the_worker(self):
        self.assertNotEqual(
            cuda_loader_references(self.artifact("src", "rail_exporter_probe_worker")), [])

    def test_the_agent_does_not_link_libcurl(self):
        # The Kubernetes discovery opens libcurl.so.4 at run time (src/fleet/curl_library.h):
        # linked, it maps 27 libraries (GnuTLS, Kerberos, LDAP, ...) into every agent.
        needed = needed_libraries(self.artifact("src", "rail_exporter"))
        self.assertIn("libssl.so.3", needed, "the check reads the NEEDED entries")
        self.assertEqual([name for name in needed if name.startswith("libcurl")], [])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--build-dir")
    parser.add_argument("--check-only", action="store_true")
    args, rest = parser.parse_known_args()
    root = os.path.abspath(args.root)
    CudaLoaderTest.build = os.path.abspath(args.build_dir) if args.build_dir else None
    if args.check_only:
        problems = violations(root)
        print("\n".join(problems) or "layering: no violation")
        return 1 if problems else 0
    LayeringTest.root = root
    return 0 if unittest.main(argv=[sys.argv[0]] + rest, exit=False).result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
