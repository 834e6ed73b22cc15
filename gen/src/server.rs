//! `vpnbench-gen server`: one test, then exit. Every wait is bounded.

use crate::args::{self, ServerArgs};
use crate::control::{self, Line};
use crate::net;
use crate::receiver::{self, RecvStats, Shared};
use crate::summary::{self, ReceiverSetup};
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn listen(port: u16) -> Result<TcpListener, String> {
    // [::] takes IPv4 too (bindv6only=0); a host without IPv6 falls back to 0.0.0.0.
    TcpListener::bind(SocketAddr::from(([0u16; 8], port)))
        .or_else(|_| TcpListener::bind(SocketAddr::from(([0u8; 4], port))))
        .map_err(|e| format!("cannot listen on TCP port {port}: {e}"))
}

fn accept(l: &TcpListener, secs: f64) -> Result<TcpStream, String> {
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
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

pub fn run(a: ServerArgs) -> Result<(), String> {
    let listener = listen(a.port)?;
    let mut line = Line::new(accept(&listener, a.accept_timeout)?).map_err(|e| e.to_string())?;
    drop(listener);
    let hello = control::parse(&line.recv(10.0, "HELLO")?, "HELLO")?;
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
    });
    let (handles, gro) = start_receivers(a.port, setup.threads, a.gro, &shared)?;
    let result = converse(&mut line, &setup, gro, &shared);
    shared.stop.store(true, Ordering::Relaxed);
    let stats: Vec<RecvStats> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
    let (secs, sent) = result?;
    let doc = summary::receiver(&stats, &sent, secs, &ReceiverSetup { gro, ..setup });
    println!("{doc}");
    line.send(&format!("RESULT {doc}"))
}

type Handles = Vec<std::thread::JoinHandle<RecvStats>>;

fn start_receivers(port: u16, threads: usize, want_gro: bool, shared: &Arc<Shared>) -> Result<(Handles, bool), String> {
    let mut gro = want_gro;
    let mut socks = Vec::new();
    for _ in 0..threads {
        let s = net::receive_socket(port).map_err(|e| format!("cannot bind UDP port {port}: {e}"))?;
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
    let length: usize = control::get(kv, "length")?;
    let interval: f64 = control::get(kv, "interval")?;
    let duration: f64 = control::get(kv, "duration")?;
    if threads == 0 || threads > args::cores() {
        return Err(format!("--threads: {threads} is not allowed; allowed values: 1 to {} (the server's cores)", args::cores()));
    }
    if !(args::HEADER_LEN..=args::MAX_LEN).contains(&length) || !(interval > 0.0) || !(duration > 0.0) {
        return Err("HELLO with a length, interval or duration out of range".into());
    }
    let boot = kv.get("boot").cloned().unwrap_or_default();
    let clock_shared = !boot.is_empty() && boot == control::boot_id();
    Ok(ReceiverSetup { threads, length, interval, duration, gro: false, clock_shared })
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
    let mut sent = BTreeMap::new();
    for (k, v) in &done {
        if let (Ok(stream), Ok(n)) = (k.parse::<u32>(), v.parse::<u64>()) {
            sent.insert(stream, n);
        }
    }
    Ok((secs, sent))
}
