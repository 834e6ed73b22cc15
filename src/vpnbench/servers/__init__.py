"""Application servers a measurement starts in the server's host for one cell and stops after:
OpenSSH's sshd (scp, sftp), nginx (http) and vsftpd (ftp), each with its own configuration,
port, pid and log paths in a run-owned directory, so nothing is shared with the machine's own
services and `vpnbench cleanup` removes what a killed run left (see servers/base.py)."""
