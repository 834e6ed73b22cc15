//! Command line: every bad value is one line naming the flag and what is allowed (exit 2).

use std::net::IpAddr;

pub const HEADER_LEN: usize = 24;
pub const MAX_LEN: usize = 65507;
/// Seconds a test may last and between interval reports: the client's flags and the server's
/// check of the client's HELLO take the same ranges (an interval of 1e-12 s would be 0 ns).
pub const DURATION_S: (f64, f64) = (0.1, 86400.0);
pub const INTERVAL_S: (f64, f64) = (0.01, 3600.0);
/// Streams one test may hold (one per target, or per thread): vpnbench's tunnels axis goes to 10 000.
pub const MAX_STREAMS: usize = 10_000;

#[derive(Debug, Clone)]
pub struct ClientArgs {
    /// Where the streams go (one `--target` each, in order); the control connection goes to the first.
    pub targets: Vec<IpAddr>,
    pub port: u16,
    /// UDP payload bits per second over all threads; None = as fast as possible.
    pub rate_bps: Option<f64>,
    pub length: usize,
    pub duration: f64,
    pub threads: usize,
    pub interval: f64,
    pub gso: bool,
    pub connect_timeout: f64,
    /// Token-bucket depth in packets per thread; None = 5 ms of packets.
    pub burst: Option<u64>,
    /// A file holding the run's secret for this test: the server talks only to a client that knows it.
    pub token_file: Option<String>,
}

impl ClientArgs {
    /// One stream per target, or per thread when there are more threads: stream i goes to
    /// target i mod targets and is sent by thread i mod threads.
    pub fn streams(&self) -> usize {
        self.threads.max(self.targets.len())
    }
}

#[derive(Debug, Clone)]
pub struct ServerArgs {
    pub port: u16,
    pub accept_timeout: f64,
    pub gro: bool,
    /// Listen on this address only (default: every address).
    pub bind: Option<IpAddr>,
    pub token_file: Option<String>,
}

#[derive(Debug)]
pub enum Command {
    Client(ClientArgs),
    Server(ServerArgs),
    Help,
}

pub const USAGE: &str = "usage: vpnbench-gen server --port P [--accept-timeout S] [--gro auto|off] [--bind ADDR]
                           [--token-file PATH]
       vpnbench-gen client --target ADDR [--target ADDR ...] --port P --rate R|max --length L --duration D
                           [--threads N] [--interval S] [--gso auto|off] [--connect-timeout S] [--burst PACKETS]
                           [--token-file PATH]
rates are UDP payload bits/s (k, M, G suffixes, powers of 1000); times in seconds (optional 's')";

pub struct UsageError(pub String);

fn bad(flag: &str, value: &str, allowed: &str) -> UsageError {
    UsageError(format!("{flag}: '{value}' is not allowed; allowed values: {allowed}"))
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

pub fn parse_rate(s: &str) -> Option<f64> {
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1e3),
        'm' | 'M' => (&s[..s.len() - 1], 1e6),
        'g' | 'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * mult)
}

fn parse_seconds(s: &str) -> Option<f64> {
    let v: f64 = s.strip_suffix('s').unwrap_or(s).parse().ok()?;
    v.is_finite().then_some(v)
}

fn number<T: std::str::FromStr + PartialOrd + std::fmt::Display>(flag: &str, v: &str, lo: T, hi: T) -> Result<T, UsageError> {
    match v.parse::<T>() {
        Ok(n) if n >= lo && n <= hi => Ok(n),
        _ => Err(bad(flag, v, &format!("an integer from {lo} to {hi}"))),
    }
}

fn seconds(flag: &str, v: &str, lo: f64, hi: f64) -> Result<f64, UsageError> {
    match parse_seconds(v) {
        Some(n) if n >= lo && n <= hi => Ok(n),
        _ => Err(bad(flag, v, &format!("seconds from {lo} to {hi}"))),
    }
}

fn on_off(flag: &str, v: &str) -> Result<bool, UsageError> {
    match v {
        "auto" => Ok(true),
        "off" => Ok(false),
        _ => Err(bad(flag, v, "'auto', 'off'")),
    }
}

/// Flag/value pairs; every flag takes one value.
fn pairs(args: &[String], known: &[&str]) -> Result<Vec<(String, String)>, UsageError> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if !known.contains(&flag.as_str()) {
            return Err(UsageError(format!("{flag}: unknown flag; allowed flags: {}", known.join(", "))));
        }
        let value = it.next().ok_or_else(|| UsageError(format!("{flag}: a value is required")))?;
        out.push((flag.clone(), value.clone()));
    }
    Ok(out)
}

pub fn parse(args: &[String]) -> Result<Command, UsageError> {
    match args.first().map(String::as_str) {
        Some("client") => parse_client(&args[1..]).map(Command::Client),
        Some("server") => parse_server(&args[1..]).map(Command::Server),
        Some("-h") | Some("--help") | Some("help") => Ok(Command::Help),
        Some(other) => Err(bad("command", other, "'client', 'server'")),
        None => Err(UsageError("command: missing; allowed values: 'client', 'server'".into())),
    }
}

fn parse_server(args: &[String]) -> Result<ServerArgs, UsageError> {
    let mut s = ServerArgs { port: 0, accept_timeout: 60.0, gro: true, bind: None, token_file: None };
    for (flag, v) in pairs(args, &["--port", "--accept-timeout", "--gro", "--bind", "--token-file"])? {
        match flag.as_str() {
            "--port" => s.port = number(&flag, &v, 1u16, 65535)?,
            "--accept-timeout" => s.accept_timeout = seconds(&flag, &v, 0.1, 86400.0)?,
            "--bind" => s.bind = Some(v.parse().map_err(|_| bad(&flag, &v, "an IPv4 or IPv6 address"))?),
            "--token-file" => s.token_file = Some(v),
            _ => s.gro = on_off(&flag, &v)?,
        }
    }
    if s.port == 0 {
        return Err(UsageError("--port: required; allowed values: an integer from 1 to 65535".into()));
    }
    Ok(s)
}

fn parse_client(args: &[String]) -> Result<ClientArgs, UsageError> {
    let known = [
        "--target", "--port", "--rate", "--length", "--duration", "--threads", "--interval", "--gso", "--connect-timeout",
        "--burst", "--token-file",
    ];
    let mut c = ClientArgs {
        targets: Vec::new(),
        port: 0,
        rate_bps: None,
        length: 1300,
        duration: 10.0,
        threads: 1,
        interval: 1.0,
        gso: true,
        connect_timeout: 10.0,
        burst: None,
        token_file: None,
    };
    let mut have_rate = false;
    let max_threads = cores();
    for (flag, v) in pairs(args, &known)? {
        match flag.as_str() {
            "--target" => {
                c.targets.push(v.parse().map_err(|_| bad(&flag, &v, "an IPv4 or IPv6 address"))?);
                if c.targets.len() > MAX_STREAMS {
                    return Err(UsageError(format!("--target: more than {MAX_STREAMS}; allowed: 1 to {MAX_STREAMS} targets")));
                }
            }
            "--port" => c.port = number(&flag, &v, 1u16, 65535)?,
            "--rate" => {
                c.rate_bps = if v == "max" {
                    None
                } else {
                    Some(parse_rate(&v).ok_or_else(|| bad(&flag, &v, "bits/s above 0 (k, M, G suffixes) or 'max'"))?)
                };
                have_rate = true;
            }
            "--length" => c.length = number(&flag, &v, HEADER_LEN, MAX_LEN)?,
            "--duration" => c.duration = seconds(&flag, &v, DURATION_S.0, DURATION_S.1)?,
            "--threads" => c.threads = number(&flag, &v, 1usize, max_threads)?,
            "--interval" => c.interval = seconds(&flag, &v, INTERVAL_S.0, INTERVAL_S.1)?,
            "--token-file" => c.token_file = Some(v),
            "--gso" => c.gso = on_off(&flag, &v)?,
            "--burst" => c.burst = Some(number(&flag, &v, 1u64, 1 << 20)?),
            _ => c.connect_timeout = seconds(&flag, &v, 0.1, 600.0)?,
        }
    }
    if c.targets.is_empty() {
        return Err(UsageError("--target: required; allowed values: an IPv4 or IPv6 address".into()));
    }
    if c.port == 0 {
        return Err(UsageError("--port: required; allowed values: an integer from 1 to 65535".into()));
    }
    if !have_rate {
        return Err(UsageError("--rate: required; allowed values: bits/s above 0 (k, M, G suffixes) or 'max'".into()));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn err(s: &str) -> String {
        match parse(&argv(s)) {
            Err(UsageError(m)) => m,
            Ok(c) => panic!("accepted: {c:?}"),
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("50M"), Some(50e6));
        assert_eq!(parse_rate("1.5G"), Some(1.5e9));
        assert_eq!(parse_rate("0"), None);
        assert_eq!(parse_rate("-1k"), None);
        assert_eq!(parse_rate("fast"), None);
    }

    #[test]
    fn bad_input_names_the_flag() {
        let base = "client --target 10.0.0.1 --port 5000";
        assert!(err(&format!("{base} --rate 0")).starts_with("--rate: '0'"));
        assert!(err(&format!("{base} --rate 1M --length 65508")).contains("24 to 65507"));
        assert!(err(&format!("{base} --rate 1M --length 23")).starts_with("--length"));
        assert!(err(&format!("{base} --rate 1M --threads 100000")).starts_with("--threads"));
        assert!(err(&format!("{base} --rate 1M --bogus 1")).starts_with("--bogus: unknown flag"));
        assert!(err("client --port 1 --rate 1M").starts_with("--target: required"));
        assert!(err("client --target host --port 1 --rate 1M").starts_with("--target: 'host'"));
    }

    #[test]
    fn several_targets_one_stream_each_over_the_threads() {
        match parse(&argv("client --target 10.0.0.2 --target 10.0.0.6 --target fd99::a --port 5 --rate 1M --threads 1")) {
            Ok(Command::Client(c)) => {
                assert_eq!(c.targets.len(), 3);
                assert_eq!(c.streams(), 3);
            }
            _ => panic!(),
        }
    }

    #[test]
    fn good_client() {
        match parse(&argv("client --target ::1 --port 5000 --rate max --length 64 --duration 2s --gso off")) {
            Ok(Command::Client(c)) => {
                assert!(c.targets[0].is_ipv6() && c.targets.len() == 1 && c.streams() == 1);
                assert_eq!((c.rate_bps, c.length, c.duration, c.gso), (None, 64, 2.0, false));
            }
            _ => panic!(),
        }
    }
}
