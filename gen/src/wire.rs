//! The datagram header: magic, stream, sequence number, send time (CLOCK_REALTIME ns),
//! little-endian, 24 bytes; the rest of the datagram is padding.

pub const MAGIC: u32 = 0x4742_5056; // "VPBG"
pub const LEN: usize = 24;

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct Header {
    pub stream: u32,
    pub seq: u64,
    pub sent_ns: u64,
}

pub fn write(buf: &mut [u8], h: &Header) {
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[4..8].copy_from_slice(&h.stream.to_le_bytes());
    buf[8..16].copy_from_slice(&h.seq.to_le_bytes());
    buf[16..24].copy_from_slice(&h.sent_ns.to_le_bytes());
}

/// None for a datagram that is not ours (too short, wrong magic).
pub fn read(buf: &[u8]) -> Option<Header> {
    if buf.len() < LEN || buf[0..4] != MAGIC.to_le_bytes() {
        return None;
    }
    let u64_at = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().unwrap());
    Some(Header { stream: u32::from_le_bytes(buf[4..8].try_into().unwrap()), seq: u64_at(8), sent_ns: u64_at(16) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_foreign() {
        let mut b = [0u8; 64];
        let h = Header { stream: 3, seq: 1 << 40, sent_ns: 123 };
        write(&mut b, &h);
        assert_eq!(read(&b), Some(h));
        assert_eq!(read(&b[..23]), None);
        b[0] ^= 1;
        assert_eq!(read(&b), None);
    }
}
