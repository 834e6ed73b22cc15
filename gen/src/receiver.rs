//! One receiving thread: recvmmsg on a SO_REUSEPORT socket, UDP GRO when the kernel has
//! it (a coalesced buffer is split by its segment size), kernel receive timestamps when
//! it stamps them; per-stream sequence accounting and one-way delay per interval.
//!
//! The data path carries no secret: anyone who reaches the port can send a datagram with our
//! magic. Only the streams the client announced on the control connection (0..threads, one per
//! sending thread) get a tracker (track::TRACKER_BYTES each); a datagram of any other stream is
//! counted as unexpected and dropped without allocating, so a flood of made-up stream ids
//! cannot grow the server's memory (at most threads trackers per receiving thread).

use crate::hist::Hist;
use crate::net::{self, RecvBatch};
use crate::track::{self, Arrival, StreamTrack};
use crate::wire;
use std::collections::BTreeMap;
use std::os::unix::io::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What one interval saw (all threads' are summed by index).
#[derive(Clone, Default)]
pub struct IntervalAcc {
    pub received: u64,
    pub bytes: u64,
    pub unique: u64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Sequence numbers newly covered (received or skipped): minus `unique`, the gaps
    /// that opened in this interval and were not filled in it.
    pub advance: u64,
    pub owd: Option<Box<Hist>>,
    pub jitter_ns: f64,
}

impl IntervalAcc {
    pub fn merge(&mut self, o: &IntervalAcc) {
        self.received += o.received;
        self.bytes += o.bytes;
        self.unique += o.unique;
        self.duplicates += o.duplicates;
        self.reordered += o.reordered;
        self.advance += o.advance;
        self.jitter_ns = self.jitter_ns.max(o.jitter_ns);
        if let Some(h) = &o.owd {
            self.owd.get_or_insert_with(|| Box::new(Hist::new())).merge(h);
        }
    }
}

pub struct Shared {
    pub stop: AtomicBool,
    /// CLOCK_REALTIME ns when the test started (0 until then): interval 0 begins here.
    pub t0: AtomicU64,
    pub interval_ns: u64,
    pub max_owd_ns: AtomicU64,
    /// Streams the client announced (HELLO threads=N: streams 0..N); others are unexpected.
    pub streams: u32,
}

#[derive(Default)]
pub struct RecvStats {
    pub streams: BTreeMap<u32, StreamTrack>,
    pub intervals: Vec<IntervalAcc>,
    pub foreign: u64,
    /// Ours by the magic, of a stream the client did not announce: dropped.
    pub unexpected: u64,
    pub kernel_stamps: u64,
    pub user_stamps: u64,
    pub gro_buffers: u64,
}

/// Ask for coalesced buffers (UDP_GRO) and kernel timestamps; true if GRO was taken.
pub fn configure(sock: &OwnedFd, gro: bool) -> bool {
    let fd = sock.as_raw_fd();
    let _ = net::set_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
    gro && net::set_int(fd, net::SOL_UDP, net::UDP_GRO, 1).is_ok()
}

pub fn run(sock: OwnedFd, shared: Arc<Shared>) -> RecvStats {
    let fd = sock.as_raw_fd();
    let mut batch = RecvBatch::new(64);
    let mut st = RecvStats::default();
    while !shared.stop.load(Ordering::Relaxed) {
        let n = match batch.recv(fd) {
            Ok(n) => n,
            Err(_) => break,
        };
        let user_ns = net::realtime_ns();
        let mut max_owd = 0u64;
        for i in 0..n {
            let msg = batch.get(i);
            let rx_ns = match msg.kernel_ns {
                Some(t) => {
                    st.kernel_stamps += 1;
                    t
                }
                None => {
                    st.user_stamps += 1;
                    user_ns
                }
            };
            let seg = msg.segment.unwrap_or(msg.data.len()).max(1);
            if msg.segment.is_some() {
                st.gro_buffers += 1;
            }
            let index = interval_index(&shared, rx_ns);
            for chunk in msg.data.chunks(seg) {
                max_owd = max_owd.max(account(&mut st, shared.streams, index, chunk, rx_ns));
            }
        }
        if max_owd > shared.max_owd_ns.load(Ordering::Relaxed) {
            shared.max_owd_ns.fetch_max(max_owd, Ordering::Relaxed);
        }
    }
    st
}

fn interval_index(shared: &Shared, rx_ns: u64) -> usize {
    let t0 = shared.t0.load(Ordering::Relaxed);
    if t0 == 0 || rx_ns <= t0 {
        return 0;
    }
    ((rx_ns - t0) / shared.interval_ns) as usize
}

/// One datagram: its stream's accounting and its interval's; returns its one-way delay (ns).
fn account(st: &mut RecvStats, streams: u32, index: usize, data: &[u8], rx_ns: u64) -> u64 {
    let h = match wire::read(data) {
        Some(h) => h,
        None => {
            st.foreign += 1;
            return 0;
        }
    };
    if h.stream >= streams || h.seq >= track::MAX_SEQ {
        st.unexpected += 1;
        return 0;
    }
    if st.intervals.len() <= index {
        st.intervals.resize(index + 1, IntervalAcc::default());
    }
    let track = st.streams.entry(h.stream).or_default();
    let transit = rx_ns as i64 - h.sent_ns as i64;
    let acc = &mut st.intervals[index];
    acc.received += 1;
    acc.bytes += data.len() as u64;
    match track.record(h.seq) {
        Arrival::New { advance } => {
            acc.unique += 1;
            acc.advance += advance;
        }
        Arrival::Reordered => {
            acc.unique += 1;
            acc.reordered += 1;
        }
        Arrival::Duplicate => acc.duplicates += 1,
    }
    track.transit(transit);
    acc.jitter_ns = track.jitter_ns;
    // A receive clock behind the sender's (clocks not shared) gives negative delays: 0 here,
    // and the summary says the clocks are not trusted.
    let owd = transit.max(0) as u64;
    acc.owd.get_or_insert_with(|| Box::new(Hist::new())).add(owd);
    owd
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrng::Rng;
    use crate::track::TRACKER_BYTES;

    fn datagram(stream: u32, seq: u64) -> [u8; wire::LEN] {
        let mut buf = [0u8; wire::LEN];
        wire::write(&mut buf, &wire::Header { stream, seq, sent_ns: 1 });
        buf
    }

    #[test]
    fn random_stream_ids_get_no_tracker_only_the_announced_streams_do() {
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        for announced in [1u32, 2, 7, 64] {
            let mut st = RecvStats::default();
            let (mut ours, mut unexpected) = (0u64, 0u64);
            for i in 0..30_000u64 {
                // one in four from a real stream, the rest any u32 (what a spoofer picks)
                let stream = if i % 4 == 0 { (rng.next() % announced as u64) as u32 } else { rng.next() as u32 };
                account(&mut st, announced, 0, &datagram(stream, rng.next() % 100_000), 2);
                if stream < announced {
                    ours += 1;
                } else {
                    unexpected += 1;
                }
            }
            // the trackers' heap is at most announced x TRACKER_BYTES, whatever the flood names
            assert!(st.streams.len() <= announced as usize && st.streams.keys().all(|&s| s < announced));
            assert_eq!((st.unexpected, st.intervals[0].received), (unexpected, ours));
            assert!(unexpected > 20_000, "the flood must be mostly unknown ids: {unexpected}");
        }
    }

    #[test]
    fn a_forged_sequence_number_near_u64_max_is_not_ours_and_leaves_the_loss_as_it_was() {
        let mut st = RecvStats::default();
        for seq in 0..10 {
            account(&mut st, 1, 0, &datagram(0, seq), 2);
        }
        for forged in [u64::MAX, u64::MAX - 1, track::MAX_SEQ] {
            account(&mut st, 1, 0, &datagram(0, forged), 2);
        }
        account(&mut st, 1, 0, &datagram(0, 12), 2); // 10 and 11 lost
        let acc = &st.intervals[0];
        assert_eq!((acc.unique, acc.advance, st.unexpected), (11, 13, 3));
        assert_eq!(st.streams[&0].next_expected(), 13);
    }

    #[test]
    fn a_tracker_takes_tracker_bytes() {
        let mut st = RecvStats::default();
        account(&mut st, 1, 0, &datagram(0, 5), 2);
        assert_eq!(st.streams[&0].window_bytes(), TRACKER_BYTES);
    }
}
