//! One sending thread: a connected UDP socket per stream it sends (one stream, or several when
//! there are more targets than threads: each call goes to the next stream in turn), sendmmsg
//! batches (each message several UDP GSO segments when the kernel takes UDP_SEGMENT), one token
//! bucket for all its streams.

use crate::net::{self, SendBatch};
use crate::pacing::{self, TokenBucket};
use crate::wire::{self, Header};
use std::net::SocketAddr;
use std::os::unix::io::AsRawFd;

pub struct SendPlan {
    /// Its streams and where each goes; each has its own socket and sequence numbers.
    pub streams: Vec<(u32, SocketAddr)>,
    pub length: usize,
    /// Packets per second for this thread, all its streams together; None = unpaced.
    pub pps: Option<f64>,
    pub gso: bool,
    pub start_mono: u64,
    pub end_mono: u64,
    pub interval_ns: u64,
    /// Bucket depth override (packets).
    pub burst: Option<u64>,
}

#[derive(Debug, Default, Clone)]
pub struct SendStats {
    pub stream: u32,
    pub sent: u64,
    pub errors: u64,
    pub gso_segments: usize,
    pub batch_packets: u64,
    pub burst_packets: u64,
    pub per_interval: Vec<u64>,
    pub last_errno: i32,
}

const MESSAGES_NO_GSO: usize = 64;
const MESSAGES_GSO: usize = 8;
const MAX_SEGMENTS: usize = 64;

/// Segments per GSO message: at most 64 and at most one maximal UDP payload in all.
pub fn segments_for(length: usize) -> usize {
    (wire_max() / length).min(MAX_SEGMENTS)
}

fn wire_max() -> usize {
    crate::args::MAX_LEN
}

/// Try UDP_SEGMENT on the socket: k segments per message if it is taken and worth it.
fn enable_gso(fd: i32, length: usize, want: bool) -> usize {
    let k = segments_for(length);
    if want && k >= 2 && net::set_int(fd, net::SOL_UDP, net::UDP_SEGMENT, length as i32).is_ok() {
        k
    } else {
        1
    }
}

pub fn run(plan: SendPlan) -> std::io::Result<Vec<SendStats>> {
    let socks = plan.streams.iter().map(|&(_, target)| net::connected_udp(target)).collect::<std::io::Result<Vec<_>>>()?;
    let fds: Vec<i32> = socks.iter().map(|s| s.as_raw_fd()).collect();
    // The same length on every socket of one kernel: they all take UDP_SEGMENT or none does.
    let mut k = fds.iter().map(|&fd| enable_gso(fd, plan.length, plan.gso)).min().unwrap_or(1);
    let mut all: Vec<SendStats> = plan.streams.iter().map(|&(stream, _)| SendStats { stream, ..Default::default() }).collect();
    let mut batch = new_batch(k, plan.length);
    let mut per_call = batch.bufs.len() as u64 * k as u64;
    let depth = |pps: f64| plan.burst.unwrap_or_else(|| pacing::depth_for(pps, per_call));
    let mut bucket = plan.pps.map(|pps| TokenBucket::new(pps, depth(pps), plan.start_mono));
    let burst = bucket.as_ref().map_or(per_call, |b| b.depth());
    let target = plan.pps.map_or(per_call, |pps| pacing::target_for(pps, per_call).min(depth(pps)));
    net::sleep_until_monotonic(plan.start_mono);
    let mut lens = Vec::with_capacity(batch.bufs.len());
    let mut turn = 0;
    loop {
        let now = net::monotonic_ns();
        if now >= plan.end_mono {
            break;
        }
        let n = match bucket.as_mut() {
            Some(b) => {
                b.refill(now);
                let n = b.available(per_call);
                if n < target {
                    net::sleep_until_monotonic((now + b.wait_ns(target)).min(plan.end_mono));
                    continue;
                }
                n
            }
            None => per_call,
        };
        let st = &mut all[turn];
        fill(&mut batch, &mut lens, n, k, plan.length, st.stream, st.sent);
        match batch.send(fds[turn], &lens) {
            Ok(msgs) => {
                let packets: u64 = lens[..msgs].iter().map(|l| (l / plan.length) as u64).sum();
                st.sent += packets;
                if let Some(b) = bucket.as_mut() {
                    b.spend(packets);
                }
                count_interval(&mut st.per_interval, now - plan.start_mono, plan.interval_ns, packets);
                turn = (turn + 1) % fds.len();
            }
            Err(e) => {
                st.errors += 1;
                st.last_errno = net::errno_of(&e);
                // A GSO send the path refuses (segment larger than its MTU, a device
                // without checksum offload): fall back to one datagram per message.
                if k > 1 && matches!(st.last_errno, libc::EINVAL | libc::EIO | libc::EMSGSIZE) {
                    for &fd in &fds {
                        let _ = net::set_int(fd, net::SOL_UDP, net::UDP_SEGMENT, 0);
                    }
                    k = 1;
                    batch = new_batch(1, plan.length);
                    per_call = batch.bufs.len() as u64;
                } else {
                    // ENOBUFS, ECONNREFUSED (an ICMP error from an earlier datagram): retry shortly.
                    net::sleep_until_monotonic(now + 100_000);
                    turn = (turn + 1) % fds.len();
                }
            }
        }
    }
    for st in all.iter_mut() {
        (st.gso_segments, st.batch_packets, st.burst_packets) = (k, per_call, burst);
    }
    Ok(all)
}

fn new_batch(k: usize, length: usize) -> SendBatch {
    let messages = if k > 1 { MESSAGES_GSO } else { MESSAGES_NO_GSO };
    SendBatch::new(messages, k * length)
}

/// Write headers for `n` packets from sequence number `first` into as few messages as it takes.
fn fill(batch: &mut SendBatch, lens: &mut Vec<usize>, n: u64, k: usize, length: usize, stream: u32, first: u64) {
    lens.clear();
    let sent_ns = net::realtime_ns();
    let mut seq = first;
    let mut left = n as usize;
    for buf in batch.bufs.iter_mut() {
        if left == 0 {
            break;
        }
        let segs = left.min(k);
        for s in 0..segs {
            wire::write(&mut buf[s * length..], &Header { stream, seq, sent_ns });
            seq += 1;
        }
        lens.push(segs * length);
        left -= segs;
    }
}

pub fn count_interval(per: &mut Vec<u64>, since_start_ns: u64, interval_ns: u64, n: u64) {
    let i = (since_start_ns / interval_ns) as usize;
    if per.len() <= i {
        per.resize(i + 1, 0);
    }
    per[i] += n;
}
