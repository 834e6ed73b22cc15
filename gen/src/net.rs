//! Thin wrappers over the socket calls std does not offer: socket options, sendmmsg,
//! recvmmsg with control messages (UDP GRO segment size, kernel receive timestamps), clocks.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const SOL_UDP: libc::c_int = 17;
pub const UDP_SEGMENT: libc::c_int = 103;
pub const UDP_GRO: libc::c_int = 104;

pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn sleep_until_monotonic(ns: u64) {
    let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ };
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// Sleeps of microseconds must not be stretched by the default 50 us timer slack.
pub fn tight_timer_slack() {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

pub fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(fd, level, name, &value as *const _ as *const libc::c_void, std::mem::size_of::<libc::c_int>() as u32)
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as _;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as _;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) }
}

/// Raise the soft limit of open files to `needed` (at most the hard limit): a client with a
/// socket per stream may need more than the usual 1024.
pub fn allow_files(needed: usize) -> Result<(), String> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }).map_err(|e| format!("getrlimit: {e}"))?;
    if limit.rlim_cur as usize >= needed {
        return Ok(());
    }
    if (limit.rlim_max as usize) < needed {
        return Err(format!("{needed} open files needed, the hard limit is {}", limit.rlim_max));
    }
    limit.rlim_cur = needed as libc::rlim_t;
    check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }).map(|_| ()).map_err(|e| format!("setrlimit: {e}"))
}

/// A UDP socket connected to `target` (the sender's).
pub fn connected_udp(target: SocketAddr) -> io::Result<OwnedFd> {
    let family = if target.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    let fd = unsafe { OwnedFd::from_raw_fd(check(libc::socket(family, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0))?) };
    let _ = set_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, 4 << 20);
    let (ss, len) = sockaddr(&target);
    check(unsafe { libc::connect(fd.as_raw_fd(), &ss as *const _ as *const libc::sockaddr, len) })?;
    Ok(fd)
}

/// One of N receive sockets sharing `port` (SO_REUSEPORT spreads the senders' flows over
/// them), dual-stack so IPv4 and IPv6 both arrive; 50 ms receive timeout so a thread
/// notices it should stop.
/// A dual-stack UDP socket on `port`, bound to `bind` only when given (an IPv4 address as its
/// IPv4-mapped form, which the dual-stack socket receives as IPv4).
pub fn receive_socket(bind: Option<IpAddr>, port: u16) -> io::Result<OwnedFd> {
    let fd = unsafe { OwnedFd::from_raw_fd(check(libc::socket(libc::AF_INET6, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0))?) };
    let raw = fd.as_raw_fd();
    set_int(raw, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 0)?;
    set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
    // Root may exceed rmem_max; others get what the sysctl allows.
    if set_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 8 << 20).is_err() {
        let _ = set_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, 8 << 20);
    }
    let tv = libc::timeval { tv_sec: 0, tv_usec: 50_000 };
    check(unsafe {
        libc::setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv as *const _ as *const libc::c_void, std::mem::size_of::<libc::timeval>() as u32)
    })?;
    let local = match bind {
        Some(IpAddr::V4(a)) => IpAddr::V6(a.to_ipv6_mapped()),
        Some(a) => a,
        None => IpAddr::from([0u16; 8]),
    };
    let (ss, len) = sockaddr(&SocketAddr::new(local, port));
    check(unsafe { libc::bind(raw, &ss as *const _ as *const libc::sockaddr, len) })?;
    Ok(fd)
}

pub fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

/// Batches of outgoing messages, each one buffer (one datagram, or several UDP GSO segments).
pub struct SendBatch {
    pub bufs: Vec<Vec<u8>>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl SendBatch {
    pub fn new(messages: usize, bytes_each: usize) -> Self {
        let bufs: Vec<Vec<u8>> = (0..messages).map(|_| vec![0u8; bytes_each]).collect();
        let iovs = vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; messages];
        let hdrs = vec![unsafe { std::mem::zeroed::<libc::mmsghdr>() }; messages];
        SendBatch { bufs, iovs, hdrs }
    }

    /// Send the first `lens.len()` buffers with the given lengths; messages sent, or the error.
    pub fn send(&mut self, fd: RawFd, lens: &[usize]) -> io::Result<usize> {
        for (i, &len) in lens.iter().enumerate() {
            self.iovs[i] = libc::iovec { iov_base: self.bufs[i].as_mut_ptr() as *mut libc::c_void, iov_len: len };
            self.hdrs[i].msg_hdr.msg_iov = &mut self.iovs[i];
            self.hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        let r = unsafe { libc::sendmmsg(fd, self.hdrs.as_mut_ptr(), lens.len() as u32, 0) };
        check(r).map(|n| n as usize)
    }
}

pub const RECV_BUF: usize = 65536;
const CTRL: usize = 128;

/// One received message: its bytes, the GRO segment size if coalesced, the kernel's
/// receive time (CLOCK_REALTIME ns) if it stamped one.
pub struct Received<'a> {
    pub data: &'a [u8],
    pub segment: Option<usize>,
    pub kernel_ns: Option<u64>,
}

pub struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    ctrl: Vec<[u8; CTRL]>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl RecvBatch {
    pub fn new(messages: usize) -> Self {
        RecvBatch {
            bufs: (0..messages).map(|_| vec![0u8; RECV_BUF]).collect(),
            ctrl: vec![[0u8; CTRL]; messages],
            iovs: vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; messages],
            hdrs: vec![unsafe { std::mem::zeroed::<libc::mmsghdr>() }; messages],
        }
    }

    /// Blocks until at least one message (or the socket's receive timeout: Ok(0)).
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        for i in 0..self.bufs.len() {
            self.iovs[i] = libc::iovec { iov_base: self.bufs[i].as_mut_ptr() as *mut libc::c_void, iov_len: RECV_BUF };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.ctrl[i].as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = CTRL as _;
            h.msg_name = std::ptr::null_mut();
            h.msg_namelen = 0;
            h.msg_flags = 0;
        }
        let r = unsafe { libc::recvmmsg(fd, self.hdrs.as_mut_ptr(), self.bufs.len() as u32, libc::MSG_WAITFORONE, std::ptr::null_mut()) };
        match check(r) {
            Ok(n) => Ok(n as usize),
            Err(e) if matches!(errno_of(&e), libc::EAGAIN | libc::EINTR) => Ok(0),
            Err(e) => Err(e),
        }
    }

    pub fn get(&self, i: usize) -> Received<'_> {
        let h = &self.hdrs[i];
        let mut out = Received { data: &self.bufs[i][..h.msg_len as usize], segment: None, kernel_ns: None };
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
            while !c.is_null() {
                let (level, kind) = ((*c).cmsg_level, (*c).cmsg_type);
                let data = libc::CMSG_DATA(c);
                if level == SOL_UDP && kind == UDP_GRO {
                    let seg = std::ptr::read_unaligned(data as *const libc::c_int);
                    if seg > 0 {
                        out.segment = Some(seg as usize);
                    }
                } else if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(data as *const libc::timespec);
                    out.kernel_ns = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
            }
        }
        out
    }
}
