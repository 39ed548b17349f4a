"""PostgreSQL from the system's packages (Debian: ``postgresql``), run from the cache folder.

Nothing is built: the binaries are found (``FACTSTREAM_LOCAL_POSTGRES_BIN_DIR``, else the
newest ``/usr/lib/postgresql/*/bin``, else PATH). Before the first start ``initdb`` makes a
cluster in ``<cache>/data/postgres-<port>`` (trust authentication for the configured user,
listening on 127.0.0.1 and a unix socket in ``<cache>/run`` (or, where that path is too
long for a socket, in the system's temporary folder) only); the configured database
is created once the server answers. PostgreSQL refuses to run as root: as root, initdb and
the server run in a user namespace (``unshare --user``) where they are an ordinary user who
still owns the cache folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

import psycopg
from psycopg import sql

from factstream.config import LocalSettings, PostgresSettings
from factstream.errors import ToolMissing
from factstream_lab.stack.base import LaunchSpec, LocalService, Port
from factstream_lab.stack.process import CacheLayout, require_tool, run_step
from factstream_lab.stack.progress import Outcome, Progress

__all__ = ["PostgresService", "find_postgres_bin"]

_HINT = "install PostgreSQL (Debian: apt-get install postgresql; make tools does it)"
_DEBIAN = Path("/usr/lib/postgresql")
_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes with the NUL; keep some slack


def _version(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.parent.name)) or (0,)


def find_postgres_bin(configured: Path | None) -> Path:
    """The folder holding ``initdb`` and ``postgres``; raises ToolMissing without one."""
    if configured is not None:
        if not (configured / "initdb").exists():
            raise ToolMissing("postgres", str(configured / "initdb"), _HINT)
        return configured
    found = sorted(_DEBIAN.glob("*/bin/initdb"), key=lambda p: _version(p.parent))
    if found:
        return found[-1].parent
    return Path(require_tool("postgres", "initdb", _HINT)).parent


def _unprivileged() -> list[str]:
    """A prefix that runs a command as an ordinary user, where we are root."""
    if os.geteuid() != 0:
        return []
    unshare = require_tool("postgres", "unshare", "install util-linux")
    return [unshare, "--user", "--map-user=1000", "--map-group=1000"]


class PostgresService(LocalService):
    """One PostgreSQL cluster on 127.0.0.1 for the mirror and its tests."""

    name = "postgres"

    def __init__(
        self, postgres: PostgresSettings, local: LocalSettings, layout: CacheLayout
    ) -> None:
        super().__init__(layout)
        self.postgres, self.local = postgres, local

    @property
    def host(self) -> str:
        return self.postgres.host

    @property
    def ports(self) -> list[Port]:
        return [Port(self.postgres.port, "FACTSTREAM_POSTGRES_PORT")]

    @property
    def endpoint(self) -> str:
        pg = self.postgres
        return f"postgresql://{pg.user}@{pg.host}:{pg.port}/{pg.database}"

    @property
    def data_dir(self) -> Path:
        return self.layout.data / f"postgres-{self.postgres.port}"

    @property
    def socket_dir(self) -> Path:
        """The unix socket's folder: in the cache, unless that path is too long for a socket
        (107 bytes on Linux), then a folder of its own under the system's temporary one."""
        port = self.postgres.port
        folder = self.layout.run / f"postgres-{port}"
        if len(str(folder / f".s.PGSQL.{port}").encode()) <= _SOCKET_PATH_MAX:
            return folder
        digest = hashlib.sha256(str(folder).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"factstream-pg-{digest}"

    def provision(self, progress: Progress | None = None) -> None:
        progress = progress or Progress()
        bin_dir = find_postgres_bin(self.local.postgres_bin_dir)
        progress.report(self.name, "find PostgreSQL", Outcome.CACHED, str(bin_dir))

    def prepare(self) -> None:
        if (self.data_dir / "PG_VERSION").exists():
            return
        bin_dir = find_postgres_bin(self.local.postgres_bin_dir)
        staging = self.data_dir.with_name(f"{self.data_dir.name}.partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.parent.mkdir(parents=True, exist_ok=True)
        what = f"initdb {self.data_dir}"
        argv: list[str | Path] = [
            *_unprivileged(),
            bin_dir / "initdb",
            "-D",
            staging,
            "-U",
            self.postgres.user,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-instructions",
        ]
        run_step(self.name, what, argv, self.build_log)
        staging.rename(self.data_dir)

    def launch(self) -> LaunchSpec:
        bin_dir = find_postgres_bin(self.local.postgres_bin_dir)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            *_unprivileged(),
            str(bin_dir / "postgres"),
            "-D",
            str(self.data_dir),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.postgres.port),
            "-k",
            str(self.socket_dir),
        ]
        return LaunchSpec(argv)

    def ready(self) -> bool:
        """It answers, and the configured database exists (created here the first time)."""
        pg = self.postgres
        password = pg.password.get_secret_value() if pg.password else None
        try:
            with psycopg.connect(
                host=pg.host,
                port=pg.port,
                user=pg.user,
                password=password,
                dbname="postgres",
                connect_timeout=2,
                autocommit=True,
            ) as conn:
                found = conn.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", (pg.database,)
                ).fetchone()
                if found is None:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(pg.database)))
        except psycopg.Error:
            return False
        return True
