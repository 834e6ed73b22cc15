"""vpnbench: benchmark network encryption techniques side by side."""

__version__ = "0.1.0"
