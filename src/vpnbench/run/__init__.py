"""The parts of one run, each a small unit the runner (vpnbench.run.runner) and a lab worker
(vpnbench.lab.worker) string together:

- context: the run object every stage shares (campaign, testbed, resources, run id, store,
  display, clock);
- setup: testbed and impairment backend chosen, built, recorded and torn down;
- lifecycle: Ctrl-C and SIGTERM as Interrupted, the testbed set up and torn down around the
  cells, the run stored finished, interrupted or failed;
- blocks: the run opened (new, or the one --resume continues), and technique blocks' cells run in it;
- impairments: the impairment switched in place between cells;
- bringup: a technique brought up, proven on the wire, restarted after a daemon died, and the
  path settled before each cell;
- cell: one cell measured under the monitor and recorded;
- rounds: which cells run in which round (fixed, or adaptive until the intervals converge).
"""
