"""A results database's URL and its secrets (issue 28): where the URL comes from without its
password in any process's argv, and the one masking every view shows it through.

A URL in argv is in /proc/PID/cmdline, which every user of the machine reads (`ps`) for as long
as the process runs: hours, for a lab worker. So the URL comes from $VPNBENCH_DB (the
environment is readable by the process's owner only) or from a file only its owner can read
(--db-file); or the URL carries no password and libpq finds it itself, in $PGPASSWORD or
~/.pgpass (or a `passfile=` parameter), which SQLAlchemy and psycopg pass through untouched.

Masking covers every form SQLAlchemy and libpq take a password in: the userinfo
(`user:PASSWORD@`, percent-encoded or not; SQLAlchemy reads it up to the first '@', so it may hold
/ ? # and :), and any query parameter whose name holds "password" in any case (`password=`,
`sslpassword=`). Where the text is ambiguous, more is masked rather than less."""

import os
import re
import stat
from pathlib import Path
from urllib.parse import unquote, unquote_plus

from vpnbench.foundation.errors import UserError

URL_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
MASK = "***"

# scheme://user:PASSWORD@ — to the last '@': an unencoded '@' in a password is then masked too
# (SQLAlchemy would cut the password at the first one and take the rest for the host).
_USERINFO = re.compile(r"^([A-Za-z][\w+.-]*://[^:/@?#]*:)(.*)@", re.DOTALL)
_USERINFO_IN_TEXT = re.compile(r"([A-Za-z][\w+.-]*://[^:/@?#\s]*:)(\S*)@")  # a URL inside a message
# ?password=…, &sslpassword=…, any case; and libpq's key=value form (password=… or password = '…').
_QUERY = re.compile(r"([?&;][^=&?#]*password[^=&]*=)[^&]*", re.IGNORECASE)
_KEYWORD = re.compile(r"(?<![\w?&;])(\w*password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE)
# A password shorter than this is not searched for in free text (error messages): replacing every
# 'a' in a line would hide the line, not the password, which no message prints whole anyway.
MIN_SECRET = 4


def is_url(target: str | Path) -> bool:
    """A database server's URL rather than an SQLite file's path."""
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def display_name(target: str | Path) -> str:
    """The path, or the URL with every password masked: what terminal lines, pages, exports and
    error messages show."""
    return _mask(str(target), _USERINFO)


def _mask(text: str, userinfo: re.Pattern) -> str:
    text = userinfo.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    text = _QUERY.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return _KEYWORD.sub(lambda m: f"{m.group(1)}{MASK}", text)


def secrets_in(target: str | Path) -> set[str]:
    """The passwords the URL holds, as written and decoded."""
    text = str(target)
    found = set()
    if match := _USERINFO.match(text):
        found.add(match.group(2))
        # An '@' not encoded: SQLAlchemy takes the password to the first one and the rest for the
        # host and port, which its messages then quote.
        found.update(re.split("[@:]", match.group(2)))
    found.update(m.group(0).split("=", 1)[1] for m in _QUERY.finditer(text))
    found.update(m.group(2).strip("'") for m in _KEYWORD.finditer(text))
    found |= {unquote(s) for s in found} | {unquote_plus(s) for s in found}
    found |= {repr(s)[1:-1] for s in found}  # as a message quotes it: 'a\\b'
    return {s for s in found if len(s) >= MIN_SECRET}


def scrub(text: str, target: str | Path) -> str:
    """text (an error message, a log line) with the URL shown masked and its passwords gone,
    whatever quoting the library that wrote it used."""
    text = text.replace(str(target), display_name(target))
    for secret in sorted(secrets_in(target), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return _mask(text, _USERINFO_IN_TEXT)


def read_url_file(path: str) -> str:
    """The URL in --db-file: a file only its owner reads, owned by whoever runs vpnbench (another
    user's file could point a root process at their own server)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise UserError(f"--db-file: {path!r}: {exc.strerror}") from None
    with os.fdopen(fd) as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"--db-file: {path!r} is not a regular file")
        if info.st_mode & 0o077:
            raise UserError(f"--db-file: {path!r} is readable by others (mode {stat.S_IMODE(info.st_mode):04o}); "
                            f"allowed: 0600 or stricter (chmod 600 {path})")
        if info.st_uid != os.geteuid():
            raise UserError(f"--db-file: {path!r} belongs to uid {info.st_uid}, not to the user running vpnbench "
                            f"(uid {os.geteuid()})")
        lines = [line.strip() for line in file.read().splitlines() if line.strip()]
    if len(lines) != 1:
        raise UserError(f"--db-file: {path!r} holds {len(lines)} lines; allowed: one, the database's URL or file")
    return lines[0]
