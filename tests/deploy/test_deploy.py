"""``deploy/``: the Kubernetes manifests validate against the Kubernetes schemas (``kubernetes-validate``), and
every service of them and of the Compose file runs one of our commands with arguments our parser accepts and
settings that exist; its ports, probes and health checks name the port it listens on and routes it answers."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from ledgermirror.cli import build_parser
from ledgermirror.settings import PREFIX, Settings
from ledgermirror.status.config import PREFIX as STATUS_PREFIX
from ledgermirror.status.config import StatusSettings

DEPLOY = Path(__file__).parents[2] / "deploy"
COMPOSE = DEPLOY / "compose" / "compose.yaml"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
VARIABLES = {PREFIX + item.name.upper() for item in dataclasses.fields(Settings)} | {
    STATUS_PREFIX + item.name.upper() for item in dataclasses.fields(StatusSettings)
}
ROUTES = {
    "serve": {"/health/readiness", "/health/liveness", "/metrics"},
    "status": {"/api/v2/status.json", "/api/v2/summary.json", "/metrics"},
    "import": {"/metrics"},
    "db": set(),
}


def _documents(path: Path) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def _parsed(args: list[str]) -> argparse.Namespace:
    """Our own command line's reading of ``args`` (argparse exits 2 on anything it does not take)."""
    return build_parser().parse_args(args)


def _grpc_port(args: argparse.Namespace) -> int | None:
    """The gRPC API's port of a ``serve`` (0: off)."""
    port = getattr(args, "grpc_port", None)
    return int(port) if args.command == "serve" and port else None


def _listens_on(args: argparse.Namespace) -> int | None:
    if args.command == "serve":
        return int(args.port)
    if args.command == "status":
        return int(args.status_port)
    if args.command == "import":
        return None if args.metrics_port is None else int(args.metrics_port)
    return None


def test_the_manifests_validate_against_the_kubernetes_schemas() -> None:
    assert {path.name for path in MANIFESTS} >= {"api.yaml", "status.yaml", "importer.yaml", "configmap.yaml"}
    for path in MANIFESTS:
        for document in _documents(path):
            kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)


def _pod_specs() -> dict[str, dict[str, Any]]:
    found = {}
    for path in MANIFESTS:
        for document in _documents(path):
            if document["kind"] in {"Deployment", "StatefulSet"}:
                found[document["metadata"]["name"]] = document
    return found


def test_each_workload_runs_our_command_with_settings_that_exist_and_probes_its_own_routes() -> None:
    workloads = _pod_specs()
    assert workloads["ledgermirror-importer"]["kind"] == "StatefulSet"
    assert workloads["ledgermirror-importer"]["spec"]["replicas"] == 1  # one writer
    assert workloads["ledgermirror-api"]["kind"] == "Deployment"
    assert workloads["ledgermirror-status"]["kind"] == "Deployment"
    configmap = next(doc for path in MANIFESTS for doc in _documents(path) if doc["kind"] == "ConfigMap")
    assert set(configmap["data"]) <= VARIABLES, set(configmap["data"]) - VARIABLES
    commands = set()
    for workload in workloads.values():
        spec = workload["spec"]["template"]["spec"]
        for container in spec.get("initContainers", []) + spec["containers"]:
            args = _parsed(container["args"])
            commands.add(args.command)
            names = {item["name"] for item in container.get("env", [])}
            assert names <= VARIABLES, names - VARIABLES
            port = _listens_on(args)
            ports = {item["name"]: item["containerPort"] for item in container.get("ports", [])}
            expected = {number for number in (port, _grpc_port(args)) if number is not None}
            assert set(ports.values()) == expected, container["name"]
            for probe in ("readinessProbe", "livenessProbe"):
                if probe in container:
                    check = container[probe]["httpGet"]
                    assert check["path"] in ROUTES[args.command], (container["name"], check["path"])
                    assert ports[check["port"]] == port
            if container in spec["containers"]:
                assert container["resources"]["requests"]["memory"]
    assert commands == {"serve", "status", "import", "db"}
    readiness = workloads["ledgermirror-api"]["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert readiness["httpGet"]["path"] == "/health/readiness"


def _compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


def _ours(service: dict[str, Any]) -> bool:
    return service.get("image") == "ledgermirror:local"


def test_the_compose_file_runs_our_commands_with_settings_that_exist() -> None:
    services = _compose()["services"]
    ours = {name: service for name, service in services.items() if _ours(service)}
    by_command: dict[str, list[str]] = {}
    for name, service in ours.items():
        args = _parsed(service["command"])
        by_command.setdefault(args.command, []).append(name)
        environment = service.get("environment", {})
        assert set(environment) <= VARIABLES, (name, set(environment) - VARIABLES)
        assert "LEDGERMIRROR_DB_URL" in environment, name  # never an embedded database in a container
        port = _listens_on(args)
        published = {int(str(mapping).rsplit(":", 1)[1]) for mapping in service.get("ports", [])}
        assert published <= {number for number in (port, _grpc_port(args)) if number is not None}, name
        if port is not None:
            check = " ".join(service["healthcheck"]["test"])
            url = re.search(r"http://127\.0\.0\.1:(\d+)(/[\w./-]*)", check)
            assert url is not None, name
            assert int(url.group(1)) == port, name
            assert url.group(2) in ROUTES[args.command], (name, url.group(2))
        for needed in service.get("depends_on", {}):
            assert needed in services, (name, needed)
    assert len(by_command["serve"]) == 2
    assert len(by_command["import"]) == 1
    assert by_command.keys() == {"serve", "import", "status", "db"}


def test_the_compose_api_reads_the_standby_first_and_the_importer_writes_the_primary() -> None:
    services = _compose()["services"]
    standby = services["standby"]
    assert "pg_basebackup" in (DEPLOY / "compose" / "postgres" / "standby-entrypoint.sh").read_text()
    assert standby["depends_on"]["primary"]["condition"] == "service_healthy"
    for name in ("api-1", "api-2"):
        urls = services[name]["environment"]["LEDGERMIRROR_API_DB_URL"].split(",")
        assert ["@standby:" in urls[0], "@primary:" in urls[-1]] == [True, True], name
    assert "@primary:" in services["importer"]["environment"]["LEDGERMIRROR_DB_URL"]


def test_the_grafana_dashboard_is_wired_in() -> None:
    grafana = _compose()["services"]["grafana"]
    mounted = {volume.split(":")[0]: volume.split(":")[1] for volume in grafana["volumes"]}
    dashboard = (COMPOSE.parent / "../../docs/grafana-dashboard.json").resolve()
    assert any((COMPOSE.parent / source).resolve() == dashboard for source in mounted)
    json.loads(dashboard.read_text())
    providers = yaml.safe_load((COMPOSE.parent / "grafana" / "dashboards.yaml").read_text())
    target = next(target for source, target in mounted.items() if source.endswith("grafana-dashboard.json"))
    assert target.startswith(providers["providers"][0]["options"]["path"])
    scrape = yaml.safe_load((COMPOSE.parent / "prometheus.yaml").read_text())
    targets = {
        target
        for job in scrape["scrape_configs"]
        for group in job["static_configs"]
        for target in group["targets"]
    }
    assert targets == {"api-1:5551", "api-2:5551", "importer:9100", "status:5552"}


@pytest.mark.parametrize("path", [COMPOSE, *MANIFESTS], ids=lambda path: path.name)
def test_no_file_holds_a_password_of_its_own(path: Path) -> None:
    """Passwords come from the environment (Compose) or a Secret (Kubernetes), never written in."""
    assert not re.search(r"://[^:@/\s]+:(?!\$\{)[^@\s]+@", path.read_text())
