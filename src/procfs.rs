//! Reading the kernel's `/proc` files: a process's stat fields and other
//! small files, in one read each. Shared by the owner record, the walk up
//! the process tree for nesting, and the overwriting of secret arguments.

/// Room for a whole `/proc` file of a process in one read: its stat, or
/// an environment of usual size (a larger one takes more reads).
const ONE_READ: usize = 8 * 1024;

/// The contents of a `/proc` file. Such files say they are empty, so a
/// plain `fs::read` starts with reads of 32 bytes and doubles them: a dozen
/// system calls for an environment, on the way to every lock's first
/// request.
pub(crate) fn read(path: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut contents = Vec::with_capacity(ONE_READ);
    std::fs::File::open(path)
        .ok()?
        .read_to_end(&mut contents)
        .ok()?;
    Some(contents)
}

/// Field `field` of `/proc/PID/stat`, numbered as proc(5) numbers them
/// from 1 (4: the parent, 22: the start time), for the fields after the
/// program name.
pub(crate) fn process_stat(pid: i32, field: usize) -> Option<u64> {
    stat_field(&read(&format!("/proc/{pid}/stat"))?, field)
}

/// Field `field` of the text of a `/proc/PID/stat`.
pub(crate) fn stat_field(stat: &[u8], field: usize) -> Option<u64> {
    // The program name, in parentheses, may hold spaces and parentheses:
    // the fields that follow it, from the third on, start after the last
    // `)`.
    let rest = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
    let mut fields = rest
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty());
    std::str::from_utf8(fields.nth(field.checked_sub(3)?)?)
        .ok()?
        .parse()
        .ok()
}

/// The processes whose parent is `parent` now, from every `/proc/PID/stat`.
/// A process that ends meanwhile is missed or still listed: the caller
/// makes sure of each one it acts on.
pub(crate) fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| process_stat(pid, 4) == u64::try_from(parent).ok())
        .collect()
}

/// A TCP socket as the kernel's table lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TcpSocket {
    /// Connected, and not closed by its process (state ESTABLISHED).
    pub established: bool,
    /// The uid of its process.
    pub owner: u32,
    /// 0 once no process holds it.
    pub inode: u64,
}

/// The TCP socket of this network namespace whose own end is `local` and
/// whose peer is `peer`, from `/proc/net/tcp`: the established one, when
/// an earlier connection between the same ports lingers there closed
/// (TIME_WAIT).
pub(crate) fn tcp_socket(
    local: std::net::SocketAddrV4,
    peer: std::net::SocketAddrV4,
) -> Option<TcpSocket> {
    const ESTABLISHED: &str = "01";
    let table = read("/proc/net/tcp")?;
    let table = std::str::from_utf8(&table).ok()?;
    let mut matching = table.lines().skip(1).filter_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let matches =
            socket_address(fields.get(1)?)? == local && socket_address(fields.get(2)?)? == peer;
        matches.then_some(TcpSocket {
            established: *fields.get(3)? == ESTABLISHED,
            owner: fields.get(7)?.parse().ok()?,
            inode: fields.get(9)?.parse().ok()?,
        })
    });
    let first = matching.next()?;
    Some(if first.established {
        first
    } else {
        matching.find(|socket| socket.established).unwrap_or(first)
    })
}

/// An IPv4 address as `/proc/net/tcp` writes it: the address's four bytes
/// in memory order read as one hexadecimal number of this host, a colon,
/// the port in hexadecimal.
fn socket_address(text: &str) -> Option<std::net::SocketAddrV4> {
    let (address, port) = text.split_once(':')?;
    let address = u32::from_str_radix(address, 16).ok()?;
    let port = u16::from_str_radix(port, 16).ok()?;
    Some(std::net::SocketAddrV4::new(
        std::net::Ipv4Addr::from(address.to_ne_bytes()),
        port,
    ))
}

/// True when process `pid` has the socket of inode `inode` open.
pub(crate) fn holds_socket(pid: i32, inode: u64) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let wanted = format!("socket:[{inode}]");
    fds.filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| target.as_os_str() == wanted.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stat_fields_after_any_program_name() {
        let stat = b"4242 (a) b (c) R 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1";
        assert_eq!(stat_field(stat, 4), Some(17), "the parent");
        assert_eq!(stat_field(stat, 22), Some(987654), "the start time");
        assert_eq!(
            stat_field(stat, 2),
            None,
            "the program name is not a field here"
        );
        assert_eq!(stat_field(stat, 99), None);
        assert_eq!(stat_field(b"4242 (cut", 4), None);
        assert_eq!(
            process_stat(std::process::id() as i32, 4),
            Some(u64::from(crate::sys::parent_pid() as u32))
        );
    }

    #[test]
    fn finds_a_loopback_socket_and_the_process_that_holds_it() {
        let loopback = std::net::Ipv4Addr::LOCALHOST;
        assert_eq!(
            socket_address("0100007F:1F90"),
            Some(std::net::SocketAddrV4::new(loopback, 8080)),
            "as a little-endian host writes 127.0.0.1"
        );
        assert_eq!(socket_address("0100007F"), None);
        assert_eq!(socket_address("zz:1"), None);
        let listener = std::net::TcpListener::bind((loopback, 0)).unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let v4 = |address| match address {
            std::net::SocketAddr::V4(v4) => v4,
            other => panic!("{other}"),
        };
        let socket = tcp_socket(
            v4(client.local_addr().unwrap()),
            v4(listener.local_addr().unwrap()),
        )
        .expect("the client's end is listed");
        assert!(socket.established);
        assert_eq!(socket.owner, crate::sys::real_uid());
        let inode = socket.inode;
        let me = std::process::id() as i32;
        assert!(holds_socket(me, inode));
        assert!(!holds_socket(me, inode + 1_000_000_000));
        assert!(children_of(crate::sys::parent_pid()).contains(&me));
    }
}
