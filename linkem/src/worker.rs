//! One forwarding thread per direction: read frames from one interface,
//! run them through the netem engine, write them out of the other.

use crate::fastpath::{self, FastPath};
use crate::gso::{self, VNET_HDR_LEN};
use crate::io::{self, BATCH, RX_BUF};
use crate::netem::{Engine, Packet, Prng};
use crate::spec::Spec;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Frames at most this long are copied into a small buffer before being
/// queued, so the queue never pins 64 KiB receive buffers for small frames.
const SMALL: usize = 2048;
/// Upper bound on bytes held in one direction's queue (GSO super-frames
/// under a large explicit `limit`); beyond it frames are dropped as if the
/// limit was hit.
const MAX_QUEUED_BYTES: usize = 512 << 20;
/// The longest a worker sleeps without reading its socket while frames wait
/// to leave: 1 ms of 25 Gbit/s is 3 MB, a tenth of the receive buffer.
const DEAF_NS: u64 = 1_000_000;

/// Bounds of the wait below which a worker stays awake for the next departure (yielding the CPU
/// to anything runnable on it, such as the other direction's worker) instead of sleeping: the
/// calibrated wake-up latency, clamped. One TCP stream through `delay 100us` on a 2-CPU AMD EPYC
/// VM (bench/RESULTS.md, 2026-12-02): sleeping always, departures p50 64 µs late and 0.76-0.93
/// (median 0.86) of the kernel bridge; awake below it (30-100 µs), p50 16-32 µs and 0.89-0.98.
const SPIN_MIN_NS: u64 = 20_000;
/// A yield that kept the worker off its CPU longer than this gave it to other load for a slice.
const LOST_YIELD_NS: u64 = 1_000_000;
/// How long the worker then waits for departures without yielding.
const CONTENDED_HOLD_NS: u64 = 50_000_000;
/// The forwarding threads' nice value (see Worker::run).
const WORKER_NICE: libc::c_int = -10;
const SPIN_MAX_NS: u64 = 200_000;

/// Buckets of the departure lateness histogram: bucket 0 holds frames under
/// 1 µs late, bucket k (1..) those in [2^(k-1), 2^k) µs, the last everything
/// from 2^(LATE_BUCKETS-2) µs (16.4 ms) on. A mean hides what a throughput
/// ratio depends on: many frames a little late or a few very late.
pub const LATE_BUCKETS: usize = 16;

fn late_bucket(late_ns: u64) -> usize {
    let us = late_ns / 1000;
    ((u64::BITS - us.leading_zeros()) as usize).min(LATE_BUCKETS - 1)
}

/// Frames leaving the queue, and how late (vs. the schedule) they left.
#[derive(Default)]
struct Departures {
    sum: u64,
    n: u64,
    max: u64,
    hist: [u64; LATE_BUCKETS],
}

impl Departures {
    /// Move every frame due by `due_by` to `txq`; they leave at `clock`.
    /// A frame never leaves before its time (as netem: a delay is a lower
    /// bound, and a ping through `delay 10ms` each way never reads under 20 ms).
    fn take_due(&mut self, eng: &mut Engine<Frame>, due_by: u64, clock: u64, txq: &mut Vec<Vec<u8>>, queued_bytes: &mut usize) {
        while let Some((tts, f)) = eng.pop_due_at(due_by) {
            if tts != 0 {
                let late = clock.saturating_sub(tts);
                self.sum += late;
                self.n += 1;
                self.max = self.max.max(late);
                self.hist[late_bucket(late)] += 1;
            }
            *queued_bytes = queued_bytes.saturating_sub(f.buf.len());
            txq.push(f.buf);
        }
    }
}

pub struct Frame {
    pub buf: Vec<u8>,
}

impl Packet for Frame {
    fn wire_len(&self) -> usize {
        gso::wire_len(&self.buf)
    }
    fn duplicate(&self) -> Self {
        Frame { buf: self.buf.clone() }
    }
    fn corrupt(&mut self, rng: &mut Prng) {
        gso::complete_checksum(&mut self.buf);
        let flen = self.buf.len() - VNET_HDR_LEN;
        if flen == 0 {
            return;
        }
        let i = rng.below(flen as u32) as usize;
        let bit = rng.below(8);
        self.buf[VNET_HDR_LEN + i] ^= 1 << bit;
    }
}

#[derive(Default)]
pub struct DirStats {
    pub received: AtomicU64,
    pub received_bytes: AtomicU64,
    pub sent: AtomicU64,
    pub sent_bytes: AtomicU64,
    pub dropped_loss: AtomicU64,
    pub dropped_limit: AtomicU64,
    pub dropped_error: AtomicU64,
    pub duplicated: AtomicU64,
    pub corrupted: AtomicU64,
    pub reordered: AtomicU64,
    pub gso_segmented: AtomicU64,
    pub queue_len: AtomicU64,
    /// How late (vs. the scheduled time) delayed frames left, max and mean.
    pub late_max_ns: AtomicU64,
    pub late_mean_ns: AtomicU64,
    /// Their histogram (late_bucket's buckets).
    pub late_hist: [AtomicU64; LATE_BUCKETS],
    /// The wait below which the worker stays awake for a departure (the calibrated wake-up latency).
    pub awake_below_ns: AtomicU64,
    /// How many times a yield lost the CPU to other load (each starts CONTENDED_HOLD_NS without yielding).
    pub contended: AtomicU64,
    /// The in-kernel pass-through's counter map (-1: none); its frames count
    /// as received and sent.
    pub fast_map: AtomicI32,
}

impl DirStats {
    pub fn json(&self) -> String {
        let f = |a: &AtomicU64| a.load(Relaxed);
        let (fast, fast_b) = fastpath::counters(self.fast_map.load(Relaxed));
        format!(
            "{{\"received\":{},\"received_bytes\":{},\"sent\":{},\"sent_bytes\":{},\"dropped_loss\":{},\"dropped_limit\":{},\"dropped_error\":{},\"duplicated\":{},\"corrupted\":{},\"reordered\":{},\"gso_segmented\":{},\"queue_len\":{},\"late_max_us\":{:.1},\"late_mean_us\":{:.1},\"late_log2_us\":[{}],\"awake_below_us\":{:.1},\"contended\":{}}}",
            f(&self.received) + fast,
            f(&self.received_bytes) + fast_b,
            f(&self.sent) + fast,
            f(&self.sent_bytes) + fast_b,
            f(&self.dropped_loss),
            f(&self.dropped_limit),
            f(&self.dropped_error),
            f(&self.duplicated),
            f(&self.corrupted),
            f(&self.reordered),
            f(&self.gso_segmented),
            f(&self.queue_len),
            f(&self.late_max_ns) as f64 / 1e3,
            f(&self.late_mean_ns) as f64 / 1e3,
            self.late_hist.iter().map(|b| f(b).to_string()).collect::<Vec<_>>().join(","),
            f(&self.awake_below_ns) as f64 / 1e3,
            f(&self.contended),
        )
    }
}

/// A spec change handed from the control thread to a worker. `set` returns
/// once the worker applies it (so frames sent after the reply see the new
/// spec, also when the worker was idle with the kernel forwarding for it).
pub struct SpecSlot {
    /// the new spec and its generation
    pending: Mutex<(Option<Spec>, u64)>,
    pub changed: AtomicBool,
    applied: Mutex<u64>,
    applied_cv: Condvar,
    /// wakes the worker from its poll
    pub wake_fd: RawFd,
}

impl Default for SpecSlot {
    fn default() -> Self {
        SpecSlot {
            pending: Mutex::new((None, 1)), // generation 1: the start-up spec
            changed: AtomicBool::new(false),
            applied: Mutex::new(0),
            applied_cv: Condvar::new(),
            wake_fd: unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) },
        }
    }
}

impl Drop for SpecSlot {
    fn drop(&mut self) {
        if self.wake_fd >= 0 {
            unsafe { libc::close(self.wake_fd) };
        }
    }
}

impl SpecSlot {
    pub fn set(&self, s: Spec) {
        let generation = {
            let mut p = self.pending.lock().unwrap();
            p.0 = Some(s);
            p.1 += 1;
            p.1
        };
        self.changed.store(true, Relaxed);
        let one: u64 = 1;
        unsafe { libc::write(self.wake_fd, &one as *const u64 as *const libc::c_void, 8) };
        self.wait_applied(generation);
    }

    /// Wait (at most a second) until the worker applied generation `g`.
    pub fn wait_applied(&self, g: u64) {
        let guard = self.applied.lock().unwrap();
        let _ = self.applied_cv.wait_timeout_while(guard, Duration::from_secs(1), |a| *a < g);
    }

    pub fn take(&self) -> (Option<Spec>, u64) {
        let mut buf = 0u64;
        unsafe { libc::read(self.wake_fd, &mut buf as *mut u64 as *mut libc::c_void, 8) };
        let mut p = self.pending.lock().unwrap();
        (p.0.take(), p.1)
    }

    pub fn mark_applied(&self, g: u64) {
        *self.applied.lock().unwrap() = g;
        self.applied_cv.notify_all();
    }
}

pub struct Worker {
    pub rx: RawFd,
    pub tx: RawFd,
    /// interface indexes of rx and tx (for the in-kernel pass-through)
    pub rx_if: i32,
    pub tx_if: i32,
    pub spec: Spec,
    pub seed: u64,
    pub stats: Arc<DirStats>,
    pub slot: Arc<SpecSlot>,
    pub stop: Arc<AtomicBool>,
    pub cpu: Option<usize>,
}

struct Pool {
    large: Vec<Vec<u8>>,
    small: Vec<Vec<u8>>,
}

impl Pool {
    fn large(&mut self) -> Vec<u8> {
        self.large.pop().unwrap_or_else(|| Vec::with_capacity(RX_BUF))
    }
    fn small(&mut self, n: usize) -> Vec<u8> {
        if n <= SMALL {
            self.small.pop().unwrap_or_else(|| Vec::with_capacity(SMALL))
        } else {
            Vec::with_capacity(n)
        }
    }
    fn put(&mut self, mut b: Vec<u8>) {
        b.clear();
        let c = b.capacity();
        if c >= RX_BUF {
            if self.large.len() < 2 * BATCH {
                self.large.push(b);
            }
        } else if c >= SMALL && c < 4 * SMALL && self.small.len() < 4096 {
            self.small.push(b);
        }
    }
}

impl Worker {
    /// The in-kernel pass-through, unless the kernel refuses it or a
    /// benchmark asks for the userspace path (LINKEM_NO_FASTPATH=1, or
    /// LINKEM_FORCE_SEGMENT=1 which needs every frame in userspace).
    fn load_fast_path(&self, force_seg: bool) -> Option<FastPath> {
        if force_seg || std::env::var_os("LINKEM_NO_FASTPATH").map_or(false, |v| v == "1") {
            return None;
        }
        match FastPath::load(self.rx_if, self.tx_if, self.rx) {
            Ok(f) => {
                self.stats.fast_map.store(f.map_fd, Relaxed);
                Some(f)
            }
            Err(e) => {
                eprintln!("linkem: in-kernel pass-through unavailable ({e}); forwarding in userspace");
                None
            }
        }
    }

    pub fn run(self) {
        if let Some(c) = self.cpu {
            let _ = io::pin_cpu(c);
        }
        unsafe {
            // A link does not slow down when its hosts are busy: the kernel's own forwarding runs in
            // softirq, ahead of every task. So the workers run at nice WORKER_NICE where allowed (as
            // root), ahead of other load on their CPU. Sleeping until each departure they rarely hold
            // it: with a busy loop on each of 2 CPUs, `delay 100us` went from 0.79-0.99 (median 0.89)
            // of the bridge to 1.05-1.19, and at nice 0 it read 0.74-0.90 (bench/RESULTS.md, 2026-12-02).
            libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, WORKER_NICE);
            // precise ppoll timeouts
            libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
        }
        // measured once, where the worker runs (after pinning): 64 sleeps of 20 µs, ~3 ms at start
        let (mut contended_until, mut contended) = (0u64, 0u64);
        let mut awake_below = io::wake_latency_ns(64, 20_000).clamp(SPIN_MIN_NS, SPIN_MAX_NS);
        self.stats.awake_below_ns.store(awake_below, Relaxed);
        let mut eng: Engine<Frame> = Engine::new(self.spec.clone(), self.seed);
        // Benchmark knob: split every GSO super-frame into MTU-sized frames
        // even when the spec doesn't need it (the "one frame per wire packet"
        // packet path that AF_XDP, TAP without offloads or AF_PACKET without
        // PACKET_VNET_HDR would impose).
        let force_seg = std::env::var_os("LINKEM_FORCE_SEGMENT").map_or(false, |v| v == "1");
        let mut fast = self.load_fast_path(force_seg);
        let mut started = false;
        let mut pool = Pool { large: vec![], small: vec![] };
        let mut slots: Vec<Vec<u8>> = (0..BATCH).map(|_| pool.large()).collect();
        let mut lens = [0usize; BATCH];
        let mut arrived = [0u64; BATCH];
        let mut txq: Vec<Vec<u8>> = Vec::with_capacity(4 * BATCH);
        let st = &self.stats;
        let (mut rcvd, mut rcvd_b, mut sent, mut sent_b, mut err, mut segd) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut queued_bytes: usize = 0;
        let mut limit_extra = 0u64;
        let mut departures = Departures::default();

        while !self.stop.load(Relaxed) {
            let change = self.slot.changed.swap(false, Relaxed) || !started;
            let generation = if change {
                let (s, g) = self.slot.take();
                if let Some(s) = s {
                    eng.set_spec(s);
                }
                Some(g)
            } else {
                None
            };
            let passthrough = eng.spec().is_passthrough() && !force_seg;
            // The kernel forwards while there is nothing to do and nothing
            // queued (frames still queued leave on their schedule first).
            if let Some(f) = fast.as_mut() {
                let want = passthrough && eng.is_empty();
                if want && !f.active() {
                    if let Err(e) = f.attach() {
                        eprintln!("linkem: in-kernel pass-through unavailable ({e}); forwarding in userspace");
                        fast = None;
                    }
                } else if !want && !f.guarded() {
                    f.detach();
                }
            }
            if let Some(g) = generation {
                self.slot.mark_applied(g);
                started = true;
            }
            let segment = eng.spec().needs_segmentation() || force_seg;

            let n = match io::recv_batch(self.rx, &mut slots, &mut lens, &mut arrived) {
                Ok(n) => n,
                Err(_) => {
                    io::wait_readable(self.rx, self.slot.wake_fd, 10_000_000);
                    0
                }
            };
            let clock = io::now_ns();
            for i in 0..n {
                // Frames are read in arrival order, possibly long after they arrived (the
                // thread sleeps through arrivals while frames wait to leave): what was due
                // before this frame arrived leaves the queue first, so the limit, the rate's
                // queue and the delay all see the queue netem would have at that instant.
                let now = arrived[i];
                departures.take_due(&mut eng, now, clock, &mut txq, &mut queued_bytes);
                let len = lens[i];
                rcvd += 1;
                if len == usize::MAX || len < VNET_HDR_LEN + 14 {
                    err += 1;
                    continue;
                }
                rcvd_b += (len - VNET_HDR_LEN) as u64;
                let mut buf = std::mem::replace(&mut slots[i], pool.large());
                unsafe { buf.set_len(len) };
                if passthrough && eng.is_empty() {
                    txq.push(buf);
                    continue;
                }
                if segment {
                    if let Some(segs) = gso::segment(&buf, |n| pool.small(n)) {
                        segd += 1;
                        pool.put(buf);
                        for s in segs {
                            if queued_bytes + s.len() > MAX_QUEUED_BYTES {
                                limit_extra += 1;
                                pool.put(s);
                                continue;
                            }
                            queued_bytes += s.len();
                            eng.enqueue(Frame { buf: s }, now);
                        }
                        continue;
                    }
                }
                if len <= SMALL {
                    let mut s = pool.small(len);
                    s.extend_from_slice(&buf);
                    pool.put(buf);
                    buf = s;
                }
                if queued_bytes + buf.len() > MAX_QUEUED_BYTES {
                    limit_extra += 1;
                    pool.put(buf);
                    continue;
                }
                queued_bytes += buf.len();
                eng.enqueue(Frame { buf }, now);
            }

            let now = io::now_ns();
            departures.take_due(&mut eng, now, now, &mut txq, &mut queued_bytes);
            // `queued_bytes` also counted frames the engine dropped; resync
            // when the queue drains.
            if eng.is_empty() {
                queued_bytes = 0;
            }
            if !txq.is_empty() {
                for b in &txq {
                    sent_b += (b.len() - VNET_HDR_LEN) as u64;
                }
                let (s, f) = io::send_batch(self.tx, &txq);
                sent += s;
                err += f;
                for b in txq.drain(..) {
                    pool.put(b);
                }
            }

            st.received.store(rcvd, Relaxed);
            st.received_bytes.store(rcvd_b, Relaxed);
            st.sent.store(sent, Relaxed);
            st.sent_bytes.store(sent_b, Relaxed);
            st.dropped_error.store(err, Relaxed);
            st.gso_segmented.store(segd, Relaxed);
            let c = &eng.counters;
            st.dropped_loss.store(c.dropped_loss, Relaxed);
            st.dropped_limit.store(c.dropped_limit + limit_extra, Relaxed);
            st.duplicated.store(c.duplicated, Relaxed);
            st.corrupted.store(c.corrupted, Relaxed);
            st.reordered.store(c.reordered, Relaxed);
            st.queue_len.store(eng.queue_len() as u64, Relaxed);
            st.late_max_ns.store(departures.max, Relaxed);
            st.late_mean_ns.store(departures.sum.checked_div(departures.n).unwrap_or(0), Relaxed);
            for (bucket, count) in st.late_hist.iter().zip(departures.hist) {
                bucket.store(count, Relaxed);
            }

            if n == BATCH {
                continue; // more is probably waiting
            }
            let now = io::now_ns();
            let wait = match eng.next_due() {
                Some(t) if t <= now => continue,
                Some(t) => t - now,
                None => 100_000_000,
            };
            if !eng.is_empty() && wait < awake_below {
                // Due sooner than this thread would wake from a sleep: stay awake. On a CPU nothing
                // else wants, yielding lets the other direction's worker (it shares the CPU) run
                // meanwhile. Where other load wants it too, a yield hands it a whole scheduler slice
                // (~1 ms): then, for CONTENDED_HOLD_NS, the worker spins without yielding, its nice
                // keeping it ahead of that load.
                let due = now + wait;
                while io::now_ns() < due && !self.slot.changed.load(Relaxed) {
                    let before = io::now_ns();
                    if before < contended_until {
                        std::hint::spin_loop();
                        continue;
                    }
                    unsafe { libc::sched_yield() };
                    let after = io::now_ns();
                    if after - before > LOST_YIELD_NS {
                        contended_until = after + CONTENDED_HOLD_NS;
                        contended += 1;
                        self.stats.contended.store(contended, Relaxed);
                    }
                }
                continue;
            }
            if !eng.is_empty() {
                // Frames wait to leave: sleep until the next departure, deaf to arrivals (they
                // keep their kernel arrival time and are read at the next wake-up): a wake-up
                // per departure instead of one per arriving frame. At most DEAF_NS at a time,
                // so the socket buffer never fills meanwhile.
                let asked = wait.min(DEAF_NS);
                io::wait_readable(-1, self.slot.wake_fd, asked);
                // how late this sleep woke, into the running estimate (1/16 new) the next wait is held against
                let overslept = io::now_ns().saturating_sub(now + asked);
                awake_below = (awake_below * 15 + overslept.clamp(SPIN_MIN_NS, SPIN_MAX_NS)) / 16;
                self.stats.awake_below_ns.store(awake_below, Relaxed);
            } else {
                io::wait_readable(self.rx, self.slot.wake_fd, 100_000_000);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_buckets_are_powers_of_two_microseconds() {
        assert_eq!(late_bucket(0), 0);
        assert_eq!(late_bucket(999), 0); // under 1 µs
        assert_eq!(late_bucket(1_000), 1); // [1, 2) µs
        assert_eq!(late_bucket(1_999), 1);
        assert_eq!(late_bucket(2_000), 2); // [2, 4)
        assert_eq!(late_bucket(100_000), 7); // 100 µs in [64, 128)
        assert_eq!(late_bucket(16_384_000), LATE_BUCKETS - 1); // 16.4 ms: the last, open bucket
        assert_eq!(late_bucket(u64::MAX), LATE_BUCKETS - 1);
    }
}
