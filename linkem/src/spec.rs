//! Parser for impairment specs, following `tc qdisc ... netem` grammar
//! (iproute2 tc/q_netem.c) and units (iproute2 lib/utils.c, tc/tc_util.c).

/// Probabilities are stored like the kernel does: scaled to u32
/// (0 = never, u32::MAX = always).
pub type Prob = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    Uniform,
    Normal,
    Pareto,
    ParetoNormal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossModel {
    None,
    /// Bernoulli (optionally "correlated" the netem way).
    Random { p: Prob, corr: Prob },
    /// Gilbert-Elliott: p (good->bad), r (bad->good), h (kernel's h: loss
    /// in bad state happens when rnd > h), k1 (loss prob in good state).
    GilbertElliott { p: Prob, r: Prob, h: Prob, k1: Prob },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// ns
    pub latency: u64,
    /// ns
    pub jitter: u64,
    pub delay_corr: Prob,
    pub dist: Option<Dist>,
    pub loss: LossModel,
    pub duplicate: Prob,
    pub dup_corr: Prob,
    pub reorder: Prob,
    pub reorder_corr: Prob,
    pub gap: u32,
    pub corrupt: Prob,
    pub corrupt_corr: Prob,
    /// bytes per second, 0 = unlimited
    pub rate: u64,
    pub packet_overhead: i32,
    pub cell_size: u32,
    pub cell_overhead: i32,
    /// explicit `limit`, None = default
    pub limit: Option<u32>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            latency: 0,
            jitter: 0,
            delay_corr: 0,
            dist: None,
            loss: LossModel::None,
            duplicate: 0,
            dup_corr: 0,
            reorder: 0,
            reorder_corr: 0,
            gap: 0,
            corrupt: 0,
            corrupt_corr: 0,
            rate: 0,
            packet_overhead: 0,
            cell_size: 0,
            cell_overhead: 0,
            limit: None,
        }
    }
}

pub const DEFAULT_LIMIT: u32 = 1000;
/// Frame size used to turn the bandwidth-delay product into packets.
pub const BDP_FRAME: u64 = 1514;
/// Line rate (bytes/s) the default limit assumes for the delay line when no
/// rate is set: 10 Gbit/s of 1514-byte frames is ~826 k frames/s, more than
/// linkem forwards per-frame on any machine it was measured on, so the delay
/// line never fills the default queue.
pub const LINE_RATE: u64 = 10_000_000_000 / 8;
/// Ceiling of every default limit (memory: at most 512 MiB per direction
/// are queued anyway).
pub const MAX_DEFAULT_LIMIT: u32 = 1_000_000;

impl Spec {
    /// Nothing to do: frames are copied straight through.
    pub fn is_passthrough(&self) -> bool {
        self.latency == 0
            && self.jitter == 0
            && self.loss == LossModel::None
            && self.duplicate == 0
            && self.reorder == 0
            && self.corrupt == 0
            && self.rate == 0
    }

    /// Per-packet impairments need wire-sized packets (GSO super-frames are
    /// split into MTU-sized segments first). A constant delay does not.
    pub fn needs_segmentation(&self) -> bool {
        self.jitter != 0
            || self.loss != LossModel::None
            || self.duplicate != 0
            || self.reorder != 0
            || self.corrupt != 0
            || self.rate != 0
    }

    /// Queue limit in packets. An explicit `limit` is obeyed as netem does
    /// (it counts every frame held, also those on the delay line). Without
    /// one, the default holds the delay line plus a queue, so `delay` alone
    /// never turns into a queue limit (netem's trap: its 1000 frames count
    /// the frames in flight on the delay line):
    /// * with `rate`: twice the bandwidth-delay product of the rate and
    ///   (latency + jitter), in 1514-byte frames (half delay line, half a
    ///   bottleneck buffer of the same duration), at least 1000;
    /// * without `rate`: netem's 1000 frames plus the delay line at
    ///   LINE_RATE, i.e. 1000 + (latency + jitter) x 10 Gbit/s / 1514 B.
    pub fn effective_limit(&self) -> u32 {
        if let Some(l) = self.limit {
            return l;
        }
        let d = (self.latency + self.jitter) as u128; // ns
        // bytes in flight at `rate` over the delay
        let bytes = |rate: u64| rate as u128 * d / 1_000_000_000u128;
        let pkts = if self.rate == 0 {
            DEFAULT_LIMIT as u128 + (bytes(LINE_RATE) + BDP_FRAME as u128 - 1) / BDP_FRAME as u128
        } else {
            ((2 * bytes(self.rate) + BDP_FRAME as u128 - 1) / BDP_FRAME as u128).max(DEFAULT_LIMIT as u128)
        };
        pkts.min(MAX_DEFAULT_LIMIT as u128) as u32
    }
}

fn pct_to_prob(v: f64) -> Prob {
    // iproute2 set_percent / get_percent: percent * UINT32_MAX
    (v * u32::MAX as f64).round().clamp(0.0, u32::MAX as f64) as u32
}

/// iproute2 parse_percent: number, optionally followed by '%'; the value is
/// always interpreted as a percentage ("1" == "1%").
fn parse_percent(s: &str) -> Option<f64> {
    let (num, rest) = split_number(s)?;
    if !(rest.is_empty() || rest == "%") {
        return None;
    }
    let v = num / 100.0;
    if !(0.0..=1.0).contains(&v) {
        return None;
    }
    Some(v)
}

/// Split a leading strtod-style number from its suffix.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == start_digits || (i == start_digits + 1 && b[start_digits] == b'.') {
        return None;
    }
    // exponent
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let ds = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > ds {
            i = j;
        }
    }
    let v: f64 = s[..i].parse().ok()?;
    Some((v, &s[i..]))
}

/// Time like iproute2 get_time/get_time64: s/sec/secs, ms/msec/msecs,
/// us/usec/usecs, ns/nsec/nsecs (case-insensitive); a bare number is
/// microseconds. Returns nanoseconds.
pub fn parse_time(s: &str) -> Option<u64> {
    let (v, suf) = split_number(s)?;
    let mult = match suf.to_ascii_lowercase().as_str() {
        "" | "us" | "usec" | "usecs" => 1e3,
        "s" | "sec" | "secs" => 1e9,
        "ms" | "msec" | "msecs" => 1e6,
        "ns" | "nsec" | "nsecs" => 1.0,
        _ => return None,
    };
    let ns = v * mult;
    if !ns.is_finite() || ns < 0.0 || ns > 1e13 {
        return None;
    }
    Some(ns.round() as u64)
}

/// Rate like iproute2 get_rate64: a bare number is bit/s; suffixes are
/// case-insensitive; "bps" means bytes per second. Returns bytes/s.
pub fn parse_rate(s: &str) -> Option<u64> {
    let (v, suf) = split_number(s)?;
    const SUF: &[(&str, f64)] = &[
        ("", 1.0),
        ("bit", 1.0),
        ("kibit", 1024.0),
        ("kbit", 1000.0),
        ("mibit", 1024.0 * 1024.0),
        ("mbit", 1e6),
        ("gibit", 1024.0 * 1024.0 * 1024.0),
        ("gbit", 1e9),
        ("tibit", 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("tbit", 1e12),
        ("bps", 8.0),
        ("kibps", 8.0 * 1024.0),
        ("kbps", 8000.0),
        ("mibps", 8.0 * 1024.0 * 1024.0),
        ("mbps", 8e6),
        ("gibps", 8.0 * 1024.0 * 1024.0 * 1024.0),
        ("gbps", 8e9),
        ("tibps", 8.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("tbps", 8e12),
    ];
    let l = suf.to_ascii_lowercase();
    let scale = SUF.iter().find(|(n, _)| *n == l)?.1;
    let bytes = v * scale / 8.0;
    if !bytes.is_finite() || bytes < 0.0 {
        return None;
    }
    Some(bytes as u64)
}

/// tc's NEXT_IS_NUMBER(): next argument starts with a digit.
fn is_number(s: Option<&&str>) -> bool {
    s.map(|s| s.as_bytes().first().map_or(false, |c| c.is_ascii_digit()))
        .unwrap_or(false)
}

/// tc's NEXT_IS_SIGNED_NUMBER()
fn is_signed_number(s: Option<&&str>) -> bool {
    s.map(|s| {
        let b = s.as_bytes();
        b.first().map_or(false, |c| c.is_ascii_digit())
            || (b.len() > 1 && b[0] == b'-' && b[1].is_ascii_digit())
    })
    .unwrap_or(false)
}

/// iproute2 matches(): the argument is a (non-empty) prefix of the keyword.
fn matches(arg: &str, kw: &str) -> bool {
    !arg.is_empty() && kw.starts_with(arg)
}

fn err_missing(kw: &str) -> String {
    format!("\"{kw}\" needs a value")
}

fn bad(kw: &str, what: &str, v: &str) -> String {
    format!("bad {what} \"{v}\" for \"{kw}\"")
}

/// Parse a netem-style spec. The error message names the offending word.
pub fn parse(spec: &str) -> Result<Spec, String> {
    let args: Vec<&str> = spec.split_whitespace().collect();
    let mut s = Spec::default();
    let mut i = 0;
    let mut have_loss = false;
    let mut have_dist_kw: Option<&str> = None;
    let mut have_gap: Option<&str> = None;
    let mut reorder_kw: Option<&str> = None;

    macro_rules! next {
        ($kw:expr) => {{
            i += 1;
            match args.get(i) {
                Some(v) => *v,
                None => return Err(err_missing($kw)),
            }
        }};
    }
    // The next word as a probability, named `what` in the error when it is not a percentage.
    macro_rules! percent {
        ($kw:expr, $what:expr) => {{
            let v = next!($kw);
            pct_to_prob(parse_percent(v).ok_or_else(|| bad($kw, $what, v))?)
        }};
    }
    // netem's optional CORRELATION after a percentage: taken only when a number follows.
    macro_rules! optional_correlation {
        ($kw:expr) => {
            if is_number(args.get(i + 1)) {
                Some(percent!($kw, "correlation"))
            } else {
                None
            }
        };
    }

    while i < args.len() {
        let a = args[i];
        if matches(a, "limit") {
            let v = next!(a);
            match v.parse::<u32>() {
                Ok(n) if n > 0 => s.limit = Some(n),
                _ => return Err(bad(a, "packet count", v)),
            }
        } else if matches(a, "latency") || matches(a, "delay") {
            let v = next!(a);
            s.latency = parse_time(v).ok_or_else(|| bad(a, "time", v))?;
            if is_number(args.get(i + 1)) {
                let v = next!(a);
                s.jitter = parse_time(v).ok_or_else(|| bad(a, "jitter time", v))?;
                if let Some(corr) = optional_correlation!(a) {
                    s.delay_corr = corr;
                }
            }
            if s.jitter > (i32::MAX as u64) {
                return Err(bad(a, "jitter (max 2147ms)", args[i]));
            }
        } else if matches(a, "loss") || matches(a, "drop") {
            if have_loss {
                return Err(format!("duplicate loss argument \"{a}\""));
            }
            have_loss = true;
            let mut v = next!(a);
            let mut model = "random";
            if !v.as_bytes()[0].is_ascii_digit() {
                model = v;
                v = next!(model);
            }
            match model {
                "random" => {
                    let p = parse_percent(v).ok_or_else(|| bad(model, "percentage", v))?;
                    let corr = optional_correlation!(a).unwrap_or(0);
                    s.loss = if p > 0.0 {
                        LossModel::Random { p: pct_to_prob(p), corr }
                    } else {
                        LossModel::None
                    };
                }
                "gemodel" => {
                    let p = parse_percent(v).ok_or_else(|| bad(model, "p", v))?;
                    // defaults as documented in tc-netem(8): r = 1-p, 1-h = 1, 1-k = 0
                    let mut r = 1.0 - p;
                    let mut one_minus_h = 1.0;
                    let mut one_minus_k = 0.0;
                    if is_number(args.get(i + 1)) {
                        let v = next!(model);
                        r = parse_percent(v).ok_or_else(|| bad(model, "r", v))?;
                        if is_number(args.get(i + 1)) {
                            let v = next!(model);
                            one_minus_h = parse_percent(v).ok_or_else(|| bad(model, "1-h", v))?;
                            if is_number(args.get(i + 1)) {
                                let v = next!(model);
                                one_minus_k =
                                    parse_percent(v).ok_or_else(|| bad(model, "1-k", v))?;
                            }
                        }
                    }
                    s.loss = LossModel::GilbertElliott {
                        p: pct_to_prob(p),
                        r: pct_to_prob(r),
                        h: pct_to_prob(1.0 - one_minus_h),
                        k1: pct_to_prob(one_minus_k),
                    };
                }
                "state" => {
                    return Err("unsupported loss model \"state\" (use random or gemodel)".into())
                }
                other => return Err(format!("unknown loss model \"{other}\"")),
            }
        } else if matches(a, "ecn") {
            return Err("unsupported keyword \"ecn\"".into());
        } else if matches(a, "reorder") {
            reorder_kw = Some(a);
            s.reorder = percent!(a, "percentage");
            if let Some(corr) = optional_correlation!(a) {
                s.reorder_corr = corr;
            }
        } else if matches(a, "corrupt") {
            s.corrupt = percent!(a, "percentage");
            if let Some(corr) = optional_correlation!(a) {
                s.corrupt_corr = corr;
            }
        } else if matches(a, "gap") {
            let v = next!(a);
            s.gap = v.parse::<u32>().map_err(|_| bad(a, "packet count", v))?;
            have_gap = Some(a);
        } else if matches(a, "duplicate") {
            s.duplicate = percent!(a, "percentage");
            if let Some(corr) = optional_correlation!(a) {
                s.dup_corr = corr;
            }
        } else if matches(a, "distribution") {
            let v = next!(a);
            s.dist = Some(match v {
                "normal" => Dist::Normal,
                "pareto" => Dist::Pareto,
                "paretonormal" => Dist::ParetoNormal,
                "uniform" => Dist::Uniform,
                other => return Err(format!("unknown distribution \"{other}\"")),
            });
            have_dist_kw = Some(a);
        } else if matches(a, "rate") {
            let v = next!(a);
            if v.ends_with('%') {
                return Err(bad(a, "rate (percent of link speed is unsupported)", v));
            }
            s.rate = parse_rate(v).ok_or_else(|| bad(a, "rate", v))?;
            if s.rate == 0 {
                return Err(bad(a, "rate", v));
            }
            if is_signed_number(args.get(i + 1)) {
                let v = next!(a);
                s.packet_overhead = v.parse().map_err(|_| bad(a, "packet overhead", v))?;
                if is_number(args.get(i + 1)) {
                    let v = next!(a);
                    s.cell_size = v.parse().map_err(|_| bad(a, "cell size", v))?;
                    if is_signed_number(args.get(i + 1)) {
                        let v = next!(a);
                        s.cell_overhead = v.parse().map_err(|_| bad(a, "cell overhead", v))?;
                    }
                }
            }
        } else if matches(a, "slot") {
            return Err("unsupported keyword \"slot\"".into());
        } else if a == "seed" {
            return Err("unsupported keyword \"seed\" (use --seed)".into());
        } else {
            return Err(format!("unknown keyword \"{a}\""));
        }
        i += 1;
    }

    if s.reorder != 0 {
        if s.latency == 0 {
            return Err(format!(
                "\"{}\" needs some delay (reordering not possible without delay)",
                reorder_kw.unwrap_or("reorder")
            ));
        }
        if s.gap == 0 {
            s.gap = 1;
        }
    } else if let Some(g) = have_gap {
        if s.gap > 0 {
            return Err(format!("\"{g}\" specified without reorder probability"));
        }
    }
    if let Some(d) = have_dist_kw {
        if s.latency == 0 || s.jitter == 0 {
            return Err(format!("\"{d}\" specified but no latency and jitter values"));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn empty_is_passthrough() {
        let s = parse("").unwrap();
        assert!(s.is_passthrough());
        assert_eq!(s.effective_limit(), 1000);
        assert!(parse("   ").unwrap().is_passthrough());
    }

    #[test]
    fn delay_forms() {
        let s = parse("delay 100ms").unwrap();
        assert_eq!(s.latency, 100 * MS);
        assert_eq!(s.jitter, 0);
        let s = parse("delay 100ms 10ms 25%").unwrap();
        assert_eq!(s.jitter, 10 * MS);
        assert_eq!(s.delay_corr, pct_to_prob(0.25));
        let s = parse("delay 20ms 5ms distribution normal").unwrap();
        assert_eq!(s.dist, Some(Dist::Normal));
        assert_eq!(parse("latency 1s").unwrap().latency, 1000 * MS);
        assert_eq!(parse("delay 1.5msec").unwrap().latency, 1_500_000);
        assert_eq!(parse("delay 250us").unwrap().latency, 250_000);
        assert_eq!(parse("delay 250usec").unwrap().latency, 250_000);
        assert_eq!(parse("delay 250").unwrap().latency, 250_000); // bare = usec
        assert_eq!(parse("delay 2sec").unwrap().latency, 2000 * MS);
        assert_eq!(parse("delay 10MS").unwrap().latency, 10 * MS);
        assert_eq!(parse("del 10ms").unwrap().latency, 10 * MS); // tc prefix matching
        for d in ["pareto", "paretonormal", "uniform"] {
            assert!(parse(&format!("delay 10ms 2ms distribution {d}")).is_ok());
        }
    }

    #[test]
    fn loss_forms() {
        assert_eq!(
            parse("loss 1%").unwrap().loss,
            LossModel::Random { p: pct_to_prob(0.01), corr: 0 }
        );
        assert_eq!(parse("loss 1").unwrap().loss, parse("loss 1%").unwrap().loss);
        assert_eq!(
            parse("loss random 5% 25%").unwrap().loss,
            LossModel::Random { p: pct_to_prob(0.05), corr: pct_to_prob(0.25) }
        );
        assert_eq!(parse("drop 0.1%").unwrap().loss, parse("loss 0.1%").unwrap().loss);
        assert_eq!(parse("loss 0%").unwrap().loss, LossModel::None);
        match parse("loss gemodel 1%").unwrap().loss {
            LossModel::GilbertElliott { p, r, h, k1 } => {
                assert_eq!(p, pct_to_prob(0.01));
                assert_eq!(r, pct_to_prob(0.99));
                assert_eq!(h, 0);
                assert_eq!(k1, 0);
            }
            x => panic!("{x:?}"),
        }
        match parse("loss gemodel 1% 10% 70% 0.1%").unwrap().loss {
            LossModel::GilbertElliott { p, r, h, k1 } => {
                assert_eq!(p, pct_to_prob(0.01));
                assert_eq!(r, pct_to_prob(0.10));
                assert_eq!(h, pct_to_prob(0.30));
                assert_eq!(k1, pct_to_prob(0.001));
            }
            x => panic!("{x:?}"),
        }
    }

    #[test]
    fn other_keywords() {
        let s = parse("duplicate 1% 10% corrupt 0.1% reorder 25% 50% gap 5 delay 10ms").unwrap();
        assert_eq!(s.duplicate, pct_to_prob(0.01));
        assert_eq!(s.dup_corr, pct_to_prob(0.10));
        assert_eq!(s.corrupt, pct_to_prob(0.001));
        assert_eq!(s.reorder, pct_to_prob(0.25));
        assert_eq!(s.reorder_corr, pct_to_prob(0.5));
        assert_eq!(s.gap, 5);
        // tc sets gap to 1 when reorder is given without gap
        assert_eq!(parse("delay 10ms reorder 25%").unwrap().gap, 1);
        assert_eq!(parse("limit 50").unwrap().limit, Some(50));
        assert_eq!(parse("limit 50").unwrap().effective_limit(), 50);
    }

    #[test]
    fn rates() {
        assert_eq!(parse("rate 10mbit").unwrap().rate, 1_250_000);
        assert_eq!(parse("rate 1gbit").unwrap().rate, 125_000_000);
        assert_eq!(parse("rate 100kbit").unwrap().rate, 12_500);
        assert_eq!(parse("rate 1Mbit").unwrap().rate, 125_000);
        assert_eq!(parse("rate 8000").unwrap().rate, 1000); // bare = bit/s
        assert_eq!(parse("rate 8000bit").unwrap().rate, 1000);
        assert_eq!(parse("rate 1mbps").unwrap().rate, 1_000_000); // bytes
        assert_eq!(parse("rate 1kibit").unwrap().rate, 128);
        assert_eq!(parse("rate 1mibps").unwrap().rate, 1 << 20);
        let s = parse("rate 1mbit 20 100 -4").unwrap();
        assert_eq!((s.packet_overhead, s.cell_size, s.cell_overhead), (20, 100, -4));
        assert_eq!(parse("rate 1mbit -14").unwrap().packet_overhead, -14);
    }

    #[test]
    fn limit_defaults() {
        // 500 mbit, 50 ms: BDP = 3.125 MB -> 2 * 3125000 / 1514 = 4129
        let s = parse("delay 50ms rate 500mbit").unwrap();
        assert_eq!(s.effective_limit(), 4129);
        // small BDP -> floor
        assert_eq!(parse("rate 10mbit").unwrap().effective_limit(), 1000);
        // no rate: netem's 1000 plus the delay line at 10 Gbit/s:
        // 1.25e9 B/s * 50 ms / 1514 = 41281.4 -> 1000 + 41282
        assert_eq!(parse("delay 50ms").unwrap().effective_limit(), 42282);
        assert_eq!(parse("delay 40ms").unwrap().effective_limit(), 1000 + 33026);
        assert_eq!(parse("delay 40ms 10ms").unwrap().effective_limit(), 42282); // latency + jitter
        assert_eq!(parse("loss 1%").unwrap().effective_limit(), 1000); // no delay line: netem's
        assert_eq!(parse("").unwrap().effective_limit(), 1000);
        assert_eq!(parse("delay 10s").unwrap().effective_limit(), MAX_DEFAULT_LIMIT);
        // an explicit limit is obeyed as given, also below the delay line
        assert_eq!(parse("delay 50ms limit 1000").unwrap().effective_limit(), 1000);
        assert_eq!(parse("delay 50ms rate 500mbit limit 10").unwrap().effective_limit(), 10);
    }

    fn err(s: &str) -> String {
        parse(s).unwrap_err()
    }

    #[test]
    fn errors_name_the_word() {
        assert!(err("delya 10ms").contains("\"delya\""));
        assert!(err("delay").contains("\"delay\""));
        assert!(err("delay 10xs").contains("\"10xs\""));
        assert!(err("delay ms").contains("\"ms\""));
        assert!(err("loss 101%").contains("\"101%\""));
        assert!(err("loss 5%%").contains("\"5%%\""));
        assert!(err("loss bogus 5%").contains("\"bogus\""));
        assert!(err("loss 1% loss 2%").contains("\"loss\""));
        assert!(err("rate 10mbits").contains("\"10mbits\""));
        assert!(err("rate 0").contains("\"0\""));
        assert!(err("rate 10%").contains("\"10%\""));
        assert!(err("limit -1").contains("\"-1\""));
        assert!(err("limit abc").contains("\"abc\""));
        assert!(err("reorder 10%").contains("\"reorder\""));
        assert!(err("delay 10ms gap 5").contains("\"gap\""));
        assert!(err("delay 10ms distribution normal").contains("\"distribution\""));
        assert!(err("delay 10ms 1ms distribution cauchy").contains("\"cauchy\""));
        assert!(err("ecn").contains("\"ecn\""));
        assert!(err("slot 1ms").contains("\"slot\""));
        assert!(err("duplicate x").contains("\"x\""));
        assert!(err("corrupt -1%").contains("\"-1%\""));
        assert!(err("loss gemodel").contains("\"gemodel\""));
        for e in [err("delya"), err("delay 10xs"), err("loss bogus 5%")] {
            assert!(!e.contains('\n'));
        }
    }
}
