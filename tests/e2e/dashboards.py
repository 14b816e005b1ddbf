"""The Grafana dashboards of dashboards/ as data: panels, targets and their PromQL.

For tests that evaluate the dashboards' queries against a real Prometheus:

    from dashboards import dashboard_expressions
    for e in dashboard_expressions(rate_interval="30s"):
        result = query(e.expr)          # every $variable substituted
        ...                             # e.needs says what the query needs to return data
    for v in dashboard_variable_queries():
        series(v.selector)              # /api/v1/series: v.label must have values

`needs` names what a query needs beyond a scraped agent and the recording rules: "rdma" (RDMA
ports: the lab's veth rails have none), "bond", "probe" and "probe:<kind>" (results of that
probe kind), "health" (rail_check_ok), "traffic" (bytes moving: the share rules have no series
while a host is idle), "fleet" (agents with a `fleet` section: rail_fleet_*), "lldp" (rails whose
neighbour lldpd knows: rail_link_neighbor_*, and the cabling records on them), and three that are
empty on a healthy host: "probe_errors", "failing_check" and "sick" (fleet_rail:sick, a series
per sick rail index only).

Only the standard library.
"""

import json
import os
import re
from typing import NamedTuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD_DIR = os.path.join(REPO, "dashboards")
DATASOURCE_REF = {"type": "prometheus", "uid": "${datasource}"}

# Variables a query may use; anything else that looks like $name is an error.
QUERY_VARIABLES = ("instance", "rail", "__rate_interval")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?::[^}]*)?\}|([A-Za-z_]\w*))")

# What a query needs from the scraped agents to return data, by metric (prefix match on the
# name). A query's `needs` is the union over its metrics, so a query combining alternatives with
# `or` can ask for more than it needs.
_NEEDS_BY_PREFIX = (
    ("rail_port_", "rdma"),
    ("rail_gid_", "rdma"),
    ("rail_infiniband_", "rdma"),
    ("rail_active", "rdma"),
    ("rail_bond_", "bond"),
    ("rail_probe_errors_total", "probe_errors"),
    ("rail_probe_", "probe"),
    ("rail_share_ratio", "probe"),
    ("rail_fallback_tcp", "probe"),
    ("rail_multirail_", "probe"),
    ("rail_peer_", "probe"),
    ("rail:probe_", "probe"),
    ("peer:rail_probe_", "probe"),
    ("rail_fleet_", "fleet"),
    ("rail_link_neighbor", "lldp"),
    ("fleet_rail_switch:", "lldp"),
    ("fleet_switch:", "lldp"),
    ("fleet_rail:sick_", "probe"),
    ("fleet_rail:sick", "sick"),
    ("fleet_peer_rail:", "probe"),
    ("fleet_rail:probe_", "probe"),
    ("fleet:", "probe"),
    ("rail_check_info", "failing_check"),
    ("rail_check_", "health"),
    ("rail:transmit_share", "traffic"),
    ("rail:receive_share", "traffic"),
)
# Metric names: rail_exporter's own families and the recording rules' level:metric:operation
# names (PromQL functions and keywords are not followed by `{` and never start like these).
_METRIC = re.compile(r"(?<![\w:.\"$])((?:rail|instance|peer|fleet)[_:][A-Za-z0-9_:]*)")
_KIND_MATCHER = re.compile(r'\bkind\s*(=~|=)\s*"([^"]*)"')


class Expression(NamedTuple):
    dashboard: str        # file name, e.g. rail-traffic.json
    uid: str              # dashboard uid
    panel_id: int
    panel_title: str
    ref_id: str
    template: str         # the expression as stored, with $variables
    expr: str             # the expression with every variable substituted
    metrics: frozenset    # metric names it reads
    needs: frozenset      # e.g. {"rdma", "probe", "probe:tcp_rtt"}; empty: any agent has it


def dashboard_files():
    """Paths of every dashboard JSON file, sorted."""
    return sorted(os.path.join(DASHBOARD_DIR, name) for name in os.listdir(DASHBOARD_DIR)
                  if name.endswith(".json"))


def load_dashboards():
    """{file name: parsed dashboard} of every dashboard."""
    out = {}
    for path in dashboard_files():
        with open(path, encoding="utf-8") as f:
            out[os.path.basename(path)] = json.load(f)
    return out


def iter_panels(dashboard):
    """Every panel, rows and the panels inside collapsed rows included, in order."""
    for panel in dashboard.get("panels", []):
        yield panel
        for inner in panel.get("panels", []) if panel.get("type") == "row" else []:
            yield inner


def variables_used(text):
    """Names of the $variables / ${variables} in a query ($1 of label_replace is not one)."""
    return {a or b for a, b in _VARIABLE.findall(text)}


def substitute(template, instance=".*", rail=".*", rate_interval="1m"):
    """The query Prometheus would get for `template`, with regex values for the variables.

    $instance and $rail only ever appear in regex matchers (=~), so `.*` selects everything.
    """
    values = {"instance": instance, "rail": rail, "__rate_interval": rate_interval}

    def replace(match):
        name = match.group(1) or match.group(2)
        if name not in values:
            raise ValueError("unexpected variable $%s in %r" % (name, template))
        return values[name]

    return _VARIABLE.sub(replace, template)


def metric_names(expr):
    """Metric names an expression reads (rail_*, and the recording rules' names)."""
    return frozenset(_METRIC.findall(expr))


def _needs_of_terms(text):
    """needs of an expression without `or` at its top level (parenthesised parts aside)."""
    out = set()
    for metric in metric_names(text):
        for prefix, need in _NEEDS_BY_PREFIX:
            if metric.startswith(prefix):
                out.add(need)
                break
    for op, value in _KIND_MATCHER.findall(text):
        kinds = value.split("|") if op == "=~" else [value]
        out.update("probe:" + kind for kind in kinds if re.fullmatch(r"[a-z_]+", kind))
    return out


def _split_top(text):
    """(top-level text with every (...) group blanked, [groups], [top-level `or` branches])."""
    depth, quote, start = 0, None, 0
    flat, groups, branches = [], [], []
    i = 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "\"'`":
            quote = char
        elif char == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                groups.append(text[start:i])
        if depth == 0 and char != ")":
            flat.append(char)
        else:
            flat.append(" ")
        i += 1
    flat = "".join(flat)
    cuts = [m.start() for m in re.finditer(r"\bor\b", flat)]
    if cuts:
        bounds = [0] + cuts + [len(text)]
        branches = [text[a + (2 if a else 0):b] for a, b in zip(bounds, bounds[1:])]
    return flat, groups, branches


def needs(expr):
    """What the scraped agents must expose for expr to return data (see _NEEDS_BY_PREFIX).

    The union over the metrics it reads, except that alternatives joined by `or` need only what
    all of them need (their intersection).
    """
    flat, groups, branches = _split_top(expr)
    if branches:
        return frozenset.intersection(*(needs(branch) for branch in branches))
    out = _needs_of_terms(flat)
    for group in groups:
        out |= needs(group)
    return frozenset(out)


def dashboard_expressions(instance=".*", rail=".*", rate_interval="1m"):
    """Every PromQL expression of every dashboard panel target, as Expression tuples."""
    out = []
    for name, dashboard in load_dashboards().items():
        for panel in iter_panels(dashboard):
            for target in panel.get("targets", []):
                template = target.get("expr")
                if template is None:
                    continue
                out.append(Expression(
                    dashboard=name, uid=dashboard.get("uid", ""), panel_id=panel.get("id"),
                    panel_title=panel.get("title", ""), ref_id=target.get("refId", ""),
                    template=template,
                    expr=substitute(template, instance, rail, rate_interval),
                    metrics=metric_names(template), needs=needs(template)))
    return out


_LABEL_VALUES = re.compile(r"^label_values\((?:(.+),\s*)?([A-Za-z_]\w*)\)$")


class VariableQuery(NamedTuple):
    dashboard: str
    name: str             # the variable, e.g. rail
    selector: str         # series selector, variables substituted (for /api/v1/series match[])
    label: str            # the label whose values the variable offers


def dashboard_variable_queries(instance=".*"):
    """The label_values() query of every query variable (Grafana's, not PromQL)."""
    out = []
    for name, dashboard in load_dashboards().items():
        for variable in dashboard.get("templating", {}).get("list", []):
            if variable.get("type") != "query":
                continue
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            match = _LABEL_VALUES.match(text.strip())
            if not match:
                raise ValueError("%s: variable %s: not label_values(): %r"
                                 % (name, variable["name"], text))
            out.append(VariableQuery(name, variable["name"],
                                     substitute(match.group(1) or "", instance=instance),
                                     match.group(2)))
    return out
