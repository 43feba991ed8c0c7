//! The exporter's HTTP side against clients that would starve it, each
//! against the real exporter process: headers sent a byte at a time, a
//! keep-alive connection left idle, a flood of large unfinished headers
//! (its memory read from /proc), a flood from one address while another
//! address keeps its connections and scrapes, and more idle connections
//! than a 256-descriptor limit allows while scrapes and the ZooKeeper
//! session go on. Clients on other addresses bind 127.0.0.x before they
//! connect, as another host would arrive.

use crate::monitoring::{WAIT, exporter, hold};
use crate::support::{self, Running, TestEnv, wait_for, wait_until};

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long the exporter gives a connection to send a request's headers.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The connections the exporter serves from one address.
const PER_ADDRESS: usize = 16;

/// A request's start, never finished.
const UNFINISHED: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: zklock\r\n";

/// A TCP connection from 127.0.0.`source` to `address`'s port on
/// 127.0.0.1.
fn connect_from(source: u8, address: &str) -> TcpStream {
    try_connect_from(source, address)
        .unwrap_or_else(|err| panic!("connect from 127.0.0.{source} to {address}: {err}"))
}

/// [`connect_from`], or why it failed.
fn try_connect_from(source: u8, address: &str) -> std::io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    let port: u16 = address
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .expect("a port");
    let ipv4 = |last: u8, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_be_bytes([127, 0, 0, last]).to_be(),
        },
        sin_zero: [0; 8],
    };
    let size = size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: socket takes plain integers and returns a descriptor that
    // nothing else owns, which the stream takes at once.
    let stream = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        TcpStream::from_raw_fd(fd)
    };
    let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
    for bind in [true, false] {
        let to = if bind { ipv4(source, 0) } else { ipv4(1, port) };
        let to = &to as *const libc::sockaddr_in as *const libc::sockaddr;
        // SAFETY: `to` points at a sockaddr_in of `size` bytes that lives
        // across the call; the descriptor is the stream's.
        let done = unsafe {
            if bind {
                libc::bind(fd, to, size)
            } else {
                libc::connect(fd, to, size)
            }
        };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(stream)
}

/// True once the exporter has closed `stream` (what it sent before is
/// read and dropped); false while it is open.
fn closed(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).expect("nonblocking");
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(err) if err.kind() == ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// `GET /metrics` from 127.0.0.`source` on a connection of its own: the
/// body, once the whole answer came within `within`; `None` otherwise.
fn scrape_from(source: u8, address: &str, within: Duration) -> Option<String> {
    let mut stream = try_connect_from(source, address).ok()?;
    stream.set_read_timeout(Some(within)).ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: zklock\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200 ").then(|| body.to_owned())
}

/// The value of the series `name` (without labels) in a text exposition.
fn value_of(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
}

/// A field of /proc/PID/status, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

/// How long after `since` the exporter closed `stream`, which is read
/// (and, when `trickle` is given, written a byte of it every half second)
/// until it is closed or 30 seconds have passed.
fn closed_after(stream: &mut TcpStream, since: Instant, trickle: Option<&[u8]>) -> Duration {
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .expect("a read timeout");
    let mut buffer = [0; 4096];
    let mut trickled = trickle.unwrap_or_default().iter().cycle();
    while since.elapsed() < Duration::from_secs(30) {
        match stream.read(&mut buffer) {
            Ok(0) => return since.elapsed(),
            Ok(_) => {}
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if let Some(byte) = trickled.next()
                    && stream.write_all(&[*byte]).is_err()
                {
                    return since.elapsed();
                }
            }
            Err(_) => return since.elapsed(),
        }
    }
    panic!("the exporter kept the connection open for 30 s");
}

#[test]
fn headers_sent_a_byte_at_a_time_are_cut_off_after_the_timeout() {
    let env = TestEnv::new();
    let (_running, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let mut slow = connect_from(1, &address);
    let since = Instant::now();
    slow.write_all(UNFINISHED).expect("the request's start");
    // A header line that never ends, a byte every half second.
    let took = closed_after(&mut slow, since, Some(b"X-Slow: zzzzzzzzzzzzzzzzzzzz"));
    assert!(
        took >= REQUEST_TIMEOUT - Duration::from_millis(500) && took < REQUEST_TIMEOUT * 2,
        "closed after {took:?}"
    );
}

#[test]
fn a_keep_alive_connection_left_idle_is_closed_after_the_timeout() {
    let env = TestEnv::new();
    let (_running, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let mut idle = connect_from(1, &address);
    idle.write_all(b"GET / HTTP/1.1\r\nHost: zklock\r\n\r\n")
        .expect("a request");
    // The answer to a request kept alive: the head, then the body it
    // announces.
    idle.set_read_timeout(Some(WAIT)).expect("a read timeout");
    let mut answer = Vec::new();
    let mut buffer = [0; 4096];
    let answered = wait_for(WAIT, "the whole answer", || {
        let read = idle.read(&mut buffer).ok().filter(|n| *n > 0);
        answer.extend_from_slice(&buffer[..read.unwrap_or(0)]);
        let text = String::from_utf8_lossy(&answer);
        let (head, body) = text.split_once("\r\n\r\n")?;
        let length: usize = head.lines().find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")?
                .parse()
                .ok()
        })?;
        (body.len() == length).then(Instant::now)
    });
    let took = closed_after(&mut idle, answered, None);
    assert!(
        took >= REQUEST_TIMEOUT - Duration::from_millis(500) && took < REQUEST_TIMEOUT * 2,
        "closed after {took:?}"
    );
}

#[test]
fn a_flood_of_large_unfinished_headers_leaves_the_exporter_small() {
    let env = TestEnv::new();
    let (running, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let before = status_kib(running.pid(), "VmHWM");
    // 200 connections, each sending up to 390 KB of one header that never
    // ends, from as many addresses as the exporter serves in all.
    let mut flood: Vec<(TcpStream, usize)> = (0..200)
        .map(|i| {
            let mut stream = connect_from(2 + (i / PER_ADDRESS) as u8, &address);
            stream.write_all(UNFINISHED).expect("the request's start");
            stream.write_all(b"X-Flood: ").expect("a header's start");
            stream.set_nonblocking(true).expect("nonblocking");
            (stream, 0)
        })
        .collect();
    let chunk = vec![b'z'; 16 * 1024];
    wait_until(WAIT, "each connection sent 390 KB or was closed", || {
        let mut done = true;
        for (stream, sent) in flood.iter_mut().filter(|(_, sent)| *sent < 390_000) {
            match stream.write(&chunk) {
                Ok(n) => *sent += n,
                Err(err) if err.kind() == ErrorKind::WouldBlock => {}
                Err(_) => *sent = usize::MAX,
            }
            done &= *sent >= 390_000;
        }
        done
    });
    // Its peak once it has dealt with every connection, at its own pace.
    wait_until(WAIT, "the exporter closed every connection", || {
        flood.iter_mut().all(|(stream, _)| closed(stream))
    });
    let grew_kib = status_kib(running.pid(), "VmHWM").saturating_sub(before);
    assert!(
        grew_kib < 16 * 1024,
        "the flood grew the exporter's peak memory by {grew_kib} KiB"
    );
    drop(flood);
    assert!(scrape_from(1, &address, WAIT).is_some(), "a scrape failed");
}

#[test]
fn a_flood_from_one_address_closes_its_own_oldest_connections_only() {
    let env = TestEnv::new();
    let (_running, address) = exporter(env.zklock(Vec::<&str>::new()), &[]);
    let unfinished = |source: u8| {
        let mut stream = connect_from(source, &address);
        stream.write_all(UNFINISHED).expect("the request's start");
        stream
    };
    // Another client's unfinished connections, then 300 from one address:
    // more than the exporter serves in all.
    let mut others: Vec<TcpStream> = (0..10).map(|_| unfinished(2)).collect();
    let mut flood: Vec<TcpStream> = (0..300).map(|_| unfinished(1)).collect();
    let open = |streams: &mut [TcpStream]| {
        let states = streams.iter_mut().map(|s| !closed(s));
        states.collect::<Vec<bool>>()
    };
    let newest_open = [vec![false; 300 - PER_ADDRESS], vec![true; PER_ADDRESS]].concat();
    wait_until(
        Duration::from_secs(3),
        "only the flood's newest 16 stay",
        || open(&mut flood) == newest_open,
    );
    assert_eq!(open(&mut others), vec![true; 10], "the other client's");
    for source in [2, 1] {
        assert!(
            scrape_from(source, &address, Duration::from_secs(2)).is_some(),
            "a scrape from 127.0.0.{source} failed"
        );
    }
}

/// The descriptors `pid` has open.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("its descriptors")
        .count()
}

#[test]
fn with_256_descriptors_300_idle_connections_leave_scrapes_and_zookeeper_working() {
    let env = TestEnv::new();
    let (mut holder, _) = hold(&env, "fd");
    let address = format!("127.0.0.1:{}", support::free_ports(1)[0]);
    let zklock = env.zklock(["exporter", "--listen", &address, "--survey-interval", "1s"]);
    let command = zklock.through(&["sh", "-c", "ulimit -n 256 && exec \"$@\"", "sh"]);
    let running = Running::start(command, zklock.cmdline(), None);
    let pid = running.pid();
    wait_until(WAIT, "the exporter serves the hold", || {
        scrape_from(1, &address, WAIT)
            .is_some_and(|text| text.contains("zklock_lock_holders{lock=\"/locks/fd\""))
    });
    // 300 connections that send nothing, from 20 addresses (under the cap
    // of one address), opened again as the exporter closes them, for
    // longer than it gives one: scrapes go on meanwhile.
    let from = |i: usize| 2 + (i % 20) as u8;
    let mut idle: Vec<TcpStream> = (0..300).map(|i| connect_from(from(i), &address)).collect();
    let started = Instant::now();
    let mut scrapes = 0;
    while started.elapsed() < REQUEST_TIMEOUT * 2 {
        for (i, stream) in idle.iter_mut().enumerate() {
            if closed(stream) {
                *stream = connect_from(from(i), &address);
            }
        }
        let text = scrape_from(1, &address, Duration::from_secs(2))
            .unwrap_or_else(|| panic!("scrape {scrapes} failed; {}", running.stderr()));
        assert_eq!(value_of(&text, "zklock_exporter_connected"), Some(1.0));
        let open = descriptors(pid);
        assert!(open <= 256 - 32, "{open} descriptors open");
        scrapes += 1;
    }
    drop(idle);
    // The watch still follows the tree: the hold's end reaches it.
    holder.signal(libc::SIGTERM);
    holder.wait(WAIT).assert_success();
    wait_until(WAIT, "the exporter sees the hold end", || {
        scrape_from(1, &address, WAIT).is_some_and(|text| {
            !text.contains("lock=\"/locks/fd\"")
                && value_of(&text, "zklock_exporter_connected") == Some(1.0)
        })
    });
}
