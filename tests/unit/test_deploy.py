"""deploy/: the compose stack and the Kubernetes manifests, validated without an engine or cluster.

compose: the real `docker compose config` parses and resolves deploy/compose.yaml (it needs no
engine); Docker Compose v2's binary comes from factstream_lab/stack/compose_cli.py.
Kubernetes: every manifest validates strictly against the Kubernetes API schemas bundled in
kubernetes-validate, and the objects refer to each other consistently.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from factstream.config import Settings, env_var_table
from factstream_lab.stack.compose_cli import provision_compose
from factstream_lab.stack.process import CacheLayout

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "k8s"
KUBERNETES_VERSION = "1.33.0"
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 - what a container must listen on
SERVICES = {"kafka", "weaviate", "vllm", "worker", "api", "prometheus", "grafana"}
_FACTSTREAM_VAR = re.compile(r"\bFACTSTREAM_[A-Z0-9_]+\b")


def _compose_plugin() -> Path:
    """Docker Compose v2's binary, fetched into the cache folder (`make setup` does it)."""
    return provision_compose(CacheLayout(Settings().local.cache_dir))


@pytest.fixture(scope="module")
def docker_compose(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, str]]:
    """`docker compose` (argv and env): the docker CLI with that binary as its plugin.

    The plugin is given through a DOCKER_CONFIG of our own, so the user's is never touched;
    without a docker CLI, the same binary runs standalone (`docker-compose`).
    """
    config = tmp_path_factory.mktemp("docker-config")
    (config / "cli-plugins").mkdir()
    (config / "cli-plugins" / "docker-compose").symlink_to(_compose_plugin())
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(config),
        "DOCKER_CONFIG": str(config),
    }
    docker = shutil.which("docker")
    argv = [docker, "compose"] if docker else [str(_compose_plugin())]
    version = subprocess.run([*argv, "version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and "v2." in version.stdout, version.stderr
    return argv, env


@pytest.fixture(scope="module")
def compose_config(docker_compose: tuple[list[str], dict[str, str]]) -> dict[str, Any]:
    """deploy/compose.yaml as Compose resolves it (anchors, defaults, paths); no engine needed."""
    argv, env = docker_compose
    proc = subprocess.run(
        [*argv, "-f", str(COMPOSE), "config", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,  # no FACTSTREAM_* or compose variables from the shell
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


def test_compose_refuses_a_broken_file(
    docker_compose: tuple[list[str], dict[str, str]], tmp_path: Path
) -> None:
    broken = tmp_path / "compose.yaml"
    broken.write_text(
        COMPOSE.read_text().replace("    restart: unless-stopped", "    restart: 3", 1)
    )
    argv, env = docker_compose
    proc = subprocess.run(
        [*argv, "-f", str(broken), "config", "--quiet"], capture_output=True, text=True, env=env
    )
    assert proc.returncode != 0, proc.stdout


def manifests() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                yield path.name, doc


def _objects(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for _, doc in manifests() if doc["kind"] == kind}


def _pod_specs() -> dict[str, dict[str, Any]]:
    workloads = {**_objects("Deployment"), **_objects("StatefulSet")}
    return {name: doc["spec"]["template"]["spec"] for name, doc in workloads.items()}


def _container(workload: str) -> dict[str, Any]:
    return dict(_pod_specs()[workload]["containers"][0])


def _served_model(args: list[str]) -> str:
    return next(a.split("=", 1)[1] for a in args if a.startswith("--served-model-name="))


# --- compose ---------------------------------------------------------------------------------


def test_compose_runs_the_whole_stack(compose_config: dict[str, Any]) -> None:
    services = compose_config["services"]
    assert set(services) == SERVICES
    kafka = services["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    assert set(kafka["environment"]["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert kafka["environment"]["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    for name in ("worker", "api"):
        build = services[name]["build"]
        assert (Path(build["context"]) / build["dockerfile"]) == DEPLOY / "Dockerfile"
        assert services[name]["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert services["worker"]["command"] == ["worker"] and services["api"]["command"] == ["api"]
    assert services["worker"]["environment"]["FACTSTREAM_WORKER_METRICS_HOST"] == ALL_INTERFACES


def test_compose_gives_vllm_a_gpu_and_the_factstream_services_its_model(
    compose_config: dict[str, Any],
) -> None:
    services = compose_config["services"]
    vllm = services["vllm"]
    [device] = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert vllm["image"].startswith("vllm/vllm-openai:")
    model = _served_model(vllm["command"])
    assert model == "meta-llama/Llama-3.1-8B-Instruct"
    assert "HF_TOKEN" in vllm["environment"]
    for name in ("worker", "api"):
        env = services[name]["environment"]
        assert env["FACTSTREAM_LM_MODEL"] == model
        assert env["FACTSTREAM_LM_URL"] == "http://vllm:8000/v1"
        assert env["FACTSTREAM_LM_BACKEND"] == "vllm"


def test_compose_mounts_monitoring_into_prometheus_and_grafana(
    compose_config: dict[str, Any],
) -> None:
    services = compose_config["services"]
    for name in ("prometheus", "grafana"):
        for volume in services[name]["volumes"]:
            if volume["type"] == "bind":
                source = Path(volume["source"])
                assert source.exists(), source
                assert source.is_relative_to(ROOT / "monitoring"), source
    prometheus = {v["target"]: v["source"] for v in services["prometheus"]["volumes"]}
    assert prometheus["/etc/prometheus/prometheus.yml"] == str(ROOT / "monitoring/prometheus.yml")
    assert prometheus["/etc/prometheus/alerts.yml"] == str(ROOT / "monitoring/alerts.yml")
    grafana = {v["target"]: v.get("source") for v in services["grafana"]["volumes"]}
    assert grafana["/etc/grafana/provisioning"] == str(ROOT / "monitoring/grafana/provisioning")
    scrape = yaml.safe_load((ROOT / "monitoring/prometheus.yml").read_text())
    names = {
        job["job_name"]: job["dns_sd_configs"][0]["names"][0]
        for job in scrape["scrape_configs"]
        if "dns_sd_configs" in job
    }
    assert names == {
        "factstream-worker": "worker",
        "factstream-api": "api",
        "factstream-mirror": "mirror",
    }


def test_the_mirror_profile_adds_postgres_and_the_mirror(
    docker_compose: tuple[list[str], dict[str, str]],
) -> None:
    argv, env = docker_compose
    proc = subprocess.run(
        [*argv, "-f", str(COMPOSE), "--profile", "mirror", "config", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    services = json.loads(proc.stdout)["services"]
    assert set(services) == SERVICES | {"postgres", "mirror"}
    mirror = services["mirror"]
    assert mirror["command"] == ["mirror", "postgres"]
    assert mirror["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert mirror["environment"]["FACTSTREAM_POSTGRES_HOST"] == "postgres"
    assert mirror["environment"]["FACTSTREAM_MIRROR_METRICS_HOST"] == ALL_INTERFACES
    assert services["postgres"]["image"].startswith("postgres:")


# --- Kubernetes ------------------------------------------------------------------------------


def test_every_manifest_validates_against_the_kubernetes_schemas() -> None:
    docs = list(manifests())
    assert len(docs) > 10
    for name, doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        assert doc["metadata"].get("namespace", "factstream") == "factstream", name


def test_the_schema_check_rejects_a_mistake() -> None:
    _, worker = next((n, d) for n, d in manifests() if d["metadata"]["name"] == "factstream-worker")
    broken = json.loads(json.dumps(worker))
    broken["spec"]["template"]["spec"]["containers"][0]["port"] = 9464  # not a field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)
    broken = json.loads(json.dumps(worker))
    broken["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_selectors_match_their_pods_and_services_find_them() -> None:
    workloads = {**_objects("Deployment"), **_objects("StatefulSet")}
    pod_labels = []
    for name, doc in workloads.items():
        labels = doc["spec"]["template"]["metadata"]["labels"]
        assert doc["spec"]["selector"]["matchLabels"].items() <= labels.items(), name
        pod_labels.append(labels)
    for name, service in _objects("Service").items():
        selector = service["spec"]["selector"]
        assert any(selector.items() <= labels.items() for labels in pod_labels), name
    hpa = _objects("HorizontalPodAutoscaler")["factstream-api"]
    assert hpa["spec"]["scaleTargetRef"]["name"] in workloads


def test_references_to_config_maps_secrets_and_claims_resolve() -> None:
    config_maps, secrets = _objects("ConfigMap"), _objects("Secret")
    claims = set(_objects("PersistentVolumeClaim"))
    for workload, spec in _pod_specs().items():
        for volume in spec.get("volumes", []):
            if "configMap" in volume:
                assert volume["configMap"]["name"] in config_maps, workload
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims, workload
        for container in spec["containers"]:
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in config_maps, workload
            for var in container.get("env", []):
                ref = var.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in secrets[ref["name"]]["stringData"], (workload, var)


def test_vllm_gets_a_gpu_and_serves_the_configured_model() -> None:
    vllm = _container("vllm")
    assert vllm["resources"]["limits"]["nvidia.com/gpu"] == 1
    config = _objects("ConfigMap")["factstream-config"]["data"]
    assert _served_model(vllm["args"]) == config["FACTSTREAM_LM_MODEL"]
    assert config["FACTSTREAM_LM_URL"].startswith("http://vllm.")


def test_workers_do_not_outnumber_partitions_and_are_scraped() -> None:
    config = _objects("ConfigMap")["factstream-config"]["data"]
    worker = _objects("Deployment")["factstream-worker"]
    assert 1 <= worker["spec"]["replicas"] <= int(config["FACTSTREAM_WORKER_PARTITIONS"])
    ports = {p["name"]: p["containerPort"] for p in _container("factstream-worker")["ports"]}
    env = {v["name"]: v.get("value") for v in _container("factstream-worker")["env"]}
    assert ports["metrics"] == int(env["FACTSTREAM_WORKER_METRICS_PORT"])
    assert env["FACTSTREAM_WORKER_METRICS_HOST"] == ALL_INTERFACES
    api_ports = {p["name"]: p["containerPort"] for p in _container("factstream-api")["ports"]}
    assert api_ports["http"] == 8800
    labels = worker["spec"]["template"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/component"] == "worker"  # prometheus-k8s.yml keeps these


def test_the_monitoring_config_maps_are_rendered_from_monitoring() -> None:
    proc = subprocess.run(
        [sys.executable, str(K8S / "render_monitoring.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prometheus = _objects("ConfigMap")["prometheus-config"]["data"]
    assert prometheus["alerts.yml"] == (ROOT / "monitoring/alerts.yml").read_text()


# --- both ------------------------------------------------------------------------------------


def test_every_factstream_variable_named_in_deploy_is_a_real_setting() -> None:
    known = {row.name for row in env_var_table()}
    files = [COMPOSE, DEPLOY / "Dockerfile", *sorted(K8S.glob("*.yaml"))]
    named = {
        (path.name, var) for path in files for var in _FACTSTREAM_VAR.findall(path.read_text())
    }
    assert {var for _, var in named} >= {"FACTSTREAM_LM_URL", "FACTSTREAM_WORKER_METRICS_PORT"}
    unknown = sorted((name, var) for name, var in named if var not in known)
    assert not unknown, f"not settings of factstream.config: {unknown}"


def test_the_dockerfile_copies_what_exists_and_runs_the_cli() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    sources = [
        src
        for line in text.splitlines()
        if line.startswith("COPY ") and "--from=" not in line
        for src in line.split()[1:-1]
    ]
    assert sources and all((ROOT / src).exists() for src in sources), sources
    assert 'ENTRYPOINT ["factstream"]' in text
