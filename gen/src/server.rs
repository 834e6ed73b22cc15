//! `vpnbench-gen server`: one test, then exit. Every wait is bounded.

use crate::args::{self, ServerArgs};
use crate::control::{self, Line};
use crate::net;
use crate::receiver::{self, RecvStats, Shared};
use crate::summary::{self, ReceiverSetup};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn listen(bind: Option<IpAddr>, port: u16) -> Result<TcpListener, String> {
    let bound = match bind {
        Some(addr) => TcpListener::bind(SocketAddr::new(addr, port)),
        // [::] takes IPv4 too (bindv6only=0); a host without IPv6 falls back to 0.0.0.0.
        None => TcpListener::bind(SocketAddr::from(([0u16; 8], port))).or_else(|_| TcpListener::bind(SocketAddr::from(([0u8; 4], port)))),
    };
    bound.map_err(|e| format!("cannot listen on TCP port {port}: {e}"))
}

fn accept(l: &TcpListener, deadline: Instant, secs: f64) -> Result<TcpStream, String> {
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).map_err(|e| e.to_string())?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(format!("no client connected within {secs} s"));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
}

/// The client's connection and HELLO. With a token, a connection that does not bring it (or
/// brings nothing, or too much, or too slowly) gets an ERROR line and is dropped, and the server
/// waits on for its client until the accept deadline; without one, the first connection is it.
fn first_client(l: &TcpListener, a: &ServerArgs, token: Option<&str>) -> Result<(Line, BTreeMap<String, String>), String> {
    let deadline = Instant::now() + Duration::from_secs_f64(a.accept_timeout);
    loop {
        let mut line = Line::new(accept(l, deadline, a.accept_timeout)?, control::MAX_REQUEST).map_err(|e| e.to_string())?;
        let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64().clamp(0.5, HELLO_WAIT_S);
        let hello = line.recv(left, "HELLO").and_then(|text| control::parse(&text, "HELLO"));
        let token = match token {
            Some(token) => token,
            None => return hello.map(|kv| (line, kv)),
        };
        let refusal = match hello {
            Ok(kv) if kv.get("token").map_or(false, |t| control::same_token(t, token)) => return Ok((line, kv)),
            Ok(_) => "a HELLO without this run's token".to_string(),
            Err(e) => e,
        };
        eprintln!("vpnbench-gen: dropped a connection: {refusal}");
        let _ = line.send(&format!("ERROR {refusal}"));
    }
}

const HELLO_WAIT_S: f64 = 10.0;

pub fn run(a: ServerArgs) -> Result<(), String> {
    let token = control::read_token(&a.token_file)?;
    let listener = listen(a.bind, a.port)?;
    let (mut line, hello) = first_client(&listener, &a, token.as_deref())?;
    drop(listener);
    let setup = match check_hello(&hello) {
        Ok(s) => s,
        Err(e) => {
            let _ = line.send(&format!("ERROR {e}"));
            return Err(e);
        }
    };
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        t0: AtomicU64::new(0),
        interval_ns: (setup.interval * 1e9) as u64,
        max_owd_ns: AtomicU64::new(0),
        streams: setup.streams as u32,
    });
    let (handles, gro) = start_receivers(a.bind, a.port, setup.threads, a.gro, &shared)?;
    let result = converse(&mut line, &setup, gro, &shared);
    shared.stop.store(true, Ordering::Relaxed);
    let stats: Vec<RecvStats> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
    let (secs, sent) = result?;
    let doc = summary::receiver(&stats, &sent, secs, &ReceiverSetup { gro, ..setup });
    println!("{doc}");
    line.send(&format!("RESULT {doc}"))
}

type Handles = Vec<std::thread::JoinHandle<RecvStats>>;

fn start_receivers(bind: Option<IpAddr>, port: u16, threads: usize, want_gro: bool, shared: &Arc<Shared>) -> Result<(Handles, bool), String> {
    let mut gro = want_gro;
    let mut socks = Vec::new();
    for _ in 0..threads {
        let s = net::receive_socket(bind, port).map_err(|e| format!("cannot bind UDP port {port}: {e}"))?;
        gro &= receiver::configure(&s, want_gro);
        socks.push(s);
    }
    let handles = socks
        .into_iter()
        .map(|s| {
            let sh = shared.clone();
            std::thread::spawn(move || receiver::run(s, sh))
        })
        .collect();
    Ok((handles, gro))
}

fn check_hello(kv: &BTreeMap<String, String>) -> Result<ReceiverSetup, String> {
    let threads: usize = control::get(kv, "threads")?;
    // One stream per thread unless the client says more (one per target: vpnbench's tunnels).
    let streams: usize = if kv.contains_key("streams") { control::get(kv, "streams")? } else { threads };
    if streams < threads || streams > args::MAX_STREAMS {
        return Err(format!("streams: {streams} is not allowed; allowed values: {threads} (the threads) to {}", args::MAX_STREAMS));
    }
    let length: usize = control::get(kv, "length")?;
    let interval: f64 = control::get(kv, "interval")?;
    let duration: f64 = control::get(kv, "duration")?;
    if threads == 0 || threads > args::cores() {
        return Err(format!("--threads: {threads} is not allowed; allowed values: 1 to {} (the server's cores)", args::cores()));
    }
    let within = |v: f64, (lo, hi): (f64, f64)| v >= lo && v <= hi; // false for NaN
    if !(args::HEADER_LEN..=args::MAX_LEN).contains(&length) || !within(interval, args::INTERVAL_S) || !within(duration, args::DURATION_S) {
        return Err(format!(
            "HELLO with a length, interval or duration out of range; allowed: length {} to {}, interval {} to {} s, duration {} to {} s",
            args::HEADER_LEN, args::MAX_LEN, args::INTERVAL_S.0, args::INTERVAL_S.1, args::DURATION_S.0, args::DURATION_S.1
        ));
    }
    let boot = kv.get("boot").cloned().unwrap_or_default();
    let clock_shared = !boot.is_empty() && boot == control::boot_id();
    Ok(ReceiverSetup { threads, streams, length, interval, duration, gro: false, clock_shared })
}

/// READY, START, DONE: the seconds the client sent for and its per-stream counts.
fn converse(line: &mut Line, s: &ReceiverSetup, gro: bool, shared: &Shared) -> Result<(f64, BTreeMap<u32, u64>), String> {
    line.send(&format!("READY gro={} boot={}", gro as u8, control::boot_id()))?;
    control::parse(&line.recv(10.0, "START")?, "START")?;
    shared.t0.store(net::realtime_ns(), Ordering::Relaxed);
    let done = control::parse(&line.recv(s.duration + 30.0, "DONE")?, "DONE")?;
    // Let packets still in flight arrive: twice the largest one-way delay seen, 0.25-5 s.
    let owd = shared.max_owd_ns.load(Ordering::Relaxed) as f64 * 1e-9;
    std::thread::sleep(Duration::from_secs_f64((2.0 * owd).clamp(0.25, 5.0)));
    let secs: f64 = control::get(&done, "secs")?;
    if !(secs > 0.0 && secs <= 2.0 * args::DURATION_S.1) {
        return Err(format!("DONE with secs={secs}; allowed: 0 to {} s", 2.0 * args::DURATION_S.1));
    }
    let mut sent = BTreeMap::new();
    for (k, v) in &done {
        if let (Ok(stream), Ok(n)) = (k.parse::<u32>(), v.parse::<u64>()) {
            sent.insert(stream, n);
        }
    }
    Ok((secs, sent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrng::Rng;
    use std::io::{BufRead, BufReader, Write};

    const WORDS: &[&str] = &["HELLO", "1", "threads=", "length=", "interval=", "duration=", "boot=", "token=", "=", " ", "\t"];
    const VALUES: &[&str] = &[
        "inf", "-inf", "NaN", "1e-12", "1e-9", "0", "-0", "-1", "1e308", "1e400", "0.01", "0.1", "1", "2", "24", "65507",
        "65508", "18446744073709551616", "99999999999999999999999", "3600.0000001", "86400", "0x10", "", "é", "1_0",
    ];

    fn random_hello(rng: &mut Rng) -> String {
        let mut line = String::new();
        for _ in 0..(rng.next() % 12) {
            line.push_str(rng.pick(WORDS));
            if rng.next() % 2 == 0 {
                line.push_str(rng.pick(VALUES));
            }
            if rng.next() % 3 == 0 {
                line.push(' ');
            }
        }
        line
    }

    #[test]
    fn random_hello_lines_give_an_error_or_a_setup_in_range_never_a_panic() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut accepted, mut refused) = (0, 0);
        for i in 0..20_000 {
            let line = if i % 4 == 0 {
                // mostly well-formed, one value at random: the interesting cases
                format!("HELLO 1 threads=1 length={} interval={} duration={}", rng.pick(VALUES), rng.pick(VALUES), rng.pick(VALUES))
            } else {
                random_hello(&mut rng)
            };
            match control::parse(&line, "HELLO").and_then(|kv| check_hello(&kv)) {
                Ok(s) => {
                    accepted += 1;
                    assert!(s.interval >= args::INTERVAL_S.0 && s.interval <= args::INTERVAL_S.1, "{line}");
                    assert!(s.duration >= args::DURATION_S.0 && s.duration <= args::DURATION_S.1, "{line}");
                    // from_secs_f64 panics on a value a Duration cannot hold
                    assert!((s.interval * 1e9) as u64 > 0 && Duration::from_secs_f64(s.duration) > Duration::ZERO);
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.is_empty() && !e.contains('\n'), "{e:?}");
                }
            }
        }
        assert!(accepted > 10 && refused > 10_000, "accepted {accepted}, refused {refused}");
    }

    fn server(token: Option<&str>, accept_timeout: f64) -> (u16, std::thread::JoinHandle<Result<(), String>>) {
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let token_file = token.map(|t| {
            let path = std::env::temp_dir().join(format!("gen-token-{}-{port}", std::process::id()));
            std::fs::write(&path, t).unwrap();
            path.to_string_lossy().into_owned()
        });
        let a = ServerArgs { port, accept_timeout, gro: false, bind: Some("127.0.0.1".parse().unwrap()), token_file };
        let handle = std::thread::spawn(move || run(a));
        std::thread::sleep(Duration::from_millis(100));
        (port, handle)
    }

    fn exchange(port: u16, send: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let _ = s.write_all(send);
        let mut reply = String::new();
        let _ = BufReader::new(s).read_line(&mut reply);
        reply
    }

    #[test]
    fn out_of_range_hellos_are_an_error_line_not_an_abort() {
        for bad in ["duration=inf interval=1", "duration=1 interval=1e-12", "duration=1 interval=1e-9", "duration=NaN interval=1"] {
            let (port, handle) = server(None, 5.0);
            let reply = exchange(port, format!("HELLO 1 threads=1 length=100 {bad}\n").as_bytes());
            assert!(reply.starts_with("ERROR HELLO with a length, interval or duration out of range"), "{bad}: {reply:?}");
            assert!(handle.join().expect("server panicked").is_err());
        }
    }

    #[test]
    fn strangers_are_refused_and_the_client_with_the_token_is_served() {
        let (port, handle) = server(Some("s3cret"), 20.0);
        let mut rng = Rng(7);
        let noise: Vec<u8> = (0..control::MAX_REQUEST + 8_000).map(|_| (rng.next() % 255) as u8 + 1).map(|b| if b == b'\n' { b'x' } else { b }).collect();
        // the reply may be lost to the reset of a close with unread bytes; what counts is the server going on
        let reply = exchange(port, &noise);
        assert!(reply.is_empty() || reply.starts_with(&format!("ERROR a line over {} bytes", control::MAX_REQUEST)), "{reply:?}");
        assert!(exchange(port, b"HELLO 1 threads=1 length=100 duration=1 interval=1\n").starts_with("ERROR a HELLO without"));
        assert!(exchange(port, b"HELLO 1 token=guess threads=1 length=100 duration=1 interval=1\n").starts_with("ERROR a HELLO without"));
        // the right token with a bad value: this one is the client, so the server says why and ends
        let reply = exchange(port, b"HELLO 1 token=s3cret threads=1 length=100 duration=inf interval=1\n");
        assert!(reply.starts_with("ERROR HELLO with"), "{reply:?}");
        assert!(handle.join().expect("server panicked").is_err());
    }

    #[test]
    fn a_slow_drip_times_out_on_the_total_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // 80 bytes, one every 50 ms: a deadline per read would wait out all 4 s of them
        const DRIP_S: f64 = 80.0 * 0.05;
        let dripper = std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            for _ in 0..80 {
                if s.write_all(b"H").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut line = Line::new(listener.accept().unwrap().0, control::MAX_REQUEST).unwrap();
        let started = Instant::now();
        let err = line.recv(0.5, "HELLO").unwrap_err();
        let took = started.elapsed().as_secs_f64();
        assert!(err.starts_with("no HELLO on the control connection within 0.5 s"), "{err}");
        // at least the deadline (less a clock tick); a late wake-up on a busy host may add to it, but
        // only a per-read deadline waits as long as the drip
        assert!((0.45..DRIP_S).contains(&took), "waited {took} s for a 0.5 s deadline");
        drop(line);
        dripper.join().unwrap();
    }
}
