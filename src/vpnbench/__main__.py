from vpnbench.cli import entry

raise SystemExit(entry())
