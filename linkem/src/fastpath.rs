//! In-kernel pass-through for a direction whose spec is empty.
//!
//! Copying a frame through userspace costs two copies of every byte and a
//! wake-up per batch; with nothing to impair, a kernel bridge does neither.
//! So while a direction's spec is empty (and its queue has drained), a
//! 16-instruction BPF program attached at the ingress interface (tcx ingress,
//! Linux >= 6.6) redirects every frame to the egress interface and counts it,
//! and a "drop everything" socket filter keeps the frames out of linkem's
//! socket. The attachment is a BPF link owned by the process: it goes away
//! with the file descriptor, also on kill -9, so nothing is left behind.
//! When the kernel refuses (older kernel, no BPF), linkem forwards in
//! userspace as before.
//!
//! While linkem forwards in userspace, a second, two-instruction program at
//! the same hook drops every frame once linkem's socket has its copy
//! (AF_PACKET taps run before tcx ingress in `__netif_receive_skb_core`), so
//! the frames no longer climb the bump namespace's IP stack only to be
//! dropped there as addressed to another host.

use std::io;
use std::os::unix::io::RawFd;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_INGRESS: u32 = 46;
const FN_MAP_LOOKUP_ELEM: i32 = 1;
const FN_REDIRECT: i32 = 23;

#[repr(C)]
#[derive(Clone, Copy)]
struct Insn {
    code: u8,
    regs: u8, // dst in the low nibble, src in the high one
    off: i16,
    imm: i32,
}

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: dst | (src << 4), off, imm }
}

// opcode parts (linux/bpf_common.h, linux/bpf.h)
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const JMP: u8 = 0x05;
const ALU64: u8 = 0x07;
const W: u8 = 0x00;
const DW: u8 = 0x18;
const IMM: u8 = 0x00;
const MEM: u8 = 0x60;
const ATOMIC: u8 = 0xc0;
const ADD: u8 = 0x00;
const MOV: u8 = 0xb0;
const K: u8 = 0x00;
const X: u8 = 0x08;
const JEQ: u8 = 0x10;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;

/// The program: count the frame (packets, bytes) in map slot 0, then
/// `return bpf_redirect(egress, 0)`.
fn program(map_fd: RawFd, egress_ifindex: i32) -> Vec<Insn> {
    vec![
        insn(ALU64 | MOV | X, 6, 1, 0, 0),          // r6 = skb
        insn(ST | MEM | W, 10, 0, -4, 0),           // key = 0 on the stack
        insn(LD | DW | IMM, 1, 1, 0, map_fd),       // r1 = map (pseudo map fd) ...
        insn(0, 0, 0, 0, 0),                        // ... second half of the 64-bit load
        insn(ALU64 | MOV | X, 2, 10, 0, 0),         // r2 = fp
        insn(ALU64 | ADD | K, 2, 0, 0, -4),         // r2 = &key
        insn(JMP | CALL, 0, 0, 0, FN_MAP_LOOKUP_ELEM),
        insn(JMP | JEQ | K, 0, 0, 4, 0),            // no slot: skip the counting
        insn(ALU64 | MOV | K, 1, 0, 0, 1),          // r1 = 1
        insn(STX | ATOMIC | DW, 0, 1, 0, ADD as i32), // packets += 1
        insn(LDX | MEM | W, 1, 6, 0, 0),            // r1 = skb->len (Ethernet frame)
        insn(STX | ATOMIC | DW, 0, 1, 8, ADD as i32), // bytes += len
        insn(ALU64 | MOV | K, 1, 0, 0, egress_ifindex),
        insn(ALU64 | MOV | K, 2, 0, 0, 0),
        insn(JMP | CALL, 0, 0, 0, FN_REDIRECT),
        insn(JMP | EXIT, 0, 0, 0, 0),
    ]
}

fn bpf(cmd: libc::c_long, attr: &mut [u64; 16]) -> io::Result<RawFd> {
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), std::mem::size_of_val(attr)) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as RawFd)
    }
}

fn lo_hi(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

fn close(fd: RawFd) {
    if fd >= 0 {
        unsafe { libc::close(fd) };
    }
}

/// `return TCX_DROP`: the stack guard.
fn guard_program() -> Vec<Insn> {
    vec![
        insn(ALU64 | MOV | K, 0, 0, 0, 2), // r0 = TCX_DROP (TC_ACT_SHOT)
        insn(JMP | EXIT, 0, 0, 0, 0),
    ]
}

fn load_program(insns: &[Insn]) -> io::Result<RawFd> {
    let license = b"GPL\0";
    let mut attr = [0u64; 16];
    attr[0] = lo_hi(BPF_PROG_TYPE_SCHED_CLS, insns.len() as u32);
    attr[1] = insns.as_ptr() as u64;
    attr[2] = license.as_ptr() as u64;
    attr[8] = lo_hi(0, BPF_TCX_INGRESS); // prog_ifindex, expected_attach_type
    bpf(BPF_PROG_LOAD, &mut attr)
}

/// Attach `prog_fd` at `ifindex`'s tcx ingress (after the programs already
/// there); the returned link fd detaches it when closed.
fn link_ingress(prog_fd: RawFd, ifindex: i32) -> io::Result<RawFd> {
    let mut attr = [0u64; 16];
    attr[0] = lo_hi(prog_fd as u32, ifindex as u32);
    attr[1] = lo_hi(BPF_TCX_INGRESS, 0);
    bpf(BPF_LINK_CREATE, &mut attr)
}

/// Frames and bytes a direction's program forwarded so far; `map_fd` < 0: none.
pub fn counters(map_fd: RawFd) -> (u64, u64) {
    if map_fd < 0 {
        return (0, 0);
    }
    let key = 0u32;
    let mut value = [0u64; 2];
    let mut attr = [0u64; 16];
    attr[0] = map_fd as u32 as u64;
    attr[1] = &key as *const u32 as u64;
    attr[2] = value.as_mut_ptr() as u64;
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) {
        Ok(_) => (value[0], value[1]),
        Err(_) => (0, 0),
    }
}

/// One direction's programs: while active, the redirect's attachment and
/// the socket filter; otherwise the stack guard's attachment.
pub struct FastPath {
    pub map_fd: RawFd,
    prog_fd: RawFd,
    link_fd: RawFd,
    guard_prog_fd: RawFd,
    guard_link_fd: RawFd,
    /// the kernel refused the guard once: forward without it, don't retry
    guard_refused: bool,
    ingress: i32,
    rx: RawFd,
}

impl FastPath {
    /// Load (not attach) the program redirecting `ingress` to `egress`;
    /// `rx` is linkem's socket on `ingress`.
    pub fn load(ingress: i32, egress: i32, rx: RawFd) -> io::Result<FastPath> {
        let mut attr = [0u64; 16];
        attr[0] = lo_hi(BPF_MAP_TYPE_ARRAY, 4); // key_size 4
        attr[1] = lo_hi(16, 1); // value_size 16 (packets, bytes), max_entries 1
        let map_fd = bpf(BPF_MAP_CREATE, &mut attr)?;
        let mut fp = FastPath {
            map_fd,
            prog_fd: -1,
            link_fd: -1,
            guard_prog_fd: -1,
            guard_link_fd: -1,
            guard_refused: false,
            ingress,
            rx,
        };
        fp.prog_fd = load_program(&program(map_fd, egress))?;
        fp.guard_prog_fd = load_program(&guard_program())?;
        Ok(fp)
    }

    pub fn active(&self) -> bool {
        self.link_fd >= 0
    }

    /// Userspace forwards and the stack guard is in place (or was refused).
    pub fn guarded(&self) -> bool {
        !self.active() && (self.guard_link_fd >= 0 || self.guard_refused)
    }

    /// Start forwarding in the kernel. The guard goes first (frames then
    /// reach the socket and the stack, as without linkem's programs), the
    /// redirect is attached before the socket filter: a frame arriving in
    /// between is forwarded twice rather than lost.
    pub fn attach(&mut self) -> io::Result<()> {
        if self.active() {
            return Ok(());
        }
        self.unguard();
        self.link_fd = link_ingress(self.prog_fd, self.ingress)?;
        if let Err(e) = drop_all(self.rx, true) {
            self.detach();
            return Err(e);
        }
        Ok(())
    }

    /// Back to userspace: the socket sees frames again before the redirect
    /// goes (again: a frame may pass twice, none is lost), and the guard,
    /// attached behind the redirect, takes over from it.
    pub fn detach(&mut self) {
        if self.active() {
            let _ = drop_all(self.rx, false);
        }
        if self.guard_link_fd < 0 && !self.guard_refused {
            match link_ingress(self.guard_prog_fd, self.ingress) {
                Ok(fd) => self.guard_link_fd = fd,
                Err(e) => {
                    eprintln!("linkem: cannot keep frames out of the namespace's stack ({e}); forwarding anyway");
                    self.guard_refused = true;
                }
            }
        }
        if self.active() {
            close(self.link_fd);
            self.link_fd = -1;
        }
    }

    fn unguard(&mut self) {
        close(self.guard_link_fd);
        self.guard_link_fd = -1;
    }
}

impl Drop for FastPath {
    fn drop(&mut self) {
        if self.active() {
            let _ = drop_all(self.rx, false);
            close(self.link_fd);
            self.link_fd = -1;
        }
        self.unguard();
        close(self.prog_fd);
        close(self.guard_prog_fd);
        // map_fd stays open: the control thread may read it until exit
    }
}

/// A classic BPF socket filter returning 0 (drop) for every frame, or none.
fn drop_all(fd: RawFd, on: bool) -> io::Result<()> {
    let mut code = [libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: 0 }]; // BPF_RET|BPF_K 0
    let prog = libc::sock_fprog { len: 1, filter: code.as_mut_ptr() };
    let unused: libc::c_int = 0;
    let (name, val, len) = if on {
        (libc::SO_ATTACH_FILTER, &prog as *const _ as *const libc::c_void, std::mem::size_of_val(&prog))
    } else {
        (libc::SO_DETACH_FILTER, &unused as *const _ as *const libc::c_void, std::mem::size_of_val(&unused))
    };
    if unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, name, val, len as u32) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_accepts_the_program() {
        // Loading (not attaching) touches no interface; ifindex 1 is lo.
        match FastPath::load(1, 1, -1) {
            Ok(f) => {
                assert!(f.prog_fd >= 0 && f.guard_prog_fd >= 0 && !f.active() && !f.guarded());
                assert_eq!(counters(f.map_fd), (0, 0));
            }
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                eprintln!("skipped: loading BPF programs needs CAP_BPF/CAP_NET_ADMIN ({e})")
            }
            Err(e) => panic!("the kernel refused the pass-through program: {e}"),
        }
    }
}
