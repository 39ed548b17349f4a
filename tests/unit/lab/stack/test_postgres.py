"""The PostgreSQL service: found where Debian puts it, run from the cache, never as root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from factstream.config import Settings
from factstream.errors import ToolMissing
from factstream_lab.stack.manager import build_services
from factstream_lab.stack.postgres import PostgresService, find_postgres_bin


def _service(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bin_dir: Path) -> PostgresService:
    monkeypatch.setenv("FACTSTREAM_POSTGRES_PORT", "55439")
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FACTSTREAM_LOCAL_POSTGRES_BIN_DIR", str(bin_dir))
    [svc] = build_services(Settings(), ["postgres"])
    assert isinstance(svc, PostgresService)
    return svc


def test_it_listens_on_its_port_with_its_data_and_socket_in_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "pg" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "initdb").touch()
    svc = _service(monkeypatch, tmp_path, bin_dir)
    assert [p.number for p in svc.ports] == [55439]
    assert svc.endpoint == "postgresql://factstream@127.0.0.1:55439/factstream"
    argv = svc.launch().argv
    server = argv.index(str(bin_dir / "postgres"))
    assert argv[server:] == [
        str(bin_dir / "postgres"),
        "-D",
        str(tmp_path / "data" / "postgres-55439"),
        "-h",
        "127.0.0.1",
        "-p",
        "55439",
        "-k",
        str(svc.socket_dir),  # in the cache unless too long a path for a socket
    ]
    # PostgreSQL refuses root: as root it runs in a user namespace as an ordinary user.
    assert (server > 0) == (os.geteuid() == 0)
    if server:
        assert argv[1:server] == ["--user", "--map-user=1000", "--map-group=1000"]


def test_a_missing_server_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(ToolMissing, match="apt-get install postgresql"):
        find_postgres_bin(tmp_path)


def test_the_newest_debian_version_is_found_when_none_is_configured() -> None:
    if not Path("/usr/lib/postgresql").is_dir():
        pytest.skip("no Debian PostgreSQL here")
    found = find_postgres_bin(None)
    assert (found / "initdb").exists() and (found / "postgres").exists()


def test_a_socket_path_too_long_for_linux_moves_to_the_temporary_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    svc = _service(monkeypatch, deep, deep)
    assert len(str(svc.socket_dir / ".s.PGSQL.55439")) <= 100
    assert not svc.socket_dir.is_relative_to(deep)
