"""promtool (built from deploy/local/promtool, cached) checks monitoring/ as Prometheus loads it.

Needs the Go module proxy on the first run, like the Weaviate build; a failed build fails
these tests with the build log named, it never skips them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from fixtures.services import plain_progress

from factstream.config import Settings
from factstream_lab.stack.process import CacheLayout
from factstream_lab.stack.promtool import provision_promtool

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "monitoring"


@pytest.fixture(scope="module")
def promtool(pytestconfig: pytest.Config) -> Path:
    layout = CacheLayout(Settings().local.cache_dir)
    return provision_promtool(layout, plain_progress(pytestconfig))


def _check(promtool: Path, *args: str | Path) -> str:
    proc = subprocess.run(
        [str(promtool), "check", *map(str, args)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_alert_rules_pass_promtool(promtool: Path) -> None:
    groups = yaml.safe_load((MONITORING / "alerts.yml").read_text())["groups"]
    rules = sum(len(group["rules"]) for group in groups)
    assert rules >= 10
    out = _check(promtool, "rules", MONITORING / "alerts.yml")
    assert f"SUCCESS: {rules} rules found" in out, out


@pytest.mark.parametrize("name", ["prometheus.yml", "prometheus-k8s.yml"])
def test_scrape_configs_pass_promtool(promtool: Path, name: str, tmp_path: Path) -> None:
    # The configs name the rules by their path in the container (/etc/prometheus); check them
    # with the rule file beside the config, as the containers mount it.
    config = tmp_path / name
    config.write_text((MONITORING / name).read_text().replace("/etc/prometheus/", ""))
    shutil.copy(MONITORING / "alerts.yml", tmp_path / "alerts.yml")
    out = _check(promtool, "config", config)
    assert "SUCCESS" in out and "alerts.yml" in out, out


def test_promtool_rejects_a_broken_rule(promtool: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(x[5m]) > \n"
    )
    proc = subprocess.run(
        [str(promtool), "check", "rules", str(broken)], capture_output=True, text=True, check=False
    )
    assert proc.returncode != 0
