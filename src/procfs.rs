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
}
