"""Debian's prometheus for the lab tests that scrape agents with a real server: started on a
free port, its HTTP API read, and the shipped rule files copied with shorter `for:` durations.

* Prometheus: the server, ready when /-/ready answers; api(), query(), alerts().
* series_text(): an instant vector as readable lines, for failure messages.
* rules_with_for(): a rule file's text with every alert's `for:` replaced (a test cannot wait the
  minutes the shipped rules wait), nothing else changed.
* start_scraping(): a server in a lab on the shipped rules (that `for:`), scraping its agents.
"""

import json
import os
import re
import urllib.parse

import yaml

import harness

PROMETHEUS = os.environ.get("RAIL_PROMETHEUS", "/usr/bin/prometheus")
RULES = os.path.join(harness.REPO, "deploy", "prometheus", "rail_rules.yml")
JOB = "rail_exporter"  # the job name rail_rules.yml expects
STARTUP_TIMEOUT = 30.0  # seconds for Prometheus to be ready


def require_prometheus():
    """Fails (not skips: scripts/install-deps installs it) when prometheus is not installed."""
    if not os.access(PROMETHEUS, os.X_OK):
        raise AssertionError("%s is not installed (Debian package prometheus; "
                             "scripts/install-deps installs it)" % PROMETHEUS)


class Prometheus(harness._Process):
    """Debian's prometheus on a free 127.0.0.1 port, ready when /-/ready answers 200."""

    def __init__(self, config, storage, attempts=3):
        last_error = None
        for _ in range(attempts):  # another process may take the free port in between
            self.port = harness.free_port()
            self.base_url = "http://127.0.0.1:%d" % self.port
            super().__init__([PROMETHEUS, "--config.file=" + config,
                              "--storage.tsdb.path=" + storage,
                              "--web.listen-address=127.0.0.1:%d" % self.port], "prometheus")
            try:
                self.wait_http(self.base_url + "/-/ready", STARTUP_TIMEOUT, 0.2)
                return
            except (RuntimeError, TimeoutError) as error:
                last_error = error
                self.stop()
        raise last_error

    def api(self, path, **params):
        url = self.base_url + "/api/v1/" + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        status, body, _ = harness.http_get(url)
        if status != 200:
            raise AssertionError("GET %s: HTTP %d\n%s" % (url, status, body))
        reply = json.loads(body)
        if reply.get("status") != "success":
            raise AssertionError("GET %s: %s" % (url, body))
        return reply["data"]

    def query(self, expr):
        """The instant vector (a list of {metric, value}) of expr now."""
        data = self.api("query", query=expr)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]

    def alerts(self, name):
        return [alert for alert in self.api("alerts")["alerts"]
                if alert["labels"].get("alertname") == name]


def series_text(series):
    """Readable lines of an instant vector."""
    return "\n".join("  %s %s" % (json.dumps(s["metric"], sort_keys=True), s["value"][1])
                     for s in series) or "  (none)"


def rules_with_for(path, duration):
    """The text of rule file path with every alert's `for:` set to duration, nothing else
    changed (the expressions stay the shipped ones, byte for byte)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    alerts = [rule for group in yaml.safe_load(text)["groups"]
              for rule in group["rules"] if "alert" in rule]
    text, count = re.subn(r"(?m)^(\s+for:\s*)\S+\s*$", r"\g<1>" + duration, text)
    if count != len(alerts):
        raise AssertionError("rewrote %d `for:` lines, %s has %d alerts" % (
            count, os.path.basename(path), len(alerts)))
    return text


def start_scraping(lab, agents, alert_for, interval):
    """A Prometheus tracked by lab, evaluating rail_rules.yml with every alert's `for:` set to
    alert_for, scraping each agent ({host: agent}) as instance=host every interval ("2s")."""
    rules = lab.write("rail_rules.yml", rules_with_for(RULES, alert_for))
    config = {  # JSON is YAML: the configuration needs no YAML writer
        "global": {"scrape_interval": interval, "scrape_timeout": interval,
                   "evaluation_interval": interval},
        "rule_files": [rules],
        "scrape_configs": [{
            "job_name": JOB,
            "static_configs": [{"targets": [agent.target], "labels": {"instance": host}}
                               for host, agent in agents.items()],
        }],
    }
    path = lab.write("prometheus.yml", json.dumps(config, indent=2))
    return lab.track(Prometheus(path, os.path.join(lab.tmp, "data")))
