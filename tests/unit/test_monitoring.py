"""monitoring/: every metric the alert rules and the dashboard read is one the code exports.

The exported names come from the real registries (factstream.metrics and the API's metrics),
with the sample suffixes Prometheus sees (_total, _bucket, _count, _sum, _created).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

from factstream.api.metrics import ApiMetrics
from factstream.metrics import Metrics

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "monitoring"
DASHBOARD = MONITORING / "grafana" / "dashboards" / "factstream.json"
DATASOURCES = MONITORING / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
SCRAPE_CONFIGS = [MONITORING / "prometheus.yml", MONITORING / "prometheus-k8s.yml"]
JOBS = {"factstream-worker", "factstream-api"}

_SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gauge": ("",),
}
# What Prometheus adds to every target.
_SYNTHETIC = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "inf", "nan",
}  # fmt: skip
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENT = re.compile(r"(?<![\w:.$])([a-zA-Z_:][\w:]*)\b(?!\s*\()")


def exported_names() -> set[str]:
    """Every sample name the worker and the API can export."""
    metrics = Metrics.create()
    ApiMetrics.create(metrics)
    names = set()
    for family in metrics.registry.collect():
        names |= {family.name + suffix for suffix in _SUFFIXES[family.type]}
    return names


def exported_labels() -> dict[str, set[str]]:
    """Label names by sample name, from the metric objects of the worker and the API."""
    metrics = Metrics.create()
    objects = [getattr(metrics, f.name) for f in dataclasses.fields(metrics)]
    labels: dict[str, set[str]] = {}
    for group in [*objects, ApiMetrics.create(metrics)]:
        if not dataclasses.is_dataclass(group):
            continue
        for field in dataclasses.fields(group):
            metric = getattr(group, field.name)
            if not isinstance(metric, MetricWrapperBase):
                continue
            names = set(metric._labelnames) | {"job", "instance"}  # Prometheus adds these
            for family in metric.describe():
                for suffix in _SUFFIXES[family.type]:
                    extra = {"le"} if suffix == "_bucket" else set()
                    labels[family.name + suffix] = names | extra
    return labels


def selectors(expr: str) -> list[tuple[str, set[str]]]:
    """(metric, label names matched) for every ``metric{...}`` selector of an expression."""
    found = []
    for name, body in re.findall(r"([a-zA-Z_:][\w:]*)\{([^}]*)\}", _STRING.sub('""', expr)):
        found.append((name, set(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", body))))
    return found


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (labels, functions and keywords removed)."""
    text = _STRING.sub('""', expr)
    # Grafana's label_values(metric, label): the second argument is a label.
    text = re.sub(r"label_values\(([^,()]+),\s*\w+\s*\)", r"(\1)", text)
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges and subqueries
    text = _GROUPING.sub("", text)
    text = re.sub(r"\$\w+|\$\{[^}]*\}", "", text)  # Grafana variables
    return {
        name
        for name in _IDENT.findall(text)
        if name.lower() not in _KEYWORDS and not re.fullmatch(r"\d.*", name)
    }


def _rules() -> list[dict[str, Any]]:
    data = yaml.safe_load((MONITORING / "alerts.yml").read_text())
    return [rule for group in data["groups"] for rule in group["rules"]]


def _dashboard() -> dict[str, Any]:
    return dict(json.loads(DASHBOARD.read_text()))


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    flat = []
    for panel in dashboard["panels"]:
        flat.append(panel)
        flat += panel.get("panels", [])
    return flat


def _dashboard_exprs() -> list[str]:
    dashboard = _dashboard()
    exprs = [t["expr"] for p in _panels(dashboard) for t in p.get("targets", [])]
    for var in dashboard["templating"]["list"]:
        query = var.get("query")
        exprs.append(query["query"] if isinstance(query, dict) else query)
    return exprs


def test_the_expression_parser_finds_metrics_and_nothing_else() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (le, stage) (rate(x_seconds_bucket{stage!="total",'
        ' job=~"a|b"}[5m]))) / on (job) group_left (model) y_total offset 1h > bool 0.5'
        " and label_values(z, namespace)"
    )
    assert metric_names(expr) == {"x_seconds_bucket", "y_total", "z"}
    assert metric_names("label_values(factstream_edits_total, namespace)") == {
        "factstream_edits_total"
    }


def test_the_exported_names_carry_prometheus_suffixes() -> None:
    names = exported_names()
    assert {
        "factstream_documents_total",
        "factstream_stage_seconds_bucket",
        "factstream_facts",
        "factstream_consumer_lag",
        "factstream_ask_seconds_count",
        "factstream_api_requests_total",
        "factstream_lm_outage",
    } <= names
    assert "factstream_documents" not in names


@pytest.mark.parametrize("source", ["alerts", "dashboard"])
def test_every_label_matched_is_one_the_metric_has(source: str) -> None:
    exprs = [r["expr"] for r in _rules()] if source == "alerts" else _dashboard_exprs()
    labels = exported_labels()
    matched = [sel for expr in exprs for sel in selectors(expr)]
    assert matched
    for name, used in matched:
        if name in _SYNTHETIC:
            continue
        assert used <= labels[name], f"{name} has no label {sorted(used - labels[name])}"


@pytest.mark.parametrize("source", ["alerts", "dashboard"])
def test_every_metric_read_is_exported(source: str) -> None:
    exprs = [r["expr"] for r in _rules()] if source == "alerts" else _dashboard_exprs()
    read = set().union(*(metric_names(e) for e in exprs))
    unknown = read - exported_names() - _SYNTHETIC
    assert not unknown, f"{source} reads metrics the code does not export: {sorted(unknown)}"
    assert {name for name in read if name.startswith("factstream_")}, "nothing read"


def test_alerts_cover_what_operators_are_paged_for() -> None:
    rules = {rule["alert"]: rule for rule in _rules()}
    reads = {name: metric_names(rule["expr"]) for name, rule in rules.items()}
    wanted = {
        "factstream_consumer_lag",
        "factstream_dead_letters_total",
        "factstream_lm_requests_total",
        "factstream_lm_outage",
        "factstream_ask_seconds_bucket",
    }
    assert wanted <= set().union(*reads.values())
    for name, rule in rules.items():
        assert rule["labels"]["severity"] in {"info", "warning", "critical"}, name
        assert rule["annotations"]["summary"], name
    jobs = set(re.findall(r'job="([^"]+)"', " ".join(r["expr"] for r in rules.values())))
    assert jobs <= JOBS


def test_dashboard_covers_ingest_edits_lm_and_ask_on_the_provisioned_datasource() -> None:
    dashboard = _dashboard()
    rows = [p["title"] for p in dashboard["panels"] if p["type"] == "row"]
    assert rows == ["Ingest", "Edits and facts", "LM", "Ask"]
    uid = yaml.safe_load(DATASOURCES.read_text())["datasources"][0]["uid"]
    panels = [p for p in _panels(dashboard) if p["type"] != "row"]
    assert panels and all(p["datasource"]["uid"] == uid and p["targets"] for p in panels)
    ids = [p["id"] for p in _panels(dashboard)]
    assert len(ids) == len(set(ids))
    read = set().union(*(metric_names(e) for e in _dashboard_exprs()))
    assert {"factstream_facts", "factstream_edits_total", "factstream_ask_seconds_bucket"} <= read


@pytest.mark.parametrize("path", SCRAPE_CONFIGS, ids=lambda p: p.name)
def test_scrape_configs_scrape_the_worker_and_the_api_and_load_the_rules(path: Path) -> None:
    config = yaml.safe_load(path.read_text())
    assert {job["job_name"] for job in config["scrape_configs"]} >= JOBS
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
