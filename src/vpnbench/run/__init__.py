"""The parts of one run, each a small unit the runner (vpnbench.runner) strings together:

- context: the run object every stage shares (campaign, testbed, resources, run id, store,
  display, clock);
- setup: testbed and impairment backend chosen, built, recorded and torn down;
- impairments: the impairment switched in place between cells;
- bringup: a technique brought up, proven on the wire, restarted after a daemon died, and the
  path settled before each cell;
- cell: one cell measured under the monitor and recorded;
- rounds: which cells run in which round (fixed, or adaptive until the intervals converge).
"""
