//! `history` over the logs that once made it slow or large, written by
//! ZooKeeper's own writer (bench/WriteTxnLog.java): memory follows the
//! contenders alive at one time, each kept small, never the size of what a
//! record or a snapshot's node holds. (That time follows the log's length
//! whatever it holds is bounded by the replay's unit tests, which time each
//! shape at two sizes; BENCHMARKS.md has the figures over these files.)

use super::write_txn_log;
use crate::support;

use support::{Scratch, TestEnv};

const MIB: u64 = 1 << 20;

/// zklock's peak memory reading `data` with `history / --data-dir`.
fn peak(data: &std::path::Path) -> u64 {
    let (code, peak) = TestEnv::new()
        .zklock(["history", "/", "--data-dir"])
        .arg(data)
        .args(["-o", "json"])
        .run_for_peak_memory();
    assert_eq!(code, Some(0), "history of {}", data.display());
    peak
}

/// A snapshot of 16 live contenders, each with a name and data of 8 MiB,
/// then a log whose one record deletes the first (a name of 8 MiB again):
/// the reader holds one node's name and data at a time, and each contender
/// keeps a kilobyte or two of them. Kept whole, they took 48 bytes for
/// every byte of one name.
#[test]
fn contenders_with_names_and_data_of_megabytes_are_kept_small() {
    let scratch = Scratch::new();
    let size = 8 * MIB;
    let data = write_txn_log(&scratch, &["0", "big-snapshot", &size.to_string()]);
    let peak = peak(&data);
    assert!(
        peak < 4 * size + 48 * MIB,
        "{} MiB for 16 contenders of {} MiB names and data",
        peak / MIB,
        size / MIB
    );
}

/// One multi of eight million empty operations, 64 MiB: read one
/// operation at a time from its record, it costs the record. Each
/// operation made into a value cost half a gigabyte.
#[test]
fn a_multi_of_millions_of_operations_costs_its_record() {
    let scratch = Scratch::new();
    let data = write_txn_log(&scratch, &["0", "empty-multi", "8000000"]);
    let peak = peak(&data);
    assert!(
        peak < 160 * MIB,
        "{} MiB for a record of 64 MiB",
        peak / MIB
    );
}
