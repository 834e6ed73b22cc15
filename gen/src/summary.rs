//! The JSON documents: the receiver's (printed by the server and sent back) and the
//! client's, which holds the sender's view and the receiver's document verbatim.

use crate::args::ClientArgs;
use crate::hist::Hist;
use crate::json::Obj;
use crate::receiver::{IntervalAcc, RecvStats};
use crate::sender::SendStats;
use std::collections::BTreeMap;

pub const CLOCK: &str = "CLOCK_REALTIME";

pub struct ReceiverSetup {
    pub threads: usize,
    pub streams: usize,
    pub length: usize,
    pub interval: f64,
    pub duration: f64,
    pub gro: bool,
    pub clock_shared: bool,
}

fn ms(h: &Hist, q: f64) -> Option<f64> {
    h.quantile(q).map(|v| v / 1e6)
}

fn owd(o: &mut Obj, h: &Hist) {
    let exact = |v: u64| (h.n > 0).then(|| v as f64 / 1e6);
    o.opt("owd_min_ms", exact(h.min))
        .opt("owd_p5_ms", ms(h, 0.05))
        .opt("owd_p50_ms", ms(h, 0.5))
        .opt("owd_p90_ms", ms(h, 0.9))
        .opt("owd_p99_ms", ms(h, 0.99))
        .opt("owd_p999_ms", ms(h, 0.999))
        .opt("owd_max_ms", exact(h.max));
}

fn merge_intervals(stats: &[RecvStats]) -> Vec<IntervalAcc> {
    let mut out: Vec<IntervalAcc> = Vec::new();
    for s in stats {
        if out.len() < s.intervals.len() {
            out.resize(s.intervals.len(), IntervalAcc::default());
        }
        for (a, b) in out.iter_mut().zip(&s.intervals) {
            a.merge(b);
        }
    }
    out
}

fn interval_json(i: usize, acc: &IntervalAcc, s: &ReceiverSetup) -> String {
    let mut o = Obj::new();
    let bits = acc.unique as f64 * s.length as f64 * 8.0;
    o.num("t", (i + 1) as f64 * s.interval)
        .int("received", acc.received as i64)
        .int("unique", acc.unique as i64)
        .int("lost", acc.advance as i64 - acc.unique as i64)
        .int("duplicates", acc.duplicates as i64)
        .int("reordered", acc.reordered as i64)
        .int("bytes", acc.bytes as i64)
        .num("throughput_bps", bits / s.interval)
        .num("pps", acc.unique as f64 / s.interval)
        .num("jitter_ms", acc.jitter_ns / 1e6);
    owd(&mut o, acc.owd.as_deref().unwrap_or(&Hist::new()));
    o.done()
}

pub fn receiver(stats: &[RecvStats], sent: &BTreeMap<u32, u64>, secs: f64, s: &ReceiverSetup) -> String {
    let intervals = merge_intervals(stats);
    let mut total = IntervalAcc::default();
    intervals.iter().for_each(|i| total.merge(i));
    let hist = total.owd.as_deref().cloned().unwrap_or_default();
    let streams: Vec<_> = stats.iter().flat_map(|r| r.streams.values()).collect();
    let jitter = streams.iter().map(|t| t.jitter_ns).sum::<f64>() / streams.len().max(1) as f64;
    let sent_total: u64 = sent.values().sum();
    let kernel: u64 = stats.iter().map(|r| r.kernel_stamps).sum();
    let user: u64 = stats.iter().map(|r| r.user_stamps).sum();
    let stamp = match (kernel, user) {
        (_, 0) => "kernel",
        (0, _) => "user",
        _ => "mixed",
    };
    let mut o = Obj::new();
    o.str("clock", CLOCK)
        .bool("clock_shared", s.clock_shared)
        .str("rx_timestamp", stamp)
        .bool("gro", s.gro)
        .int("gro_buffers", stats.iter().map(|r| r.gro_buffers).sum::<u64>() as i64)
        .int("threads", s.threads as i64)
        .num("seconds", secs)
        .int("sent_packets", sent_total as i64)
        .int("received_packets", total.received as i64)
        .int("unique_packets", total.unique as i64)
        .int("lost_packets", sent_total as i64 - total.unique as i64)
        .int("duplicate_packets", total.duplicates as i64)
        .int("reordered_packets", total.reordered as i64)
        .int("late_beyond_window", streams.iter().map(|t| t.beyond_window).sum::<u64>() as i64)
        .int("foreign_packets", stats.iter().map(|r| r.foreign).sum::<u64>() as i64)
        .int("unexpected_packets", stats.iter().map(|r| r.unexpected).sum::<u64>() as i64)
        .int("bytes", total.bytes as i64)
        .num("throughput_bps", total.unique as f64 * s.length as f64 * 8.0 / secs)
        .num("pps", total.unique as f64 / secs)
        .num("jitter_ms", jitter / 1e6);
    owd(&mut o, &hist);
    let list: Vec<String> = intervals.iter().enumerate().map(|(i, acc)| interval_json(i, acc, s)).collect();
    o.list("intervals", &list).list("streams", &per_stream(stats, sent)).done()
}

/// Each announced stream's count: sent (the client's DONE) and unique received, summed over the
/// receiving threads (a stream is one 4-tuple, so one thread, but nothing depends on that).
fn per_stream(stats: &[RecvStats], sent: &BTreeMap<u32, u64>) -> Vec<String> {
    let mut unique: BTreeMap<u32, u64> = sent.keys().map(|&k| (k, 0)).collect();
    for (&stream, track) in stats.iter().flat_map(|r| r.streams.iter()) {
        *unique.entry(stream).or_default() += track.unique;
    }
    unique
        .iter()
        .map(|(&stream, &n)| Obj::new().int("stream", stream as i64).int("sent", *sent.get(&stream).unwrap_or(&0) as i64).int("unique", n as i64).done())
        .collect()
}

pub fn client(a: &ClientArgs, stats: &[SendStats], receiver: &str, error: Option<&str>, clock_shared: bool) -> String {
    let sent: u64 = stats.iter().map(|s| s.sent).sum();
    let mut per: Vec<u64> = Vec::new();
    for s in stats {
        if per.len() < s.per_interval.len() {
            per.resize(s.per_interval.len(), 0);
        }
        per.iter_mut().zip(&s.per_interval).for_each(|(a, b)| *a += b);
    }
    let intervals: Vec<String> = per
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            Obj::new()
                .num("t", ((i + 1) as f64 * a.interval).min(a.duration))
                .int("sent", n as i64)
                .num("throughput_bps", n as f64 * a.length as f64 * 8.0 / a.interval)
                .num("pps", n as f64 / a.interval)
                .done()
        })
        .collect();
    let first = stats.first().cloned().unwrap_or_default();
    let mut params = Obj::new();
    params
        .str("target", &a.targets[0].to_string())
        .int("targets", a.targets.len() as i64)
        .int("streams", a.streams() as i64)
        .int("port", a.port as i64)
        .str("family", if a.targets[0].is_ipv4() { "ipv4" } else { "ipv6" })
        .opt("rate_bps", a.rate_bps)
        .int("length", a.length as i64)
        .num("duration_s", a.duration)
        .int("threads", a.threads as i64)
        .num("interval_s", a.interval);
    let mut snd = Obj::new();
    snd.bool("gso", first.gso_segments > 1)
        .int("gso_segments", first.gso_segments as i64)
        .int("batch_packets", first.batch_packets as i64)
        .int("burst_packets", first.burst_packets as i64)
        .str("clock", crate::summary::CLOCK)
        .bool("clock_shared", clock_shared)
        .int("sent_packets", sent as i64)
        .int("bytes", (sent * a.length as u64) as i64)
        .num("seconds", a.duration)
        .num("throughput_bps", sent as f64 * a.length as f64 * 8.0 / a.duration)
        .num("pps", sent as f64 / a.duration)
        .int("send_errors", stats.iter().map(|s| s.errors).sum::<u64>() as i64)
        .int("last_errno", stats.iter().map(|s| s.last_errno).max().unwrap_or(0) as i64)
        .list("intervals", &intervals);
    let err = error.map_or("null".to_string(), crate::json::escape);
    Obj::new()
        .str("tool", "vpnbench-gen")
        .int("version", 1)
        .raw("params", &params.done())
        .raw("sender", &snd.done())
        .raw("receiver", receiver)
        .raw("error", &err)
        .done()
}
