"""A real PostgreSQL for the tests: Debian's server, `initdb` in a temporary directory, a Unix
socket there and no TCP (listen_addresses = ''), password authentication (scram-sha-256), run
as the `postgres` system user when the tests run as root (the server refuses root). Stopped
and removed at the end of the session."""

import dataclasses
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

USER, PASSWORD = "vpnbench", "s3cret-for-tests"


def server_bin() -> Path | None:
    """The newest installed server's bin directory (Debian keeps it off PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


@dataclasses.dataclass
class Postgres:
    socket_dir: Path

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@/{database}?host={self.socket_dir}"

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(host=str(self.socket_dir), user=USER, password=PASSWORD, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def query(self, database: str, sql: str) -> list[tuple]:
        import psycopg

        with psycopg.connect(host=str(self.socket_dir), user=USER, password=PASSWORD, dbname=database,
                             autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []


def start(bin_dir: Path, durable: bool = False):
    """Start a server; yields Postgres, then stops it and removes its directory. Tests skip fsync;
    durable (bench/store.py) keeps PostgreSQL's defaults."""
    root = Path(tempfile.mkdtemp(prefix="vpnbench-pg-"))  # short: a socket path has ~100 bytes
    as_user: list[str] = []
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if as_user:
        os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
    data, log = root / "data", root / "log"
    try:
        subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}",
                        "--auth=scram-sha-256", "-E", "UTF8", "--no-instructions", *([] if durable else ["--no-sync"])],
                       check=True, capture_output=True, text=True, timeout=60)
        options = f"-c listen_addresses='' -c unix_socket_directories={root}"
        if not durable:
            options += " -c fsync=off -c full_page_writes=off"
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                        "-w", "-t", "30", "start"], check=True, capture_output=True, text=True, timeout=60)
        yield Postgres(root)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
