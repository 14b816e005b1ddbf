#!/usr/bin/python3
"""Docs that the code keeps true: every metric family the code can emit is named in
docs/metrics.md, every flag of `rail_exporter --help` (and of its subcommands) is documented and
every documented flag exists, every collector of the registry has a row in the collectors table,
and every file or script the README names exists. Each check also runs on a copy of its doc with
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
}
# Where the README's own paths start; a backticked token under one of these must exist.
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
    paths = set()
    for span in re.findall(r"`([^`\n]+)`", readme):
        for word in span.split():
            word = word.rstrip(".,;:)")
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


if __name__ == "__main__":
    harness.main()
