//! `vpnbench-gen client`: parameters over TCP, N paced sending threads, then the
//! receiver's counts back over TCP; one JSON document on stdout.

use crate::args::ClientArgs;
use crate::control::{self, Line};
use crate::net;
use crate::sender::{self, SendPlan, SendStats};
use crate::summary;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn connect(addr: SocketAddr, secs: f64) -> Result<TcpStream, String> {
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Refused: the server may not be listening yet; try again until the deadline.
        match TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1))) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() + Duration::from_millis(100) < deadline => {
                if e.kind() != std::io::ErrorKind::TimedOut {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            Err(e) => return Err(format!("cannot connect to {addr} within {secs} s: {e}")),
        }
    }
}

/// Exit code: 0 when the receiver's counts came back, 1 otherwise (the JSON says why).
pub fn run(a: ClientArgs) -> Result<i32, String> {
    let addr = SocketAddr::new(a.targets[0], a.port);
    net::allow_files(a.streams() + 64)?;
    let token = control::read_token(&a.token_file)?.map(|t| format!(" token={t}")).unwrap_or_default();
    let mut line = Line::new(connect(addr, a.connect_timeout)?, control::MAX_RESULT).map_err(|e| e.to_string())?;
    line.send(&format!(
        "HELLO 1 threads={} streams={} length={} duration={} interval={} boot={}{token}",
        a.threads, a.streams(), a.length, a.duration, a.interval, control::boot_id()
    ))?;
    let ready = control::parse(&line.recv(a.connect_timeout, "READY")?, "READY")?;
    net::tight_timer_slack();
    line.send("START")?;
    let stats = send_all(&a)?;
    let sent: String = stats.iter().map(|s| format!(" {}={}", s.stream, s.sent)).collect();
    let received = line
        .send(&format!("DONE secs={}{sent}", a.duration))
        .and_then(|_| line.recv(a.duration.min(60.0) + 15.0, "RESULT"))
        .and_then(|l| l.strip_prefix("RESULT ").map(str::to_string).ok_or_else(|| format!("expected RESULT, got {:?}", l)));
    let boot_same = ready.get("boot").map_or(false, |b| !b.is_empty() && *b == control::boot_id());
    let (receiver, error) = match received {
        Ok(doc) => (doc, None),
        Err(e) => ("null".to_string(), Some(e)),
    };
    println!("{}", summary::client(&a, &stats, &receiver, error.as_deref(), boot_same));
    Ok(if error.is_some() { 1 } else { 0 })
}

fn send_all(a: &ClientArgs) -> Result<Vec<SendStats>, String> {
    let start = net::monotonic_ns() + 2_000_000;
    let end = start + (a.duration * 1e9) as u64;
    let streams = a.streams();
    let handles: Vec<_> = (0..a.threads)
        .map(|thread| {
            // stream i: target i mod targets, thread i mod threads; every stream an equal share of the rate
            let mine: Vec<(u32, SocketAddr)> = (thread..streams)
                .step_by(a.threads)
                .map(|i| (i as u32, SocketAddr::new(a.targets[i % a.targets.len()], a.port)))
                .collect();
            let pps = a.rate_bps.map(|r| r / 8.0 / a.length as f64 * mine.len() as f64 / streams as f64);
            let plan = SendPlan {
                streams: mine,
                length: a.length,
                pps,
                gso: a.gso,
                start_mono: start,
                end_mono: end,
                interval_ns: (a.interval * 1e9) as u64,
                burst: a.burst,
            };
            std::thread::spawn(move || sender::run(plan))
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.extend(h.join().map_err(|_| "a sending thread panicked".to_string())?.map_err(|e| format!("UDP socket: {e}"))?);
    }
    Ok(out)
}
