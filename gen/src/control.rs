//! The TCP control connection: one line per message, every read bounded by a timeout.
//!
//!   client -> server  HELLO 1 threads=N length=L duration=D interval=I boot=ID
//!                     (N sending threads, streams 0..N-1: the only ones the server tracks)
//!   server -> client  READY gro=0|1 boot=ID           (or ERROR reason)
//!   client -> server  START                            (the server's t0; data follows)
//!   client -> server  DONE secs=S 0=SENT 1=SENT ...    (per stream)
//!   server -> client  RESULT {receiver JSON}
//!
//! Nothing waits on a UDP packet: a lost first datagram is one lost packet, never a hang.
//! The control connection is untrusted input: a line has a length cap, a wait is one deadline
//! over all its reads (a byte every second does not keep it alive), and with a token file
//! the HELLO must carry the run's token (`token=T`), so a stranger cannot take the server.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Longest line the server accepts (HELLO, START, DONE with one count per stream: at most 26
/// bytes each, so room for args::MAX_STREAMS).
pub const MAX_REQUEST: usize = 1 << 19;
/// Longest line the client accepts (RESULT carries the receiver's JSON document, with a count
/// per stream: about 40 bytes each).
pub const MAX_RESULT: usize = 1 << 22;

pub struct Line {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    max_line: usize,
}

impl Line {
    pub fn new(stream: TcpStream, max_line: usize) -> std::io::Result<Self> {
        stream.set_nodelay(true)?;
        let writer = stream.try_clone()?;
        writer.set_write_timeout(Some(Duration::from_secs(10)))?;
        Ok(Line { reader: BufReader::new(stream), writer, max_line })
    }

    pub fn send(&mut self, line: &str) -> Result<(), String> {
        self.writer.write_all(format!("{line}\n").as_bytes()).map_err(|e| format!("control connection: {e}"))
    }

    /// The next line, waiting at most `secs` in all, at most max_line bytes long.
    pub fn recv(&mut self, secs: f64, what: &str) -> Result<String, String> {
        let deadline = Instant::now() + Duration::from_secs_f64(secs.clamp(0.001, 1e6));
        let timed_out = || format!("no {what} on the control connection within {secs:.1} s");
        let mut line = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timed_out());
            }
            self.reader.get_ref().set_read_timeout(Some(left)).map_err(|e| format!("control connection: {e}"))?;
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    return Err(timed_out())
                }
                Err(e) => return Err(format!("control connection: {e}")),
            };
            if buf.is_empty() {
                return Err(format!("control connection closed while waiting for {what}"));
            }
            let end = buf.iter().position(|&b| b == b'\n');
            let take = end.map_or(buf.len(), |i| i + 1);
            line.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if line.len() > self.max_line + 1 {
                return Err(format!("a line over {} bytes on the control connection while waiting for {what}", self.max_line));
            }
            if end.is_some() {
                return Ok(String::from_utf8_lossy(&line).trim_end().to_string());
            }
        }
    }
}

/// The token in a file (surrounding white space dropped); None without a file.
pub fn read_token(path: &Option<String>) -> Result<Option<String>, String> {
    match path {
        None => Ok(None),
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) if !t.trim().is_empty() && !t.trim().contains(char::is_whitespace) => Ok(Some(t.trim().to_string())),
            Ok(_) => Err(format!("--token-file: {p} holds no single word")),
            Err(e) => Err(format!("--token-file: {p}: {e}")),
        },
    }
}

/// Constant-time comparison: the answer does not tell how many leading characters matched.
pub fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `WORD k=v k=v`: the word and the pairs, or an error naming what was expected.
pub fn parse(line: &str, word: &str) -> Result<BTreeMap<String, String>, String> {
    let mut parts = line.split_whitespace();
    if parts.next() != Some(word) {
        if let Some(reason) = line.strip_prefix("ERROR ") {
            return Err(format!("server: {reason}"));
        }
        return Err(format!("expected {word} on the control connection, got {:?}", truncate(line)));
    }
    Ok(parts.filter_map(|p| p.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

pub fn get<T: std::str::FromStr>(kv: &BTreeMap<String, String>, key: &str) -> Result<T, String> {
    kv.get(key).and_then(|v| v.parse().ok()).ok_or_else(|| format!("control message without a valid {key}"))
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}

pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_errors() {
        let kv = parse("DONE secs=2 0=10 1=12", "DONE").unwrap();
        assert_eq!(get::<u64>(&kv, "1"), Ok(12));
        assert!(get::<u64>(&kv, "2").is_err());
        assert_eq!(parse("ERROR --threads: 9 > 2 cores", "READY").unwrap_err(), "server: --threads: 9 > 2 cores");
        assert!(parse("HELLO", "READY").unwrap_err().starts_with("expected READY"));
    }
}
