//! AF_PACKET sockets with PACKET_VNET_HDR, batched with recvmmsg/sendmmsg.

use crate::gso::VNET_HDR_LEN;
use std::io;
use std::os::unix::io::RawFd;

pub const RX_BUF: usize = 65536 + 256 + VNET_HDR_LEN;
pub const BATCH: usize = 64;

const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setopt(fd: RawFd, level: libc::c_int, name: libc::c_int, val: libc::c_int) -> io::Result<()> {
    unsafe {
        cvt(libc::setsockopt(
            fd,
            level,
            name,
            &val as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as u32,
        ))?;
    }
    Ok(())
}

pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = std::ffi::CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::Other, "bad interface name"))?;
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(idx as i32)
}

pub struct PacketSocket {
    pub fd: RawFd,
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        unsafe {
            libc::close(self.fd);
        }
    }
}

impl PacketSocket {
    /// A raw packet socket bound to `ifindex`, receiving every frame that
    /// arrives on it (promiscuous), never the ones sent from this host, with
    /// virtio-net headers so GSO super-frames keep their metadata.
    pub fn open(ifindex: i32) -> io::Result<PacketSocket> {
        let fd = unsafe { cvt(libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0))? };
        let s = PacketSocket { fd };
        setopt(fd, libc::SOL_PACKET, PACKET_VNET_HDR, 1)?;
        setopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
        // the kernel's arrival time of every frame (a frame read late keeps its delay)
        setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        // Big buffers absorb bursts of 64 KiB GSO frames; FORCE needs
        // CAP_NET_ADMIN, fall back silently.
        for (force, plain, v) in [
            (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, 32 << 20),
            (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, 8 << 20),
        ] {
            if setopt(fd, libc::SOL_SOCKET, force, v).is_err() {
                let _ = setopt(fd, libc::SOL_SOCKET, plain, v);
            }
        }
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        unsafe {
            cvt(libc::bind(
                fd,
                &sll as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            ))?;
        }
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = ifindex;
        mr.mr_type = libc::PACKET_MR_PROMISC as u16;
        unsafe {
            cvt(libc::setsockopt(
                fd,
                libc::SOL_PACKET,
                libc::PACKET_ADD_MEMBERSHIP,
                &mr as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::packet_mreq>() as u32,
            ))?;
        }
        Ok(s)
    }
}

/// Receive up to `bufs.len()` frames without blocking. `lens[i]` gets the
/// byte count of bufs[i]; truncated frames get length usize::MAX.
pub fn recv_batch(fd: RawFd, bufs: &mut [Vec<u8>], lens: &mut [usize], arrived: &mut [u64]) -> io::Result<usize> {
    let n = bufs.len().min(BATCH);
    let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
    let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
    let mut ctl: [[u64; 8]; BATCH] = [[0; 8]; BATCH];
    for i in 0..n {
        iov[i].iov_base = bufs[i].as_mut_ptr() as *mut libc::c_void;
        iov[i].iov_len = bufs[i].capacity();
        hdrs[i].msg_hdr.msg_iov = &mut iov[i];
        hdrs[i].msg_hdr.msg_iovlen = 1;
        hdrs[i].msg_hdr.msg_control = ctl[i].as_mut_ptr() as *mut libc::c_void;
        hdrs[i].msg_hdr.msg_controllen = std::mem::size_of::<[u64; 8]>();
    }
    let r = unsafe {
        libc::recvmmsg(fd, hdrs.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT, std::ptr::null_mut())
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::EINTR) {
            return Ok(0);
        }
        return Err(e);
    }
    let mono = now_ns();
    let real = clock_ns(libc::CLOCK_REALTIME);
    for i in 0..r as usize {
        arrived[i] = mono;
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&hdrs[i].msg_hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    let t = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
                    // realtime -> monotonic; never later than now
                    arrived[i] = mono.saturating_sub(real.saturating_sub(t));
                }
                c = libc::CMSG_NXTHDR(&hdrs[i].msg_hdr, c);
            }
        }
        lens[i] = if hdrs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
            usize::MAX
        } else {
            hdrs[i].msg_len as usize
        };
    }
    Ok(r as usize)
}

/// Send all frames; returns (sent, failed).
pub fn send_batch(fd: RawFd, bufs: &[Vec<u8>]) -> (u64, u64) {
    let mut sent = 0u64;
    let mut failed = 0u64;
    let mut start = 0;
    while start < bufs.len() {
        let n = (bufs.len() - start).min(BATCH);
        let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        for i in 0..n {
            let b = &bufs[start + i];
            iov[i].iov_base = b.as_ptr() as *mut libc::c_void;
            iov[i].iov_len = b.len();
            hdrs[i].msg_hdr.msg_iov = &mut iov[i];
            hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        let r = unsafe { libc::sendmmsg(fd, hdrs.as_mut_ptr(), n as u32, 0) };
        if r > 0 {
            sent += r as u64;
            start += r as usize;
        } else {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            // drop the frame that failed (e.g. too big for the MTU)
            failed += 1;
            start += 1;
        }
    }
    (sent, failed)
}

pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe {
        libc::clock_gettime(clock, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wait until `fd` or `wake` is readable or `timeout_ns` passed (ns precision).
pub fn wait_readable(fd: RawFd, wake: RawFd, timeout_ns: u64) {
    let mut pfd = [
        libc::pollfd { fd, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 },
    ];
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    unsafe {
        libc::ppoll(pfd.as_mut_ptr(), 2, &ts, std::ptr::null());
    }
}

/// How late this thread wakes from a short timed sleep, here and now: the upper quartile of
/// `samples` sleeps of `sleep_ns` (ppoll on nothing, the way a worker sleeps until a departure),
/// each less the time asked for. Where the timer or the scheduler wakes threads late (a VM's
/// timer, a CPU shared with the endpoints), a departure due sooner than this is better waited
/// for awake.
pub fn wake_latency_ns(samples: usize, sleep_ns: u64) -> u64 {
    let mut late: Vec<u64> = (0..samples.max(1))
        .map(|_| {
            let start = now_ns();
            wait_readable(-1, -1, sleep_ns);
            now_ns().saturating_sub(start + sleep_ns)
        })
        .collect();
    late.sort_unstable();
    late[late.len() * 3 / 4]
}

/// The highest-numbered CPU this process may run on (None when the kernel will not say).
pub fn last_allowed_cpu() -> Option<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return None;
    }
    (0..libc::CPU_SETSIZE as usize).rev().find(|&c| unsafe { libc::CPU_ISSET(c, &set) })
}

pub fn pin_cpu(cpu: usize) -> io::Result<()> {
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        cvt(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set))?;
    }
    Ok(())
}
