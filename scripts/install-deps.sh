#!/usr/bin/env bash
# Installs the Debian packages vpnbench needs, only those that are missing.
# Idempotent and quick when everything is there: it checks files and commands, not apt.
#   scripts/install-deps.sh          what runs campaigns (make demo, make test)
#   scripts/install-deps.sh kernel   plus the kernel VM (make test-kernel)
#   scripts/install-deps.sh browser  plus headless Chromium (the report test opens the report in it)
#   scripts/install-deps.sh cargo    plus Debian's own cargo and rustc beside a rustup one (the suite
#                                    builds linkem and gen with them, as a stock Debian 12 does)
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

declare -A need=(
  [ip]=iproute2
  [iperf3]=iperf3
  [iperf]=iperf  # bench/gen.py: iperf2 beside iperf3 and vpnbench-gen
  [ping]=iputils-ping
  [fping]=fping  # setup_rate, rekey_rate: every tunnel pinged by one process
  [tcpdump]=tcpdump
  [wg]=wireguard-tools
  [wireguard-go]=wireguard-go
  [taskset]=util-linux
  [sysctl]=procps
  [swanctl]=strongswan-swanctl
  [openssl]=openssl
  [openvpn]=openvpn
  [tincd]=tinc
  [wpa_supplicant]=wpasupplicant
  [ssh]=openssh-client
  [sshd]=openssh-server
  [xl2tpd]=xl2tpd
  [pppd]=ppp
  [nft]=nftables  # pmtu_blackhole on the router; tests: drops one chosen packet to show iperf3's lost-handshake retry
  [ethtool]=ethtool  # host facts: NIC offloads (GSO/GRO/TSO) recorded with every run
  [nginx]=nginx-light  # transfer: http (its own config per cell; the package's service is not used)
  [vsftpd]=vsftpd  # transfer: ftp
  [curl]=curl  # transfer: the http and ftp client
  [irtt]=irtt  # stream, latency_under_load: isochronous one-way delay probes
  [ffmpeg]=ffmpeg  # stream, profile = "video": S3's constant-bitrate MPEG-TS stream
  [edge]=n2n  # n2n, n2n-mesh: edge and supernode (in /usr/sbin)
  [nebula-cert]=nebula  # nebula version = "debian": Debian's 1.6.1 beside the pinned build (its test skipped without it until stop 66)
  [ifconfig]=net-tools  # n2n's edge configures its TAP with /sbin/ifconfig
)
if [ "${1:-}" = kernel ]; then
  need+=([qemu-system-x86_64]=qemu-system-x86 [cpio]=cpio)
fi
if [ "${1:-}" = browser ]; then
  need+=([chromium]=chromium)
fi

missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
# python3 -m venv needs ensurepip, which Debian ships separately.
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
# IPsec: the standalone charon, its userspace data path (kernel-libipsec) and crypto plugins
# (openssl: AES-GCM/CBC, 3DES, ChaCha20-Poly1305; chapoly as fallback).
[ -x /usr/lib/ipsec/charon ] || missing+=(strongswan-charon)
[ -f /usr/lib/ipsec/plugins/libstrongswan-kernel-libipsec.so ] || missing+=(libcharon-extra-plugins)
[ -f /usr/lib/ipsec/plugins/libstrongswan-openssl.so ] || missing+=(libstrongswan-standard-plugins)
[ -f /usr/lib/ipsec/plugins/libstrongswan-chapoly.so ] || missing+=(libstrongswan-extra-plugins)
# Libreswan (kernel xfrm only): Debian's package Conflicts with strongSwan's, so it is unpacked
# into a private prefix below; its libraries come from apt (no-ops for those present).
LIBRESWAN=/opt/vpnbench/libreswan
LIBRESWAN_LIBS=(libnss3-tools libnss3 libnspr4 libunbound8 libldns3 libevent-core-2.1-7 libevent-pthreads-2.1-7
                libcurl3-nss libcap-ng0 libaudit1 libpam0g libldap-2.5-0)
if [ ! -x "$LIBRESWAN/usr/libexec/ipsec/pluto" ] || ! command -v certutil >/dev/null 2>&1 \
   || ldd "$LIBRESWAN/usr/libexec/ipsec/pluto" 2>/dev/null | grep -q 'not found'; then
  missing+=("${LIBRESWAN_LIBS[@]}")
fi
# Debian's cargo (1.65, rustc 1.63) builds linkem and gen offline from vendor/ when there is no rustup.
command -v cargo >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/cargo" ] || missing+=(cargo)
if [ "${1:-}" = cargo ]; then
  [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ] || missing+=(cargo rustc)
fi
# PostgreSQL: the tests start a server of their own (initdb in a temporary directory) to check
# --db postgresql://…; Debian keeps its binaries off PATH. It also brings libpq, which psycopg loads.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
if [ "${1:-}" = kernel ]; then
  # The VM's initramfs has no libc: it needs the static busybox.
  [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || missing+=(busybox-static)
  # A generic distribution kernel with its modules (netem, wireguard, macsec, esp4, ...).
  ls -d /lib/modules/*-amd64 2>/dev/null | grep -v -- '-rt-' | while read -r dir; do
    [ -f "$dir/modules.dep" ] && [ -f "/boot/vmlinuz-$(basename "$dir")" ] && echo ok
  done | grep -q ok || missing+=(linux-image-amd64)
  # OpenVPN DCO in the VM: openvpn-dco-dkms builds the ovpn-dco module for each installed kernel
  # whose headers are there (not for a host kernel without them: dkms says so and goes on).
  compgen -G '/lib/modules/*-amd64/updates/dkms/ovpn-dco-v2.ko*' >/dev/null \
    || missing+=(linux-headers-amd64 openvpn-dco-dkms)
fi

if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${missing[*]}; run as root (or apt-get install them)" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-install-recommends: wireguard-tools would otherwise pull in a kernel image.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # vpnbench runs its own xl2tpd per host (L2TP/IPsec); the system service the package may
  # have started would hold UDP 1701 on a real lab machine.
  if [[ " ${missing[*]} " == *" xl2tpd "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now xl2tpd >/dev/null 2>&1 || true
  fi
  # Likewise nginx and vsftpd: vpnbench starts its own per cell, in the server's namespace;
  # the packages' services would listen on ports 80 and 21 of the machine itself.
  # And PostgreSQL's default cluster (localhost:5432): the tests run their own server; and n2n's
  # supernode and edge services, where the package enabled them (vpnbench runs its own per node).
  for service in nginx vsftpd postgresql supernode edge; do
    if [[ " ${missing[*]} " == *" $service"* ]] && [ -d /run/systemd/system ]; then
      systemctl disable --now "$service" >/dev/null 2>&1 || true
    fi
  done
fi

if [ ! -x "$LIBRESWAN/usr/libexec/ipsec/pluto" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "Libreswan missing in $LIBRESWAN; run as root" >&2
    exit 1
  fi
  echo "unpacking libreswan into $LIBRESWAN"
  tmp=$(mktemp -d)
  (cd "$tmp" && chown _apt "$tmp" 2>/dev/null; apt-get download -qq libreswan)
  mkdir -p "$LIBRESWAN"
  dpkg-deb -x "$tmp"/libreswan_*.deb "$LIBRESWAN"
  rm -rf "$tmp"
fi
