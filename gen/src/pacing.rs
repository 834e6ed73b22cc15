//! Token-bucket pacing: tokens (packets) accrue at the target rate and are spent by sends.
//!
//! The bucket is kept in fractional packets so that the long-run count is exact
//! (floor(pps * t) + the initial token), whatever the sleep granularity: a late wake-up
//! is made up by a larger batch, up to the bucket depth (the largest burst ever sent
//! back to back).

pub struct TokenBucket {
    pps: f64,
    depth: f64,
    tokens: f64,
    last_ns: u64,
}

impl TokenBucket {
    /// `depth` packets at most at once; starts with one token so the first packet leaves at t=0.
    pub fn new(pps: f64, depth: u64, now_ns: u64) -> Self {
        TokenBucket { pps, depth: depth.max(1) as f64, tokens: 1.0, last_ns: now_ns }
    }

    pub fn depth(&self) -> u64 {
        self.depth as u64
    }

    pub fn refill(&mut self, now_ns: u64) {
        if now_ns > self.last_ns {
            let add = (now_ns - self.last_ns) as f64 * 1e-9 * self.pps;
            self.tokens = (self.tokens + add).min(self.depth);
            self.last_ns = now_ns;
        }
    }

    /// How many whole packets may go now, at most `max`.
    pub fn available(&self, max: u64) -> u64 {
        (self.tokens.floor() as u64).min(max)
    }

    pub fn spend(&mut self, packets: u64) {
        self.tokens -= packets as f64;
    }

    /// Nanoseconds until `want` whole tokens are there (0 if they already are).
    pub fn wait_ns(&self, want: u64) -> u64 {
        let want = (want as f64).min(self.depth);
        if self.tokens >= want {
            0
        } else {
            ((want - self.tokens) / self.pps * 1e9).ceil() as u64
        }
    }
}

/// Seconds of packets the bucket holds by default: a sender descheduled that long (a busy
/// shared machine) catches up instead of losing rate; that is also the longest burst.
pub const DEPTH_S: f64 = 0.005;

/// Bucket depth for a rate: DEPTH_S of packets, never less than what one send waits for.
pub fn depth_for(pps: f64, batch: u64) -> u64 {
    ((pps * DEPTH_S).ceil() as u64).clamp(target_for(pps, batch), 1 << 20)
}

/// Packets to wait for before a send: about 0.2 ms worth, so low rates go one by one and
/// high rates amortise the system call; never more than one batch.
pub fn target_for(pps: f64, batch: u64) -> u64 {
    ((pps * 0.0002).round() as u64).clamp(1, batch.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulated sender: wakes up late by a pseudo-random amount, sends what the bucket allows.
    fn simulate(pps: f64, seconds: f64, max_late_ns: u64, batch: u64) -> u64 {
        let depth = depth_for(pps, batch);
        let mut now = 1_000_000_000u64;
        let end = now + (seconds * 1e9) as u64;
        let mut tb = TokenBucket::new(pps, depth, now);
        let mut sent = 0;
        let mut rnd = 12345u64;
        while now < end {
            tb.refill(now);
            let n = tb.available(batch);
            if n >= target_for(pps, batch) {
                tb.spend(n);
                sent += n;
                now += 2_000; // the system call
                continue;
            }
            rnd = rnd.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let late = if max_late_ns > 0 { (rnd >> 33) % max_late_ns } else { 0 };
            now += tb.wait_ns(target_for(pps, batch)).max(1) + late;
        }
        sent
    }

    #[test]
    fn exact_count_without_jitter() {
        for &pps in &[10.0, 1000.0, 123_457.0, 2_000_000.0] {
            let sent = simulate(pps, 2.0, 0, 64) as f64;
            let expect = pps * 2.0;
            assert!((sent - expect).abs() <= target_for(pps, 64) as f64 + 1.0, "{pps}: {sent} vs {expect}");
        }
    }

    #[test]
    fn late_wakeups_cost_no_rate_below_depth() {
        // Wake-ups up to 1 ms late: the 5 ms bucket absorbs them.
        for &pps in &[5000.0, 500_000.0] {
            let sent = simulate(pps, 3.0, 1_000_000, 64) as f64;
            let expect = pps * 3.0;
            assert!((sent - expect).abs() / expect < 0.002, "{pps}: {sent} vs {expect}");
        }
    }

    #[test]
    fn depth_is_time_not_batch() {
        assert_eq!(depth_for(1000.0, 512), 5); // low rate: small bursts even with big batches
        assert_eq!(depth_for(10e6, 512), 50_000);
        assert_eq!(depth_for(1.0, 64), 1);
    }

    #[test]
    fn never_more_than_depth_at_once() {
        let mut tb = TokenBucket::new(1000.0, 5, 0);
        tb.refill(10_000_000_000);
        assert_eq!(tb.available(u64::MAX), 5);
        tb.spend(5);
        assert_eq!(tb.available(u64::MAX), 0);
        assert_eq!(tb.wait_ns(1), 1_000_000);
    }
}
