//! Per-stream sequence accounting: unique, duplicate and reordered packets, gaps (loss).
//!
//! Definitions (RFC 4737 style): a packet whose sequence number is below the highest seen
//! so far + 1 arrived late: *reordered* if its number was not seen yet, *duplicate* if it
//! was. Loss is what the sender sent minus the unique packets received. Duplicates are
//! told apart from late packets over a window of the last WINDOW numbers; an older late
//! packet is counted as reordered (and `beyond_window`), since it can no longer be checked.

pub const WINDOW: u64 = 1 << 16;
/// A sender numbers its datagrams from 0, one by one: 2^48 of them is 325 days at 10 Mpps. A
/// number at or above it is forged, and would wrap `seq + 1 - next` (one datagram near u64::MAX
/// turned a stream's loss into ~2^64): the receiver counts it as not ours and tracks nothing of it.
pub const MAX_SEQ: u64 = 1 << 48;
/// Heap a tracker takes: its window of bits (8 KiB).
pub const TRACKER_BYTES: usize = (WINDOW / 8) as usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// In order or ahead: `advance` new numbers covered (1 + the gap it opened).
    New { advance: u64 },
    Reordered,
    Duplicate,
}

pub struct StreamTrack {
    next: u64,
    bits: Vec<u64>,
    pub unique: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub beyond_window: u64,
    // RFC 3550 interarrival jitter, in ns
    prev_transit: Option<i64>,
    pub jitter_ns: f64,
}

impl Default for StreamTrack {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamTrack {
    pub fn new() -> Self {
        StreamTrack {
            next: 0,
            bits: vec![0; TRACKER_BYTES / std::mem::size_of::<u64>()],
            unique: 0,
            duplicates: 0,
            reordered: 0,
            beyond_window: 0,
            prev_transit: None,
            jitter_ns: 0.0,
        }
    }

    /// Heap the window takes (TRACKER_BYTES).
    #[cfg(test)]
    pub fn window_bytes(&self) -> usize {
        self.bits.len() * std::mem::size_of::<u64>()
    }

    /// Highest sequence number seen + 1.
    #[cfg(test)]
    pub fn next_expected(&self) -> u64 {
        self.next
    }

    fn bit(&self, seq: u64) -> bool {
        let i = seq % WINDOW;
        self.bits[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    fn set(&mut self, seq: u64) {
        let i = seq % WINDOW;
        self.bits[(i / 64) as usize] |= 1 << (i % 64);
    }

    fn clear_range(&mut self, from: u64, to: u64) {
        if to - from >= WINDOW {
            self.bits.iter_mut().for_each(|w| *w = 0);
            return;
        }
        let mut s = from;
        while s < to {
            let i = s % WINDOW;
            if i % 64 == 0 && to - s >= 64 {
                self.bits[(i / 64) as usize] = 0;
                s += 64;
            } else {
                self.bits[(i / 64) as usize] &= !(1 << (i % 64));
                s += 1;
            }
        }
    }

    pub fn record(&mut self, seq: u64) -> Arrival {
        if seq >= self.next {
            self.clear_range(self.next, seq);
            self.set(seq);
            let advance = seq + 1 - self.next;
            self.next = seq + 1;
            self.unique += 1;
            return Arrival::New { advance };
        }
        if seq + WINDOW < self.next {
            self.unique += 1;
            self.reordered += 1;
            self.beyond_window += 1;
            return Arrival::Reordered;
        }
        if self.bit(seq) {
            self.duplicates += 1;
            return Arrival::Duplicate;
        }
        self.set(seq);
        self.unique += 1;
        self.reordered += 1;
        Arrival::Reordered
    }

    /// One-way transit time of the packet just recorded (ns, any clock offset included).
    pub fn transit(&mut self, transit_ns: i64) {
        if let Some(prev) = self.prev_transit {
            let d = (transit_ns - prev).unsigned_abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.prev_transit = Some(transit_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(seqs: &[u64]) -> StreamTrack {
        let mut t = StreamTrack::new();
        for &s in seqs {
            t.record(s);
        }
        t
    }

    #[test]
    fn in_order() {
        let t = feed(&[0, 1, 2, 3]);
        assert_eq!((t.unique, t.duplicates, t.reordered, t.next_expected()), (4, 0, 0, 4));
    }

    #[test]
    fn loss_is_sent_minus_unique() {
        let t = feed(&[0, 1, 4, 5, 9]);
        assert_eq!(t.unique, 5);
        assert_eq!(10 - t.unique, 5);
        assert_eq!(t.reordered, 0);
    }

    #[test]
    fn late_packet_fills_a_gap_once() {
        let mut t = StreamTrack::new();
        assert_eq!(t.record(0), Arrival::New { advance: 1 });
        assert_eq!(t.record(2), Arrival::New { advance: 2 });
        assert_eq!(t.record(1), Arrival::Reordered);
        assert_eq!(t.record(1), Arrival::Duplicate);
        assert_eq!(t.record(2), Arrival::Duplicate);
        assert_eq!((t.unique, t.duplicates, t.reordered), (3, 2, 1));
    }

    #[test]
    fn duplicates_of_in_order_packets() {
        let t = feed(&[0, 0, 1, 1, 1, 2]);
        assert_eq!((t.unique, t.duplicates, t.reordered), (3, 3, 0));
    }

    #[test]
    fn window_wraps_without_false_duplicates() {
        let mut t = StreamTrack::new();
        // A jump of more than one window clears the map; numbers seen long ago are not
        // taken for the new ones sharing their slot.
        t.record(5);
        t.record(5 + 3 * WINDOW);
        assert_eq!(t.record(6 + 2 * WINDOW), Arrival::Reordered);
        assert_eq!(t.record(4 + 3 * WINDOW), Arrival::Reordered);
        assert_eq!(t.duplicates, 0);
        // Older than the window: reordered, flagged as unverifiable.
        assert_eq!(t.record(1), Arrival::Reordered);
        assert_eq!(t.beyond_window, 1);
    }

    #[test]
    fn long_random_sequence_matches_a_set() {
        use std::collections::HashSet;
        let mut t = StreamTrack::new();
        let mut seen = HashSet::new();
        let (mut dup, mut reord, mut max_next) = (0, 0, 0u64);
        let mut x = 7u64;
        for i in 0..200_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let seq = i.saturating_sub((x >> 40) % 300); // late by up to 300
            if !seen.insert(seq) {
                dup += 1;
            } else if seq < max_next {
                reord += 1;
            }
            max_next = max_next.max(seq + 1);
            t.record(seq);
        }
        assert_eq!(t.duplicates, dup);
        assert_eq!(t.reordered, reord);
        assert_eq!(t.unique as usize, seen.len());
    }

    #[test]
    fn jitter_of_constant_transit_is_zero() {
        let mut t = StreamTrack::new();
        for _ in 0..100 {
            t.transit(5_000_000);
        }
        assert_eq!(t.jitter_ns, 0.0);
        t.transit(6_600_000);
        assert!((t.jitter_ns - 100_000.0).abs() < 1.0);
    }
}
