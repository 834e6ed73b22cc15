"""A lab of testbeds working one queue into one PostgreSQL database (issue 20): `run --queue`
enqueues a campaign's blocks, `worker` runs them on its testbed, `status` shows the queue."""
