//! The TCP control connection: one line per message, every read bounded by a timeout.
//!
//!   client -> server  HELLO 1 threads=N length=L duration=D interval=I boot=ID
//!   server -> client  READY gro=0|1 boot=ID           (or ERROR reason)
//!   client -> server  START                            (the server's t0; data follows)
//!   client -> server  DONE secs=S 0=SENT 1=SENT ...    (per stream)
//!   server -> client  RESULT {receiver JSON}
//!
//! Nothing waits on a UDP packet: a lost first datagram is one lost packet, never a hang.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Line {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Line {
    pub fn new(stream: TcpStream) -> std::io::Result<Self> {
        stream.set_nodelay(true)?;
        let writer = stream.try_clone()?;
        writer.set_write_timeout(Some(Duration::from_secs(10)))?;
        Ok(Line { reader: BufReader::new(stream), writer })
    }

    pub fn send(&mut self, line: &str) -> Result<(), String> {
        self.writer.write_all(format!("{line}\n").as_bytes()).map_err(|e| format!("control connection: {e}"))
    }

    /// The next line, waiting at most `secs`.
    pub fn recv(&mut self, secs: f64, what: &str) -> Result<String, String> {
        self.reader.get_ref().set_read_timeout(Some(Duration::from_secs_f64(secs.max(0.001)))).ok();
        let mut s = String::new();
        match self.reader.read_line(&mut s) {
            Ok(0) => Err(format!("control connection closed while waiting for {what}")),
            Ok(_) => Ok(s.trim_end().to_string()),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                Err(format!("no {what} on the control connection within {secs:.1} s"))
            }
            Err(e) => Err(format!("control connection: {e}")),
        }
    }
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
