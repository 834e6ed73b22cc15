"""The ESP ciphers the studies compared, and what each needs from a data path.

One name per campaign value; each maps to the strongSwan proposal keyword, the Linux xfrm
algorithms that carry it in the kernel (to probe the kernel for them), and the strongSwan
plugins that can provide it to the userspace data path (libipsec uses libstrongswan's crypto).
"""

import dataclasses

from vpnbench.techniques.overhead import EspCipher


@dataclasses.dataclass(frozen=True)
class Cipher:
    name: str
    encrypts: bool  # False for null-*: integrity only, the payload crosses in clear
    xfrm: tuple[tuple[str, ...], ...]  # `ip xfrm state add` algorithm arguments, for the kernel probe
    plugins: tuple[frozenset[str], ...]  # every set must have one installed plugin (userspace)
    wire: EspCipher  # its bytes on the wire: IV, ICV, padding block (overhead.esp_outer)


def _aead(bits: int, icv: int) -> tuple[str, ...]:
    return ("aead", "rfc4106(gcm(aes))", "0x" + "00" * (bits // 8 + 4), str(icv * 8))


def _cbc(enc: str, key_bytes: int, auth: str, auth_bytes: int, trunc: int) -> tuple[tuple[str, ...], ...]:
    return (("enc", enc, "0x" + "00" * key_bytes if key_bytes else ""),  # ip wants "" for the null key
            ("auth-trunc", f"hmac({auth})", "0x" + "00" * auth_bytes, str(trunc)))


GCM = (frozenset({"openssl", "gcm"}), frozenset({"openssl", "aes", "aesni"}))
AES = frozenset({"openssl", "aes", "aesni"})
SHA1 = (frozenset({"openssl", "hmac"}), frozenset({"openssl", "sha1"}))
SHA2 = (frozenset({"openssl", "hmac"}), frozenset({"openssl", "sha2"}))

CIPHERS: dict[str, Cipher] = {c.name: c for c in (
    Cipher("aes128gcm8", True, (_aead(128, 8),), GCM, EspCipher(8, 8, 4)),
    Cipher("aes128gcm16", True, (_aead(128, 16),), GCM, EspCipher(8, 16, 4)),
    Cipher("aes256gcm8", True, (_aead(256, 8),), GCM, EspCipher(8, 8, 4)),
    Cipher("aes256gcm16", True, (_aead(256, 16),), GCM, EspCipher(8, 16, 4)),
    Cipher("chacha20poly1305", True, (("aead", "rfc7539esp(chacha20,poly1305)", "0x" + "00" * 36, "128"),),
           (frozenset({"openssl", "chapoly"}),), EspCipher(8, 16, 4)),
    Cipher("aes128-sha256", True, _cbc("cbc(aes)", 16, "sha256", 32, 128), (AES, *SHA2), EspCipher(16, 16, 16)),
    Cipher("aes256-sha256", True, _cbc("cbc(aes)", 32, "sha256", 32, 128), (AES, *SHA2), EspCipher(16, 16, 16)),
    Cipher("aes256-sha384", True, _cbc("cbc(aes)", 32, "sha384", 48, 192), (AES, *SHA2), EspCipher(16, 24, 16)),
    Cipher("aes256-sha512", True, _cbc("cbc(aes)", 32, "sha512", 64, 256), (AES, *SHA2), EspCipher(16, 32, 16)),
    Cipher("3des-sha256", True, _cbc("cbc(des3_ede)", 24, "sha256", 32, 128),
           (frozenset({"openssl", "des"}), *SHA2), EspCipher(8, 16, 8)),
    Cipher("null-sha1", False, _cbc("ecb(cipher_null)", 0, "sha1", 20, 96), (*SHA1,), EspCipher(0, 12, 4)),
    Cipher("null-sha256", False, _cbc("ecb(cipher_null)", 0, "sha256", 32, 128), (*SHA2,), EspCipher(0, 16, 4)),
)}

DEFAULT_IKE = "aes256gcm16-prfsha256-x25519"
WEAK_GROUPS = {"modp768": "768-bit MODP", "modp1024": "1024-bit MODP", "modp1536": "1536-bit MODP"}
# Post-quantum key exchange (ML-KEM, RFC 9370 additional key exchanges) came with strongSwan 6.0.
PQ_KE = ("mlkem512", "mlkem768", "mlkem1024")


def weak_ike_warning(ike: str) -> str | None:
    for group, words in WEAK_GROUPS.items():
        if group in ike.split("-"):
            return f"ike proposal {ike!r} uses {group} ({words} Diffie-Hellman), which is weak; kept as asked"
    return None


def xfrm_probe_commands(cipher: Cipher, mode: str, ipcomp: bool) -> list[list[str]]:
    """Commands that succeed only where the kernel has ESP, this cipher and (if asked) IPComp."""
    algs = [arg for alg in cipher.xfrm for arg in alg]
    argvs = [["ip", "xfrm", "state", "add", "src", "192.0.2.1", "dst", "192.0.2.2", "proto", "esp",
              "spi", "0x100", "mode", mode, *algs]]
    if ipcomp:
        argvs.append(["ip", "xfrm", "state", "add", "src", "192.0.2.1", "dst", "192.0.2.2", "proto", "comp",
                      "spi", "0x1234", "mode", mode, "comp", "deflate"])
    return argvs
