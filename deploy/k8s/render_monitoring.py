"""Render 41-monitoring-config.yaml: the files of monitoring/ as ConfigMaps.

    python deploy/k8s/render_monitoring.py        # rewrite the file
    python deploy/k8s/render_monitoring.py --check  # exit 1 if it is out of date

monitoring/ stays the one place the scrape config, rules and dashboard are edited; a test
fails when this rendering drifts from it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "monitoring"
OUTPUT = Path(__file__).with_name("41-monitoring-config.yaml")

# ConfigMap name -> {key in the ConfigMap: file below monitoring/}
CONFIG_MAPS = {
    "prometheus-config": {
        "prometheus.yml": "prometheus-k8s.yml",
        "alerts.yml": "alerts.yml",
    },
    "grafana-datasources": {"prometheus.yml": "grafana/provisioning/datasources/prometheus.yml"},
    "grafana-dashboard-providers": {
        "factstream.yml": "grafana/provisioning/dashboards/factstream.yml"
    },
    "grafana-dashboards": {"factstream.json": "grafana/dashboards/factstream.json"},
}


class _Literal(str):
    """A string dumped as a YAML literal block, so the files stay readable in the manifest."""


def _literal(dumper: yaml.SafeDumper, value: _Literal) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


yaml.SafeDumper.add_representer(_Literal, _literal)


def render() -> str:
    """The manifest text."""
    docs: list[dict[str, Any]] = []
    for name, files in CONFIG_MAPS.items():
        data = {key: _Literal((MONITORING / path).read_text()) for key, path in files.items()}
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": "factstream",
                    "labels": {"app.kubernetes.io/part-of": "factstream"},
                },
                "data": data,
            }
        )
    header = "# Generated from monitoring/ by deploy/k8s/render_monitoring.py: edit monitoring/.\n"
    body: str = yaml.safe_dump_all(docs, sort_keys=False, width=1000, allow_unicode=True)
    return header + body


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT} is out of date: run python {Path(__file__).relative_to(ROOT)}")
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
