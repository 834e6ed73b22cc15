"""Testbeds: where a campaign runs. One interface (base.Testbed), three kinds, made by make.py:

- local: a network namespace per host on this machine (local.py);
- ssh: machines of an inventory whose underlay exists already (ssh.py);
- vm: QEMU guests booted for the run, the router a namespace between them (vm.py).

The spec (what a campaign's [testbed] table says) is pure data: spec.py. This package's __init__
imports nothing, so the spec, the probe and the impairment backends load without the runtime.
"""
