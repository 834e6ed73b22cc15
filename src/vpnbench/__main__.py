from vpnbench.cli import main

raise SystemExit(main())
