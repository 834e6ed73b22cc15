//! Frames as they come from an AF_PACKET socket with PACKET_VNET_HDR:
//! a 10-byte struct virtio_net_hdr followed by the Ethernet frame.
//! Splitting of GSO super-frames (TCPv4/TCPv6/UDP-L4) into wire-sized
//! segments, and checksum completion for corruption.

pub const VNET_HDR_LEN: usize = 10;
pub const F_NEEDS_CSUM: u8 = 1;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
pub const GSO_TCPV6: u8 = 4;
pub const GSO_UDP_L4: u8 = 5;
pub const GSO_ECN: u8 = 0x80;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn read(b: &[u8]) -> VnetHdr {
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        }
    }
    pub fn write(&self, b: &mut [u8]) {
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
    }
}

/// One's-complement sum (not folded) over bytes, big-endian words.
pub fn csum_add(mut sum: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_be_bytes(c.try_into().unwrap());
        sum += v >> 32;
        sum += v & 0xffff_ffff;
    }
    let rem = chunks.remainder();
    let mut i = 0;
    while i + 1 < rem.len() {
        sum += u16::from_be_bytes([rem[i], rem[i + 1]]) as u64;
        i += 2;
    }
    if i < rem.len() {
        sum += (rem[i] as u64) << 8;
    }
    sum
}

pub fn csum_fold(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Where the L3/L4 headers are.
#[derive(Debug, Clone, Copy)]
struct Layout {
    l3: usize,
    ipv4: bool,
    l4: usize,
    proto: u8,
}

fn parse_layout(f: &[u8]) -> Option<Layout> {
    if f.len() < 14 {
        return None;
    }
    let mut et = u16::from_be_bytes([f[12], f[13]]);
    let mut l3 = 14;
    if et == 0x8100 || et == 0x88a8 {
        if f.len() < 18 {
            return None;
        }
        et = u16::from_be_bytes([f[16], f[17]]);
        l3 = 18;
    }
    match et {
        0x0800 => {
            if f.len() < l3 + 20 {
                return None;
            }
            let ihl = ((f[l3] & 0xf) as usize) * 4;
            if ihl < 20 || f.len() < l3 + ihl {
                return None;
            }
            Some(Layout { l3, ipv4: true, l4: l3 + ihl, proto: f[l3 + 9] })
        }
        0x86dd => {
            if f.len() < l3 + 40 {
                return None;
            }
            // Only the plain case (no extension headers) is handled.
            Some(Layout { l3, ipv4: false, l4: l3 + 40, proto: f[l3 + 6] })
        }
        _ => None,
    }
}

/// Pseudo-header sum for the given L4 length.
fn pseudo_sum(f: &[u8], lay: &Layout, l4len: usize) -> u64 {
    let mut s = 0u64;
    if lay.ipv4 {
        s = csum_add(s, &f[lay.l3 + 12..lay.l3 + 20]);
    } else {
        s = csum_add(s, &f[lay.l3 + 8..lay.l3 + 40]);
    }
    s += lay.proto as u64;
    s += l4len as u64;
    s
}

fn ipv4_fix(f: &mut [u8], l3: usize, total_len: usize, id: u16) {
    f[l3 + 2..l3 + 4].copy_from_slice(&(total_len as u16).to_be_bytes());
    f[l3 + 4..l3 + 6].copy_from_slice(&id.to_be_bytes());
    f[l3 + 10] = 0;
    f[l3 + 11] = 0;
    let ihl = ((f[l3] & 0xf) as usize) * 4;
    let c = !csum_fold(csum_add(0, &f[l3..l3 + ihl]));
    f[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
}

/// Split a GSO super-frame (`buf` = vnet header + frame) into wire-sized
/// segments, each with its own vnet header asking the kernel to finish the
/// L4 checksum (CHECKSUM_PARTIAL, as the original frame had).
/// Returns None if the frame is not GSO or of a kind linkem can't split
/// (the caller then forwards it whole).
pub fn segment(buf: &[u8], mut alloc: impl FnMut(usize) -> Vec<u8>) -> Option<Vec<Vec<u8>>> {
    if buf.len() < VNET_HDR_LEN {
        return None;
    }
    let vh = VnetHdr::read(buf);
    let gt = vh.gso_type & !GSO_ECN;
    if gt == GSO_NONE || vh.gso_size == 0 {
        return None;
    }
    let f = &buf[VNET_HDR_LEN..];
    let lay = parse_layout(f)?;
    let mss = vh.gso_size as usize;
    let (hl, is_tcp) = match (gt, lay.proto) {
        (GSO_TCPV4, 6) | (GSO_TCPV6, 6) => {
            if f.len() < lay.l4 + 20 {
                return None;
            }
            ((f[lay.l4 + 12] >> 4) as usize * 4, true)
        }
        (GSO_UDP_L4, 17) => (8, false),
        _ => return None,
    };
    // A TCP header is at least 20 bytes (data offset 5): with 2-4 the checksum and flags written
    // below would land past a short last segment's end.
    let hdr_end = lay.l4 + hl;
    if f.len() <= hdr_end || hl < if is_tcp { 20 } else { 8 } {
        return None;
    }
    let payload = &f[hdr_end..];
    let nseg = (payload.len() + mss - 1) / mss;
    let mut out = Vec::with_capacity(nseg);
    let (seq0, id0) = if is_tcp {
        (
            u32::from_be_bytes(f[lay.l4 + 4..lay.l4 + 8].try_into().unwrap()),
            if lay.ipv4 { u16::from_be_bytes([f[lay.l3 + 4], f[lay.l3 + 5]]) } else { 0 },
        )
    } else {
        (0, if lay.ipv4 { u16::from_be_bytes([f[lay.l3 + 4], f[lay.l3 + 5]]) } else { 0 })
    };
    let tcp_flags0 = if is_tcp { f[lay.l4 + 13] } else { 0 };
    for (i, chunk) in payload.chunks(mss).enumerate() {
        let flen = hdr_end + chunk.len();
        let mut b = alloc(VNET_HDR_LEN + flen);
        b.clear();
        b.resize(VNET_HDR_LEN, 0);
        b.extend_from_slice(&f[..hdr_end]);
        b.extend_from_slice(chunk);
        let s = &mut b[VNET_HDR_LEN..];
        let l4len = flen - lay.l4;
        if lay.ipv4 {
            ipv4_fix(s, lay.l3, flen - lay.l3, id0.wrapping_add(i as u16));
        } else {
            s[lay.l3 + 4..lay.l3 + 6].copy_from_slice(&((flen - lay.l3 - 40) as u16).to_be_bytes());
        }
        let csum_off;
        if is_tcp {
            let seq = seq0.wrapping_add((i * mss) as u32);
            s[lay.l4 + 4..lay.l4 + 8].copy_from_slice(&seq.to_be_bytes());
            let mut fl = tcp_flags0;
            if i + 1 != nseg {
                fl &= !(0x01 | 0x08); // FIN, PSH only on the last segment
            }
            if i != 0 {
                fl &= !0x80; // CWR only on the first
            }
            s[lay.l4 + 13] = fl;
            csum_off = 16;
        } else {
            s[lay.l4 + 4..lay.l4 + 6].copy_from_slice(&(l4len as u16).to_be_bytes());
            csum_off = 6;
        }
        // CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum.
        let ps = csum_fold(pseudo_sum(s, &lay, l4len));
        s[lay.l4 + csum_off..lay.l4 + csum_off + 2].copy_from_slice(&ps.to_be_bytes());
        VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_NONE,
            hdr_len: 0,
            gso_size: 0,
            csum_start: lay.l4 as u16,
            csum_offset: csum_off as u16,
        }
        .write(&mut b[..VNET_HDR_LEN]);
        out.push(b);
    }
    Some(out)
}

/// Finish a CHECKSUM_PARTIAL frame in software (skb_checksum_help), so a
/// later bit flip is detectable by the receiver.
pub fn complete_checksum(buf: &mut [u8]) {
    if buf.len() < VNET_HDR_LEN {
        return;
    }
    let vh = VnetHdr::read(buf);
    if vh.flags & F_NEEDS_CSUM == 0 {
        return;
    }
    let f = &mut buf[VNET_HDR_LEN..];
    let start = vh.csum_start as usize;
    let off = start + vh.csum_offset as usize;
    if off + 2 > f.len() || start > f.len() {
        return;
    }
    // The field already holds the pseudo-header sum; sum everything from
    // csum_start and store the complement.
    let mut c = !csum_fold(csum_add(0, &f[start..]));
    if c == 0 && vh.csum_offset == 6 {
        c = 0xffff; // UDP: 0 means "no checksum"
    }
    f[off..off + 2].copy_from_slice(&c.to_be_bytes());
    VnetHdr { flags: 0, ..vh }.write(&mut buf[..VNET_HDR_LEN]);
}

/// Wire size of the frame or of the segments it will become (what netem's
/// qdisc_pkt_len() counts for a GSO packet).
pub fn wire_len(buf: &[u8]) -> usize {
    let flen = buf.len().saturating_sub(VNET_HDR_LEN);
    if buf.len() < VNET_HDR_LEN {
        return flen;
    }
    let vh = VnetHdr::read(buf);
    if vh.gso_type & !GSO_ECN == GSO_NONE || vh.gso_size == 0 {
        return flen;
    }
    let f = &buf[VNET_HDR_LEN..];
    let hdr = match parse_layout(f) {
        Some(l) if l.proto == 6 && f.len() > l.l4 + 13 => l.l4 + (f[l.l4 + 12] >> 4) as usize * 4,
        Some(l) => l.l4 + 8,
        None => return flen,
    };
    let pay = flen.saturating_sub(hdr);
    let gso = vh.gso_size as usize;
    let segs = ((pay + gso - 1) / gso).max(1);
    pay + segs * hdr
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp4_frame(payload: usize, flags: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 32 + payload];
        f[12] = 0x08;
        f[13] = 0x00;
        let ip = 14;
        f[ip] = 0x45;
        f[ip + 9] = 6;
        f[ip + 12..ip + 16].copy_from_slice(&[10, 0, 0, 1]);
        f[ip + 16..ip + 20].copy_from_slice(&[10, 0, 0, 2]);
        f[ip + 4..ip + 6].copy_from_slice(&100u16.to_be_bytes());
        let t = 34;
        f[t..t + 2].copy_from_slice(&1234u16.to_be_bytes());
        f[t + 2..t + 4].copy_from_slice(&80u16.to_be_bytes());
        f[t + 4..t + 8].copy_from_slice(&1000u32.to_be_bytes());
        f[t + 12] = 8 << 4;
        f[t + 13] = flags;
        for (i, b) in f[66..].iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        f
    }

    fn verify_tcp4(f: &[u8]) -> bool {
        let ip = 14;
        let ihl = 20;
        if csum_fold(csum_add(0, &f[ip..ip + ihl])) != 0xffff {
            return false;
        }
        let l4len = f.len() - 34;
        let mut s = csum_add(0, &f[ip + 12..ip + 20]);
        s += 6 + l4len as u64;
        s = csum_add(s, &f[34..]);
        csum_fold(s) == 0xffff
    }

    #[test]
    fn segments_tcp4() {
        let f = tcp4_frame(4000, 0x18 | 0x80); // PSH|ACK|CWR
        let mut buf = vec![0u8; VNET_HDR_LEN];
        VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 66,
            gso_size: 1448,
            csum_start: 34,
            csum_offset: 16,
        }
        .write(&mut buf);
        buf.extend_from_slice(&f);
        assert_eq!(wire_len(&buf), 4000 + 3 * 66);
        let segs = segment(&buf, Vec::with_capacity).unwrap();
        assert_eq!(segs.len(), 3);
        let mut payload = vec![];
        for (i, s) in segs.iter().enumerate() {
            let mut s = s.clone();
            complete_checksum(&mut s);
            let fr = &s[VNET_HDR_LEN..];
            assert!(verify_tcp4(fr), "segment {i} checksum");
            let seq = u32::from_be_bytes(fr[38..42].try_into().unwrap());
            assert_eq!(seq, 1000 + 1448 * i as u32);
            let tot = u16::from_be_bytes([fr[16], fr[17]]) as usize;
            assert_eq!(tot, fr.len() - 14);
            let flags = fr[47];
            assert_eq!(flags & 0x08 != 0, i == 2, "PSH only last");
            assert_eq!(flags & 0x80 != 0, i == 0, "CWR only first");
            assert_eq!(u16::from_be_bytes([fr[18], fr[19]]), 100 + i as u16);
            payload.extend_from_slice(&fr[66..]);
        }
        assert_eq!(payload, f[66..].to_vec());
    }

    #[test]
    fn non_gso_is_none() {
        let mut buf = vec![0u8; VNET_HDR_LEN];
        buf.extend_from_slice(&tcp4_frame(100, 0x10));
        assert!(segment(&buf, Vec::with_capacity).is_none());
        assert_eq!(wire_len(&buf), 166);
    }

    #[test]
    fn checksum_of_known_header() {
        // RFC 1071 example-ish: IPv4 header from Wikipedia
        let h = [
            0x45u8, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(!csum_fold(csum_add(0, &h)), 0xb861);
    }

    fn gso_buf(frame: &[u8], gso_type: u8, gso_size: u16) -> Vec<u8> {
        let mut buf = vec![0u8; VNET_HDR_LEN];
        VnetHdr { flags: F_NEEDS_CSUM, gso_type, hdr_len: 66, gso_size, csum_start: 34, csum_offset: 16 }.write(&mut buf);
        buf.extend_from_slice(frame);
        buf
    }

    #[test]
    fn tcp_data_offset_below_five_is_not_split() {
        for doff in 0..5u8 {
            let mut f = tcp4_frame(1449, 0x10); // one MSS and one byte: a 1-byte last segment
            f[34 + 12] = doff << 4;
            let buf = gso_buf(&f, GSO_TCPV4, 1448);
            assert!(segment(&buf, Vec::with_capacity).is_none(), "data offset {doff}");
            let _ = wire_len(&buf);
        }
    }

    /// xorshift64*: reproducible random frames without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// A GSO frame as the kernel would hand it over, then broken at random: header bytes
    /// overwritten (data offset, IHL, ethertype, protocol, vnet fields), the frame cut short.
    fn malformed(rng: &mut Rng) -> Vec<u8> {
        let mut f = tcp4_frame(rng.below(5000), (rng.next() & 0xff) as u8);
        if rng.below(4) == 0 {
            f[23] = 17; // UDP
        }
        let types = [GSO_TCPV4, GSO_TCPV6, GSO_UDP_L4, GSO_NONE, GSO_TCPV4 | GSO_ECN, (rng.next() & 0xff) as u8];
        let mut buf = gso_buf(&f, types[rng.below(types.len())], rng.below(3000) as u16);
        let hot = [VNET_HDR_LEN + 12, VNET_HDR_LEN + 13, VNET_HDR_LEN + 14, VNET_HDR_LEN + 23, VNET_HDR_LEN + 46];
        for _ in 0..rng.below(6) {
            let at = if rng.below(2) == 0 { hot[rng.below(hot.len())] } else { rng.below(buf.len()) };
            if at < buf.len() {
                buf[at] = (rng.next() & 0xff) as u8;
            }
        }
        if rng.below(3) == 0 {
            buf.truncate(rng.below(buf.len() + 1));
        }
        buf
    }

    #[test]
    fn malformed_frames_never_panic_and_segments_stay_inside_their_frame() {
        let mut rng = Rng(0x853c_49e6_748f_ea9b);
        let mut split = 0;
        for _ in 0..100_000 {
            let buf = malformed(&mut rng);
            let _ = wire_len(&buf);
            let mut whole = buf.clone();
            complete_checksum(&mut whole);
            if let Some(segs) = segment(&buf, Vec::with_capacity) {
                split += 1;
                let mss = VnetHdr::read(&buf).gso_size as usize;
                for mut s in segs {
                    assert!(s.len() > VNET_HDR_LEN && s.len() <= buf.len(), "a segment larger than its frame");
                    let vh = VnetHdr::read(&s);
                    assert!(vh.csum_start as usize + vh.csum_offset as usize + 2 <= s.len() - VNET_HDR_LEN);
                    assert!(s.len() - VNET_HDR_LEN - (vh.csum_start as usize) <= mss + 60, "payload over the MSS");
                    complete_checksum(&mut s);
                }
            }
        }
        assert!(split > 1000, "only {split} frames were split: the generator lost its valid cases");
    }
}
