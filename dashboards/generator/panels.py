"""Building blocks of the dashboards: PromQL fragments, panels, variables, layout."""

# Grafana's current dashboard JSON model (schemaVersion of @grafana/schema's defaultDashboard,
# tests/dashboards/package.json pins the version the tests check against).
SCHEMA_VERSION = 42
DS = {"type": "prometheus", "uid": "${datasource}"}
TAGS = ["rail_exporter"]

INST = 'instance=~"$instance"'
RAIL = 'rail=~"$rail"'
SEL = "%s, %s" % (INST, RAIL)

# rail_info reduced to the labels that map a port (device, port) or a netdev to its rail.
RAILS_BY_PORT = ('max without (netdev, link_layer, ipv4, transport, source) '
                 '(rail_info{%s, device!=""})' % SEL)
RAILS_BY_NETDEV = ('max without (device, port, link_layer, ipv4, transport, source) '
                   '(rail_info{%s, netdev!=""})' % SEL)
# The same for rails without an RDMA device (TCP rails: their state is the netdev's).
NETDEV_ONLY_RAILS = ('max without (device, port, link_layer, ipv4, transport, source) '
                     '(rail_info{%s, device="", netdev!=""})' % SEL)
# The slaves of every bond, as netdevs (value 1).
BOND_SLAVES = ('group by (instance, job, bond, netdev) '
               '(label_replace(rail_bond_slave_up{%s}, "netdev", "$1", "slave", "(.*)"))' % INST)


def per_port(expr):
    """expr (labels device, port) with the rail of its port added; only ports that are rails."""
    return "%s * on (instance, job, device, port) group_left (rail) %s" % (expr, RAILS_BY_PORT)


def per_netdev(expr, rails=RAILS_BY_NETDEV):
    """expr (label netdev) for each rail on that netdev (labels rail, netdev).

    The rails are the "many" side: several rails share one netdev when RoCE ports are
    enslaved to a bond (their GIDs, and rail_info's netdev, name the bond).
    """
    return "%s * on (instance, job, netdev) group_left () %s" % (rails, expr)


def hw_rate(counters):
    """Per-rail rate of the mlx5 hw_counters named by the regex `counters`."""
    return ("sum by (instance, rail, counter) (%s)" % per_port(
        'rate(rail_port_hw_events_total{%s, counter=~"%s"}[$__rate_interval])' % (INST, counters)))


# --- Panel building blocks -----------------------------------------------------------------------

def target(ref, expr, legend=None, instant=False, fmt=None):
    t = {"datasource": DS, "editorMode": "code", "expr": expr, "refId": ref}
    if legend is not None:
        t["legendFormat"] = legend
    if instant:
        t["instant"] = True
        t["range"] = False
    else:
        t["range"] = True
    if fmt:
        t["format"] = fmt
    return t


def targets(*specs, **common):
    """targets(("expr", "legend"), ...) with refIds A, B, C, ..."""
    out = []
    for i, spec in enumerate(specs):
        expr, legend = (spec, None) if isinstance(spec, str) else spec
        out.append(target(chr(ord("A") + i), expr, legend, **common))
    return out


def thresholds(*steps):
    """Threshold steps: thresholds("green", (0.5, "red")) -> base green, red from 0.5."""
    out = [{"color": steps[0], "value": None}]
    for value, color in steps[1:]:
        out.append({"color": color, "value": value})
    return {"mode": "absolute", "steps": out}


def value_map(mapping):
    """{value: (text, color)} -> a Grafana value mapping."""
    options = {}
    for index, (value, (text, color)) in enumerate(sorted(mapping.items())):
        options[str(value)] = {"color": color, "index": index, "text": text}
    return [{"options": options, "type": "value"}]


def override(matcher_id, name, **properties):
    return {"matcher": {"id": matcher_id, "options": name},
            "properties": [{"id": key.replace("__", "."), "value": value}
                           for key, value in properties.items()]}


def timeseries(title, description, tgts, unit, *, bars=False, minimum=None,
               maximum=None, threshold=None, overrides=None, legend_calcs=("mean", "max")):
    custom = {
        "axisBorderShow": False, "axisCenteredZero": False, "axisColorMode": "text",
        "axisLabel": "", "axisPlacement": "auto", "barAlignment": 0,
        "drawStyle": "bars" if bars else "line", "fillOpacity": 10, "gradientMode": "none",
        "hideFrom": {"legend": False, "tooltip": False, "viz": False},
        "insertNulls": False, "lineInterpolation": "linear", "lineWidth": 1, "pointSize": 4,
        "scaleDistribution": {"type": "linear"}, "showPoints": "auto", "spanNulls": False,
        "stacking": {"group": "A", "mode": "none"},
        "thresholdsStyle": {"mode": "dashed" if threshold is not None else "off"},
    }
    defaults = {"color": {"mode": "palette-classic"}, "custom": custom, "unit": unit,
                "mappings": [],
                "thresholds": thresholds("green", (threshold, "red")) if threshold is not None
                else thresholds("green")}
    if minimum is not None:
        defaults["min"] = minimum
    if maximum is not None:
        defaults["max"] = maximum
    return {
        "type": "timeseries", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
        "options": {
            "legend": {"calcs": list(legend_calcs), "displayMode": "table",
                       "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": tgts,
    }


def table(title, description, tgts, transformations, overrides, sort_by=None):
    panel = {
        "type": "table", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {
            "defaults": {"custom": {"align": "auto", "cellOptions": {"type": "auto"},
                                    "filterable": True, "inspect": False},
                         "mappings": [], "thresholds": thresholds("green")},
            "overrides": overrides,
        },
        "options": {"cellHeight": "sm", "frameIndex": 0, "showHeader": True},
        "targets": tgts,
        "transformations": transformations,
    }
    if sort_by:
        panel["options"]["sortBy"] = [{"desc": False, "displayName": sort_by}]
    return panel


def matrix(title, description, expr, rows, columns, unit, steps, mappings=None):
    """A table with a row per value of the label `rows` and a column per value of `columns`,
    each cell expr's instant value coloured by the threshold steps (or mappings)."""
    panel = table(
        title, description, [target("A", expr, instant=True, fmt="table")],
        [{"id": "groupingToMatrix", "options": {"columnField": columns, "rowField": rows,
                                                "valueField": "Value"}}],
        [], sort_by="%s\\%s" % (rows, columns))
    defaults = panel["fieldConfig"]["defaults"]
    defaults["custom"]["cellOptions"] = {"type": "color-background", "mode": "basic"}
    defaults["thresholds"] = thresholds(*steps)
    defaults["mappings"] = mappings or []
    defaults["unit"] = unit
    return panel


def stat(title, description, tgts, unit="none", steps=("green",), mappings=None):
    return {
        "type": "stat", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {"defaults": {"color": {"mode": "thresholds"}, "mappings": mappings or [],
                                     "thresholds": thresholds(*steps), "unit": unit},
                        "overrides": []},
        "options": {
            "colorMode": "background", "graphMode": "none", "justifyMode": "auto",
            "orientation": "auto", "percentChangeColorMode": "standard",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "showPercentChange": False, "textMode": "value_and_name", "wideLayout": True,
        },
        "targets": tgts,
    }


def state_timeline(title, description, tgts, mappings):
    return {
        "type": "state-timeline", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {
            "defaults": {"color": {"mode": "thresholds"},
                         "custom": {"fillOpacity": 80, "hideFrom": {"legend": False,
                                                                   "tooltip": False,
                                                                   "viz": False},
                                    "lineWidth": 0},
                         "mappings": mappings, "thresholds": thresholds("green")},
            "overrides": [],
        },
        "options": {
            "alignValue": "left", "mergeValues": True, "rowHeight": 0.9, "showValue": "auto",
            "legend": {"calcs": [], "displayMode": "list", "placement": "bottom",
                       "showLegend": False},
            "tooltip": {"mode": "single", "sort": "none"},
        },
        "targets": tgts,
    }


def heatmap(title, description, tgt):
    return {
        "type": "heatmap", "title": title, "description": description, "datasource": DS,
        "fieldConfig": {"defaults": {"custom": {"hideFrom": {"legend": False, "tooltip": False,
                                                             "viz": False},
                                                "scaleDistribution": {"type": "linear"}}},
                        "overrides": []},
        "options": {
            "calculate": False, "cellGap": 1,
            "color": {"exponent": 0.5, "fill": "dark-orange", "mode": "scheme", "reverse": False,
                      "scale": "exponential", "scheme": "Oranges", "steps": 64},
            "exemplars": {"color": "rgba(255,0,255,0.7)"},
            "filterValues": {"le": 1e-9},
            "legend": {"show": True},
            "rowsFrame": {"layout": "auto"},
            "showValue": "never",
            "tooltip": {"mode": "single", "showColorScale": False, "yHistogram": True},
            "yAxis": {"axisPlacement": "left", "reverse": False, "unit": "s"},
        },
        "targets": [tgt],
    }


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": []}


UP_DOWN = value_map({0: ("down", "red"), 1: ("up", "green")})
OK_FAIL = value_map({0: ("FAIL", "red"), 1: ("ok", "green")})


def merged_table_transformations(hide, order, rename):
    """merge (one row per shared label values), then organize: hide, order, rename columns."""
    return [
        {"id": "merge", "options": {}},
        {"id": "organize", "options": {
            "excludeByName": {name: True for name in hide},
            "indexByName": {name: i for i, name in enumerate(order)},
            "renameByName": rename,
        }},
    ]


# --- Assembly -------------------------------------------------------------------------------------

def variables():
    query_var = {"type": "query", "datasource": DS, "refresh": 2, "sort": 1,
                 "includeAll": True, "multi": True, "allValue": ".*",
                 "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
                 "options": [], "hide": 0, "skipUrlSync": False, "regex": ""}
    return [
        {"type": "datasource", "name": "datasource", "label": "Data source",
         "query": "prometheus", "hide": 0, "includeAll": False, "multi": False,
         "options": [], "refresh": 1, "regex": "", "skipUrlSync": False},
        dict(query_var, name="instance", label="Instance",
             query={"qryType": 1, "query": "label_values(rail_exporter_build_info, instance)",
                    "refId": "PrometheusVariableQueryEditor-VariableQuery"}),
        dict(query_var, name="rail", label="Rail",
             query={"qryType": 1, "query": "label_values(rail_info{%s}, rail)" % INST,
                    "refId": "PrometheusVariableQueryEditor-VariableQuery"}),
    ]


def dashboard(uid, title, description, layout):
    panels = []
    x = y = row_height = 0
    for panel_id, (panel, width, height) in enumerate(layout, start=1):
        if x + width > 24:
            x, y, row_height = 0, y + row_height, 0
        panel = dict(panel, id=panel_id, gridPos={"h": height, "w": width, "x": x, "y": y})
        panels.append(panel)
        x += width
        row_height = max(row_height, height)
    return {
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]},
        "description": description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "links": [{"asDropdown": False, "icon": "external link", "includeVars": True,
                   "keepTime": True, "tags": TAGS, "targetBlank": False,
                   "title": "Rail exporter", "tooltip": "", "type": "dashboards"}],
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "tags": TAGS,
        "templating": {"list": variables()},
        "time": {"from": "now-3h", "to": "now"},
        "timepicker": {},
        "timezone": "browser",
        "title": title,
        "uid": uid,
        "version": 1,
    }
