"""Who queued a job, for which lab and until when: an Ed25519 signature over the job's id, its
lab, its expiry and its campaign (issues 28, 39 item 6).

Keys are OpenSSH's format, so `ssh-keygen -t ed25519 -N ""` makes them as well as `vpnbench
keygen`: the enqueuer signs with its private key file (--signing-key FILE or $VPNBENCH_SIGNING_KEY,
never the key on a command line), a worker's file lists the public keys it trusts. What is
signed is a context string and, serialised canonically (JSON, keys sorted, no spaces), the job
id, the lab's name (the queue database's, which each worker's file names too), the time after
which no worker starts the job (`not_after`, UTC) and the campaign: so a job's campaign cannot
be edited, nor its signature moved to another job or another lab's database, nor the job run
after it expired, nor the signature mistaken for one of ssh's or for the first version's (id and
campaign only, which no worker accepts now). The key id stored beside it is the key's
fingerprint as `ssh-keygen -l` shows it (SHA256:...).
"""

import base64
import binascii
import dataclasses
import getpass
import hashlib
import json
import os
import platform
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from vpnbench.foundation.errors import UserError
from vpnbench.foundation.safe_files import read_own_file, write_private

KEY_ENV = "VPNBENCH_SIGNING_KEY"
CONTEXT = b"vpnbench queued job, signature v2\0"


def signed_bytes(job_id: str, lab: str, not_after: str, source: dict) -> bytes:
    """What a job's signature covers. Raises ValueError for a source JSON cannot carry (NaN)."""
    covered = {"job": job_id, "lab": lab, "not_after": not_after, "campaign": source}
    return CONTEXT + json.dumps(covered, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                allow_nan=False).encode()


def digest(signature: str) -> str:
    """What a worker remembers of a signature it ran: its SHA-256, hex."""
    return hashlib.sha256(signature.encode()).hexdigest()


def fingerprint(public: Ed25519PublicKey) -> str:
    """The key id: SHA-256 of the key's OpenSSH blob, base64 without padding (as ssh-keygen -l)."""
    blob = base64.b64decode(public.public_bytes(serialization.Encoding.OpenSSH,
                                                serialization.PublicFormat.OpenSSH).split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def public_key(line: str) -> Ed25519PublicKey:
    """An `ssh-ed25519 AAAA... comment` line; ValueError naming what is wrong otherwise."""
    try:
        key = serialization.load_ssh_public_key(line.strip().encode())
    except (ValueError, UnsupportedAlgorithm):
        raise ValueError(f"{line[:40]!r} is not an OpenSSH public key line; allowed: \"ssh-ed25519 AAAA... "
                         "comment\" (a .pub file of vpnbench keygen or ssh-keygen -t ed25519)") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"{line[:40]!r} is not an Ed25519 key; allowed: ssh-ed25519 keys only")
    return key


@dataclasses.dataclass(frozen=True)
class SigningKey:
    key: Ed25519PrivateKey
    key_id: str

    def sign(self, job_id: str, lab: str, not_after: str, source: dict) -> tuple[str, str]:
        """The key id and the signature (base64) to store beside the job."""
        return self.key_id, base64.b64encode(self.key.sign(signed_bytes(job_id, lab, not_after, source))).decode()


def load_signing_key(path: str) -> SigningKey:
    """The enqueuer's private key, refused when anyone but its owner (this user) may read it."""
    where = f"--signing-key: {path}"
    data = read_own_file(path, where, 0o077, "that only it may read (chmod 600)")
    try:
        key = serialization.load_ssh_private_key(data, password=None)
    except TypeError:  # cryptography's word for a passphrase it was not given
        raise UserError(f"{where}: protected by a passphrase; allowed: an unencrypted key kept 0600") from None
    except (ValueError, UnsupportedAlgorithm):
        raise UserError(f"{where}: not an OpenSSH private key; make one with `vpnbench keygen -o FILE`") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UserError(f"{where}: not an Ed25519 key; allowed: ssh-ed25519 keys only")
    return SigningKey(key, fingerprint(key.public_key()))


def verify(public: Ed25519PublicKey, job_id: str, lab: str, not_after: str, source: dict, signature: str) -> bool:
    try:
        public.verify(base64.b64decode(signature, validate=True), signed_bytes(job_id, lab, not_after, source))
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def keygen(out: str) -> tuple[Path, Path, str]:
    """A new key pair: OUT (private, 0600) and OUT.pub, each written to a fresh name and renamed
    into place (never through a planted link). An existing key is never replaced; returns the two
    paths and the public key line."""
    private_path, public_path = Path(out), Path(f"{out}.pub")
    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise UserError(f"-o: {path} exists; keygen never overwrites a key (choose another name)")
    key = Ed25519PrivateKey.generate()
    line = (key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
            .decode() + f" {getpass.getuser()}@{platform.node()}")
    try:
        write_private(private_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                                      serialization.NoEncryption()), 0o600)
        write_private(public_path, f"{line}\n".encode(), 0o644)
    except OSError as exc:
        raise UserError(f"-o: {out}: {exc.strerror}") from None
    return private_path, public_path, line
