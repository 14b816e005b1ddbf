#!/usr/bin/python3
"""Docs that the code keeps true: every metric family the code can emit is named in
docs/metrics.md, every flag of `rail_exporter --help` (and of its subcommands) is documented and
every documented flag exists, every collector of the registry has a row in the collectors table,
every file or script the README names exists, every relative link of the README and docs/ resolves,
and the README stays under 200 lines. Each check also runs on a copy of its doc with
one entry taken out, and must name what is missing there: a check that cannot fail proves
nothing."""

import itertools
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUBCOMMANDS = ("probe", "doctor", "plan")
# String literals of src/ that look like family names and are not families: each with why.
NOT_FAMILIES = {
    "rail_probe": "the UCX context's name (probe/ucx/context.cc)",
    "rail_mtus": "a key of the peer protocol's JSON (peer/session_messages.cc)",
    "rail_cabling": "a check token, the label check=\"rail_cabling\" (health/rail_cabling.cc)",
}
# Where the README's own paths start; a backticked token under one of these must exist.
README_MOST_LINES = 200  # issue 30: the README under 200 lines
README_ROOTS = ("scripts/", "docs/", "bench/", "deploy/", "dashboards/", "tests/", "src/",
                "include/", ".ci/", "fuzz/", "cmake/", "data/")


def read(relative):
    with open(os.path.join(ROOT, relative), encoding="utf-8") as f:
        return f.read()


def code_families():
    """Every "rail_*" / "process_*" string literal of src/, less NOT_FAMILIES: the family names
    as the collectors define them (some are built from tables, so every literal counts)."""
    names = set()
    for directory, _, files in os.walk(os.path.join(ROOT, "src")):
        for name in files:
            if name.endswith((".cc", ".h")):
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    names.update(re.findall(r'"((?:rail|process)_[a-z0-9_]+)"', f.read()))
    return names - set(NOT_FAMILIES)


def expand(token):
    """Names a doc token stands for: `a_{b,c}_d` is a_b_d and a_c_d; a trailing {...} may be a
    label list, so the name before it counts too."""
    parts = re.split(r"\{([^{}]*)\}", token)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    names = {"".join(c) for c in itertools.product(*choices)}
    if token.endswith("}"):
        names |= expand(token[:token.rfind("{")]) if "{" in token else set()
    return names


def documented_names(text):
    names = set()
    for span in re.findall(r"`([^`]+)`", text):
        for token in re.findall(r"(?:rail|process)_[a-z0-9_{},]*(?:\{[^{}`]*\})?", span):
            names |= expand(token)
    return names


def missing_families(metrics_md, families):
    return sorted(families - documented_names(metrics_md))


def help_flags(text):
    """The long options of a --help text, less the per-collector switches (the collectors table
    covers those) and --help itself."""
    flags = set()
    for line in text.splitlines():
        if re.match(r"\s+-", line):
            flags.update(re.findall(r"--[a-z][a-z0-9_.\-]*[a-z0-9]", line.split("  ", 2)[1]
                                    if line.startswith("  ") else line))
    return {f for f in flags if not re.match(r"--(no-)?collector\.[a-z_0-9]+$", f)
            or f == "--collector.disable-defaults"} - {"--help"}


def documented_flags(text):
    """`--flag` spans; `--collector.<name>` is a pattern, not a flag."""
    return {flag.rstrip(".-") for flag, pattern in
            re.findall(r"`(--[a-z][a-z0-9_.\-]*)(<?)", text) if not pattern}


def flag_table_flags(configuration_md):
    """Flags named in the first column of configuration.md's tables."""
    flags = set()
    for line in configuration_md.splitlines():
        if line.startswith("| `--"):
            flags |= documented_flags(line.split("|")[1])
    return flags


def collector_rows(configuration_md):
    section = configuration_md.split("## Collectors", 1)[1]
    return set(re.findall(r"^\| `([a-z_0-9]+)` \|", section, re.M))


def readme_paths(readme):
    """The repository paths the README names: in inline code, and in its command blocks (where a
    path may follow a flag's "=")."""
    fences = re.findall(r"^```.*?\n(.*?)^```", readme, re.M | re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", readme, flags=re.M | re.S))
    paths = set()
    for span in spans + fences:
        for word in re.split(r"[\s=]+", span):
            word = word.rstrip(".,;:)*")
            if word.startswith(README_ROOTS):
                paths.add(word.split("#")[0])
    return paths


class DocsConsistencyTest(unittest.TestCase):
    def setUp(self):
        harness.require_executable(self, harness.BINARY)

    def run_help(self, *args):
        result = subprocess.run([harness.BINARY, *args, "--help"], capture_output=True, text=True,
                                timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_every_family_is_in_metrics_md(self):
        families = code_families()
        self.assertGreater(len(families), 100, "the family scan found too few names")
        metrics_md = read("docs/metrics.md")
        self.assertEqual(missing_families(metrics_md, families), [])
        planted = metrics_md.replace("rail_gid_entries", "rail_gid_count")
        self.assertEqual(missing_families(planted, families), ["rail_gid_entries"])

    def test_every_flag_is_documented_and_every_documented_flag_exists(self):
        agent_flags = help_flags(self.run_help())
        self.assertIn("--collector.gid.entries", agent_flags)
        every_flag = set(agent_flags)
        docs = {name: read(os.path.join("docs", name))
                for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md")}
        configuration_md = docs["configuration.md"]
        self.assertEqual(sorted(agent_flags - documented_flags(configuration_md)), [],
                         "agent flags missing from docs/configuration.md")
        all_docs = "\n".join(docs.values())
        for subcommand in SUBCOMMANDS:
            flags = help_flags(self.run_help(subcommand))
            every_flag |= flags
            self.assertEqual(sorted(flags - documented_flags(all_docs)), [],
                             f"flags of `rail_exporter {subcommand}` missing from docs/")
        self.assertEqual(sorted(flag_table_flags(configuration_md) - every_flag), [],
                         "flags documented in configuration.md that no --help lists")
        planted = configuration_md.replace("`--collector.gid.entries`", "`--gid-entries`")
        self.assertEqual(sorted(agent_flags - documented_flags(planted)),
                         ["--collector.gid.entries"])
        self.assertIn("--gid-entries", flag_table_flags(planted) - every_flag)

    def test_every_collector_has_a_row(self):
        collectors = set(re.findall(r"--collector\.([a-z_0-9]+),--no-collector", self.run_help()))
        self.assertGreater(len(collectors), 10)
        configuration_md = read("docs/configuration.md")
        self.assertEqual(sorted(collectors - collector_rows(configuration_md)), [])
        planted = configuration_md.replace("| `fleet` |", "| fleet |")
        self.assertEqual(sorted(collectors - collector_rows(planted)), ["fleet"])

    def test_every_path_the_readme_names_exists(self):
        readme = read("README.md")
        paths = readme_paths(readme)
        self.assertIn("scripts/test", paths)
        missing = sorted(p for p in paths if not os.path.exists(os.path.join(ROOT, p)))
        self.assertEqual(missing, [], "paths the README names that do not exist")
        planted = readme_paths(readme + "\nRun `scripts/no-such-script`.\n")
        self.assertIn("scripts/no-such-script",
                      {p for p in planted if not os.path.exists(os.path.join(ROOT, p))})

    def test_every_config_key_is_documented_and_every_documented_key_exists(self):
        accepted = accepted_config_keys()
        self.assertGreater(len(accepted), 50, "the parser scan found too few keys")
        configuration_md = read("docs/configuration.md")
        self.assertEqual(sorted(accepted - documented_config_words(configuration_md)), [])
        self.assertEqual(sorted(key_table_keys(configuration_md) - accepted), [])
        planted = configuration_md.replace("`window`", "`depth`").replace(
            "| `limits.max_frame_bytes` |", "| `limits.max_frame_bytes` |\n| `limits.max_naps` | 1 | |\n"
            "| `limits.max_frame_bytes` |", 1)
        self.assertIn("window", accepted - documented_config_words(planted))
        self.assertIn("max_naps", key_table_keys(planted) - accepted)

    def test_the_readme_stays_short(self):
        # Set-up, the two quick starts, deploy, the doc index: the rest lives in docs/.
        self.assertLess(len(read("README.md").splitlines()), README_MOST_LINES)

    def test_every_relative_link_resolves(self):
        documents = ["README.md"] + ["docs/" + name for name in sorted(os.listdir(
            os.path.join(ROOT, "docs"))) if name.endswith(".md")]
        broken = [b for d in documents for b in broken_links(d, read(d))]
        self.assertEqual(broken, [], "relative links to files that do not exist")
        self.assertEqual(broken_links("README.md", "See [gone](docs/gone.md#part)."),
                         ["README.md: docs/gone.md"])


def accepted_config_keys():
    """Every key the configuration file's parser accepts: the names RejectUnknownKeys is given in
    src/agent/config*.cc (each section lists its keys there, and refuses any other)."""
    keys = set()
    agent = os.path.join(ROOT, "src", "agent")
    for name in sorted(os.listdir(agent)):
        if name.startswith("config") and name.endswith(".cc"):
            with open(os.path.join(agent, name), encoding="utf-8") as f:
                for call in re.finditer(r"RejectUnknownKeys\(\s*[^,]+,\s*\{([^}]*)\}", f.read()):
                    keys.update(re.findall(r'"([a-z_0-9]+)"', call.group(1)))
    return keys


def configuration_file_part(configuration_md):
    """The prose and the YAML examples of configuration.md's "Configuration file" part."""
    part = configuration_md[configuration_md.index("## Configuration file"):]
    fences = re.findall(r"^```.*?\n(.*?)^```", part, re.M | re.S)
    prose = re.sub(r"^```.*?^```", "", part, flags=re.M | re.S)
    return prose, fences


def documented_config_words(configuration_md):
    """The words the part names as keys: in backticks, or as YAML keys of its examples."""
    prose, fences = configuration_file_part(configuration_md)
    words = set()
    for token in re.findall(r"`([^`\n]+)`", prose):
        words.update(re.findall(r"[a-z_0-9]+", token))
    for fence in fences:
        words.update(re.findall(r"(?:^\s*(?:- )?|[{,]\s*)([a-z_0-9]+):", fence, re.M))
    return words


def key_table_keys(configuration_md):
    """The key column of every "| key | default |" table, each dotted key split into its keys."""
    prose, _ = configuration_file_part(configuration_md)
    keys = set()
    for table in re.finditer(r"^\| key \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)", prose, re.M):
        for row in table.group(1).splitlines():
            for token in re.findall(r"`([^`]+)`", row.split("|")[1]):
                keys.update(part.removesuffix("[]") for part in token.split("."))
    return keys


def broken_links(document, text):
    """The relative link targets of a markdown text (the file part, anchors left out) that do
    not exist, as "document: target"."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        path = target.split("#", 1)[0]
        if not path or re.match(r"[a-z]+:", path):
            continue  # an anchor in the same document, or a URL
        resolved = os.path.normpath(os.path.join(ROOT, os.path.dirname(document), path))
        if not os.path.exists(resolved):
            broken.append("%s: %s" % (document, path))
    return broken


if __name__ == "__main__":
    harness.main()
