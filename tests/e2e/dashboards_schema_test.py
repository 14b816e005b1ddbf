#!/usr/bin/python3
"""Every dashboard of dashboards/ type-checks against Grafana's published dashboard schema.

The npm package @grafana/schema holds the TypeScript types Grafana generates from its dashboard
schema (the classic JSON model that "Import dashboard" takes). For each dashboard this test
writes two TypeScript files and runs `tsc --noEmit --strict` on them:

* `<name>.schema.ts`: `const d: GrafanaDashboard = <json>;`, Grafana's own Dashboard type (with
  its string enums read as the strings JSON holds);
* `<name>.strict.ts`: `const d: StrictDashboard = <json>;` (tests/dashboards/strict_dashboard.ts):
  the same type with each panel's options and field config narrowed to the schema's type for
  that panel plugin, and every query to the Prometheus query model with the ${datasource} ref.

An object literal assigned to a declared type fails on unknown properties, missing required ones
and wrong value types, so a misspelt key, a string where Grafana wants a number or an option
value a panel does not know fails the test. Broken copies of a dashboard check that it does.

Needs node and npm (Debian: nodejs, npm; scripts/install-deps); skips without them. Installs the
pinned packages (tests/dashboards/package-lock.json) with `npm ci` when node_modules is missing.
"""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dashboards  # noqa: E402
import npm_pins  # noqa: E402

PACKAGE_DIR = os.path.join(dashboards.REPO, "tests", "dashboards")
NODE_MODULES = os.path.join(PACKAGE_DIR, "node_modules")
STRICT_TYPES = os.path.join(PACKAGE_DIR, "strict_dashboard.ts")
TSC_TIMEOUT = 300.0  # seconds for one tsc run over every file
TSC_ERROR = re.compile(r"^(?P<file>[^\s(]+\.ts)\(\d+,\d+\): error (?P<code>TS\d+): (?P<text>.*)$")

NODE = shutil.which("node")
NPM = shutil.which("npm")


def typescript_source(dashboard, type_name):
    """A module that assigns the dashboard JSON, as an object literal, to type_name."""
    # JSON is a TypeScript expression; "${datasource}" stays a plain double-quoted string.
    return ("import type { %s } from %s;\n\nexport const dashboard: %s = %s;\n"
            % (type_name, json.dumps(os.path.splitext(STRICT_TYPES)[0]), type_name,
               json.dumps(dashboard, indent=2)))


def run_tsc(files):
    """{file base name: [error lines]} of one `tsc --noEmit --strict` run over files."""
    tsc = os.path.join(NODE_MODULES, "typescript", "bin", "tsc")
    argv = [NODE, tsc, "--noEmit", "--strict",
            "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022",
            "--skipLibCheck", "--pretty", "false"] + files
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TSC_TIMEOUT,
                            stdin=subprocess.DEVNULL)
    errors = {os.path.basename(f): [] for f in files}
    other = []
    for line in (result.stdout + result.stderr).splitlines():
        match = TSC_ERROR.match(line)
        if match and os.path.basename(match.group("file")) in errors:
            errors[os.path.basename(match.group("file"))].append(line)
        elif line.strip() and not line.startswith(" "):
            other.append(line)
    if other:
        raise AssertionError("tsc reported errors outside the dashboards (rc=%d):\n%s"
                             % (result.returncode, "\n".join(other)))
    if result.returncode != 0 and not any(errors.values()):
        raise AssertionError("tsc failed (rc=%d) without a dashboard error:\n%s%s"
                             % (result.returncode, result.stdout, result.stderr))
    return errors


def broken_variants(all_dashboards):
    """(name, dashboard, also_breaks_grafana_type): copies with one mistake each."""
    variants = []

    def variant(name, grafana_too, panel_type, mutate):
        """A copy of the first dashboard with a panel_type panel, mutate(copy, that panel)."""
        for _, good in sorted(all_dashboards.items()):
            d = copy.deepcopy(good)
            panel = next((p for p in d["panels"] if p["type"] == panel_type), None)
            if panel is not None:
                mutate(d, panel)
                variants.append((name, d, grafana_too))
                return
        raise AssertionError("no dashboard has a %s panel" % panel_type)

    def set_key(obj, key, value):
        obj[key] = value

    variant("panels_not_array", True, "timeseries",
            lambda d, p: set_key(d, "panels", {"0": p}))
    variant("refresh_number", True, "timeseries", lambda d, p: set_key(d, "refresh", 30))
    variant("schema_version_string", True, "timeseries",
            lambda d, p: set_key(d, "schemaVersion", "42"))
    variant("unknown_key", True, "timeseries", lambda d, p: set_key(d, "schemaversion", 42))
    variant("gridpos_width_string", True, "timeseries",
            lambda d, p: set_key(p["gridPos"], "w", "12"))
    variant("variable_type_unknown", True, "timeseries",
            lambda d, p: set_key(d["templating"]["list"][1], "type", "select"))
    variant("threshold_mode_unknown", True, "timeseries",
            lambda d, p: set_key(p["fieldConfig"]["defaults"]["thresholds"], "mode", "abs"))
    variant("transformation_without_options", True, "table",
            lambda d, p: p["transformations"][0].pop("options"))
    # Grafana's Dashboard leaves options, field config custom and targets open; StrictDashboard
    # narrows them to the panel plugin's types and the Prometheus query.
    variant("legend_display_mode_unknown", False, "timeseries",
            lambda d, p: set_key(p["options"]["legend"], "displayMode", "lists"))
    variant("draw_style_unknown", False, "timeseries",
            lambda d, p: set_key(p["fieldConfig"]["defaults"]["custom"], "drawStyle", "area"))
    variant("table_cell_type_unknown", False, "table",
            lambda d, p: set_key(p["fieldConfig"]["defaults"]["custom"]["cellOptions"], "type",
                                 "colour"))
    variant("table_option_misspelt", False, "table",
            lambda d, p: set_key(p["options"], "showHeaders", True))
    variant("stat_color_mode_unknown", False, "stat",
            lambda d, p: set_key(p["options"], "colorMode", "bg"))
    variant("heatmap_axis_unit_number", False, "heatmap",
            lambda d, p: set_key(p["options"]["yAxis"], "unit", 1))
    variant("state_timeline_row_height_string", False, "state-timeline",
            lambda d, p: set_key(p["options"], "rowHeight", "0.9"))
    variant("panel_type_unknown", False, "timeseries", lambda d, p: set_key(p, "type", "graph"))
    variant("target_without_expr", False, "timeseries", lambda d, p: p["targets"][0].pop("expr"))
    variant("target_format_unknown", False, "timeseries",
            lambda d, p: set_key(p["targets"][0], "format", "tables"))
    variant("target_concrete_datasource", False, "timeseries",
            lambda d, p: set_key(p["targets"][0], "datasource",
                                 {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}))
    return variants


@unittest.skipUnless(NODE and NPM, "needs node and npm (Debian packages nodejs, npm; "
                                   "scripts/install-deps installs them)")
class DashboardSchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        error = npm_pins.ensure_packages(PACKAGE_DIR)
        if error:
            raise AssertionError(error)
        cls.dashboards = dashboards.load_dashboards()
        cls.workdir = tempfile.mkdtemp(prefix="rail-dashboards-ts-")
        cls.files = {}  # (kind, name) -> path
        cases = list(cls.dashboards.items())
        cases += [("broken-%s.json" % n, d) for n, d, _ in broken_variants(cls.dashboards)]
        for name, dashboard in cases:
            stem = os.path.splitext(name)[0]
            for kind, type_name in (("schema", "GrafanaDashboard"), ("strict", "StrictDashboard")):
                path = os.path.join(cls.workdir, "%s.%s.ts" % (stem, kind))
                with open(path, "w", encoding="utf-8") as f:
                    f.write(typescript_source(dashboard, type_name))
                cls.files[(kind, name)] = path
        cls.errors = run_tsc(sorted(cls.files.values()))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def errors_of(self, kind, name):
        return self.errors[os.path.basename(self.files[(kind, name)])]

    def test_dashboards_found(self):
        self.assertEqual(len(self.dashboards), 5, sorted(self.dashboards))

    def test_every_dashboard_is_a_grafana_dashboard(self):
        for name in self.dashboards:
            with self.subTest(dashboard=name):
                self.assertEqual(self.errors_of("schema", name), [])

    def test_every_dashboard_passes_the_panel_and_query_types(self):
        for name in self.dashboards:
            with self.subTest(dashboard=name):
                self.assertEqual(self.errors_of("strict", name), [])

    def test_broken_dashboards_fail(self):
        """The check bites: each broken copy fails, with Grafana's type where it can."""
        for variant, _, grafana_too in broken_variants(self.dashboards):
            name = "broken-%s.json" % variant
            with self.subTest(variant=variant):
                self.assertNotEqual(self.errors_of("strict", name), [],
                                    "StrictDashboard accepted the broken copy")
                if grafana_too:
                    self.assertNotEqual(self.errors_of("schema", name), [],
                                        "Grafana's Dashboard type accepted the broken copy")

    def test_schema_version_is_grafanas_current(self):
        """schemaVersion equals the one of @grafana/schema's defaultDashboard."""
        script = "console.log(require('@grafana/schema').defaultDashboard.schemaVersion)"
        result = subprocess.run([NODE, "-e", script], cwd=PACKAGE_DIR, capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 0, result.stderr)
        current = int(result.stdout.strip())
        for name, dashboard in self.dashboards.items():
            with self.subTest(dashboard=name):
                self.assertEqual(dashboard["schemaVersion"], current)


if __name__ == "__main__":
    unittest.main(verbosity=2)
