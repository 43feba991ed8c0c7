//! Tables fitted to a width: every table's default columns fit 80 columns
//! for ordinary names, even with long owners and a long queue, and `-o
//! wide` shows the rest whole; so do `watch`'s lines. At any width (40 to
//! 200, in a pipe, on a terminal, in `top`) every line fits and every
//! identifier, of any length and of any characters, shows whole: wrapped at
//! most, with a mark, its pieces joining back into it.

use crate::terminal::on_terminal;

use support::tmux::{Tmux, command_line};
use support::{TestEnv, Zklock, wait_until};

use crate::support;

const COLUMNS: u16 = 80;

/// What an 80-column terminal showed for `zklock`, line by line.
fn shown(zklock: Zklock) -> Vec<String> {
    let run = on_terminal(&zklock.env("COLUMNS", COLUMNS.to_string()), &[]);
    run.assert_success();
    run.stdout
        .split('\n')
        .map(|line| line.trim_end_matches('\r').to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

/// The lines of `lines` wider than the terminal.
fn too_wide(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|line| line.chars().count() > usize::from(COLUMNS))
        .collect()
}

#[test]
fn every_table_fits_80_columns_with_long_owners_and_50_waiters() {
    let env = TestEnv::new();
    let owner = "nightly settlement for every merchant in the eu region, started by the \
                 scheduler on batch-host-17 for the finance team";
    let grant: support::json::Grant = env
        .zklock(["-o", "json", "lock", "deploy", "--detach", "--lease", "2m"])
        .args(["--data", owner])
        .run()
        .assert_success()
        .json();
    let waiters = env.connect();
    for _ in 0..50 {
        waiters.create_ephemeral_sequential("/locks/deploy/lock-", owner.as_bytes());
    }
    let tables = [
        vec!["ls"],
        vec!["stat", "deploy"],
        vec!["dump", "-o", "table"],
        vec!["dump", "--sessions", "-o", "table"],
        vec!["reap", "--all", "--dry-run"],
        vec!["watch", "deploy", "--until", "held"],
    ];
    for args in &tables {
        let lines = shown(env.zklock(args));
        assert!(lines.len() > 1, "{args:?} printed a table: {lines:#?}");
        assert_eq!(too_wide(&lines), Vec::<&String>::new(), "{args:?}");
    }
    let stat = shown(env.zklock(["stat", "deploy"]));
    // The detached holder is described under the table.
    let table = stat
        .iter()
        .take_while(|line| !line.starts_with("Detached holders"))
        .count();
    assert_eq!(table, 1 + 1 + 51, "heading, header, 51 rows: {stat:#?}");
    assert!(
        table < stat.len(),
        "the detached holder described: {stat:#?}"
    );
    let wide = shown(env.zklock(["stat", "deploy", "-o", "wide"]));
    let node = grant.token.rsplit('/').next().unwrap();
    assert!(
        wide.iter()
            .any(|line| line.contains(node) && line.contains(owner)),
        "-o wide shows the node and the owner whole: {wide:#?}"
    );
    let watched = shown(env.zklock(["watch", "deploy", "--until", "held"]));
    assert_eq!(
        watched.iter().filter(|line| line.contains("#")).count(),
        51,
        "one line per node, named by its sequence number: {watched:#?}"
    );
    let wide = shown(env.zklock(["watch", "deploy", "--until", "held", "-o", "wide"]));
    assert!(
        wide.iter()
            .any(|line| line.contains(&grant.token) && line.contains(owner)),
        "watch -o wide shows the node's path and the owner whole: {wide:#?}"
    );
    let revoked = shown(env.zklock(["release", "deploy", "--revoke"]));
    assert_eq!(too_wide(&revoked), Vec::<&String>::new());
}

#[test]
fn look_alike_names_are_refused_and_told_apart() {
    let env = TestEnv::new();
    for odd in ["deploy ", " deploy", "de\u{200b}ploy", "deploy\u{feff}"] {
        let run = env
            .zklock(["-o", "json", "lock", odd, "-n", "--detach"])
            .run();
        run.assert_code(2);
        let error: support::json::ErrorReport =
            serde_json::from_str(run.stderr.trim()).expect("a JSON error");
        assert_eq!(error.cause, "usage", "{odd:?}");
    }
    assert!(env.zk().exists("/locks/deploy ").is_none(), "nothing made");
    // A lock another library already holds under such a name can be joined.
    env.zklock(["lock", "deploy ", "-n", "--allow-odd-name", "--", "true"])
        .run()
        .assert_success();
    // Every command reads such names, and tables set them apart.
    let holder = env.connect();
    holder.mkdir_p("/locks/deploy");
    holder.mkdir_p("/locks/deploy ");
    holder.create_ephemeral_sequential("/locks/deploy/lock-", b"");
    holder.create_ephemeral_sequential("/locks/deploy /lock-", b"");
    let rows = shown(env.zklock(["ls"]));
    let locks: Vec<&str> = rows
        .iter()
        .skip(1)
        .map(|row| row.split("  ").next().unwrap())
        .collect();
    assert_eq!(locks, ["/locks/deploy", "\"/locks/deploy \""], "{rows:#?}");
}

/// The widths every table is tried at.
const WIDTHS: [usize; 5] = [40, 60, 80, 120, 200];

/// What ends a line that an identifier goes on from.
const GOES_ON: char = '↵';

/// The display width of `text`.
fn width_of(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `line`'s text from display column `from`, `width` columns on, without
/// the spaces after it; a zero-width character goes with the one before.
fn slice(line: &str, from: usize, width: usize) -> String {
    let (mut at, mut inside) = (0, false);
    let mut text = String::new();
    for c in line.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w > 0 {
            inside = at >= from && at < from + width;
        }
        if inside {
            text.push(c);
        }
        at += w;
    }
    text.trim_end().to_owned()
}

/// The cells of a table's first column, the pieces of a wrapped one joined
/// back: the column ends two spaces before the header's second word, and a
/// name too long for it is on lines of its own, each ending with the mark.
fn first_column(lines: &[String]) -> Vec<String> {
    let header = &lines[0];
    let first = header.find(' ').expect("a second header");
    let second = first + header[first..].find(|c| c != ' ').expect("a second header");
    let width = second - 2;
    let mut cells = Vec::new();
    let mut pending = String::new();
    for line in &lines[1..] {
        // A line that ends with the mark holds a piece of a name alone.
        let piece = match line.trim_end().strip_suffix(GOES_ON) {
            Some(start) => start.to_owned() + &GOES_ON.to_string(),
            None => slice(line, 0, width),
        };
        match piece.strip_suffix(GOES_ON) {
            Some(start) => pending.push_str(start),
            None if !piece.is_empty() || !pending.is_empty() => {
                cells.push(std::mem::take(&mut pending) + &piece)
            }
            None => {}
        }
    }
    assert!(pending.is_empty(), "a name that does not end: {lines:#?}");
    cells
}

/// `lines` as one text, every line an identifier goes on from joined to
/// the next without the mark and the next one's indentation.
fn joined(lines: &[String]) -> String {
    let mut text = String::new();
    for line in lines {
        match text.strip_suffix(GOES_ON) {
            Some(start) => text = start.to_owned() + line.trim_start(),
            None => {
                text.push('\n');
                text.push_str(line);
            }
        }
    }
    text
}

/// Every line of a table printed at `width`, failing on one wider.
fn fitted(run: &support::Run, width: usize) -> Vec<String> {
    run.assert_success();
    let lines: Vec<String> = run
        .stdout
        .split('\n')
        .map(|line| line.trim_end_matches('\r').to_owned())
        .filter(|line| !line.is_empty())
        .collect();
    let wide: Vec<&String> = lines.iter().filter(|l| width_of(l) > width).collect();
    assert!(
        wide.is_empty(),
        "wider than {width}: {wide:#?}\nin {lines:#?}"
    );
    lines
}

/// Lock paths of 10 to 150 characters, of ASCII, wide characters and a
/// bidi override (which tables show quoted and escaped).
fn long_paths() -> Vec<String> {
    let padded = |head: &str, length: usize| {
        let mut path = head.to_owned();
        while path.chars().count() < length {
            path.push_str(if path.ends_with('/') {
                "x"
            } else {
                "-segment/"
            });
        }
        path.trim_end_matches('/').to_owned()
    };
    let mut paths: Vec<String> = [10, 25, 60, 79, 100, 150]
        .into_iter()
        .map(|length| padded(&format!("/t/{length}/"), length))
        .collect();
    paths.push("/t/services/payments/locks/nightly-settlement".to_owned());
    paths.push(padded("/t/配置/部署锁/", 40));
    paths.push("/t/invoice\u{202e}gpj.exe".to_owned());
    paths
}

/// How tables show `path`: quoted and escaped when it holds an invisible
/// character, else as it is.
fn shown_path(path: &str) -> String {
    if path.contains('\u{202e}') {
        format!("{path:?}")
    } else {
        path.to_owned()
    }
}

#[test]
fn ls_stat_and_watch_fit_every_width_and_keep_every_identifier_whole() {
    let env = TestEnv::new();
    let paths = long_paths();
    let zk = env.connect();
    for path in &paths {
        zk.mkdir_p(path);
        zk.create_ephemeral_sequential(&format!("{path}/lock-"), b"10.0.0.7");
    }
    // The longest lock has a zklock holder, whose owner names a pid, and
    // two waiters behind it.
    let longest = paths.iter().max_by_key(|p| p.len()).unwrap().clone();
    let holder: support::json::Grant = env
        .zklock(["-o", "json", "lock", "/t/held", "--detach", "--lease", "2m"])
        .args(["--data", "nightly settlement for every merchant"])
        .run()
        .assert_success()
        .json();
    let pid = env.zk().get(&holder.token).0;
    let pid = serde_json::from_slice::<serde_json::Value>(&pid).unwrap()["pid"].to_string();
    for _ in 0..2 {
        zk.create_ephemeral_sequential(&format!("{longest}/lock-"), b"");
    }
    let mut expected: Vec<String> = paths.iter().map(|p| shown_path(p)).collect();
    expected.push("/t/held".to_owned());
    expected.sort();
    let queue: support::json::Lock = env
        .zklock(["-o", "json", "stat", &longest])
        .run()
        .assert_success()
        .json();
    let sessions: Vec<&String> = queue
        .holders
        .iter()
        .chain(&queue.waiters)
        .map(|c| &c.session)
        .collect();
    assert_eq!(sessions.len(), 3);
    let widths = WIDTHS.map(|width| (width.to_string(), width)).into_iter();
    // Off a terminal the width is 80 unless COLUMNS says otherwise.
    for (columns, width) in widths.chain([(String::new(), 80)]) {
        let ls = fitted(
            &env.zklock(["ls", "/t"]).env("COLUMNS", &columns).run(),
            width,
        );
        let mut locks = first_column(&ls);
        locks.sort();
        assert_eq!(locks, expected, "ls at {width}: {ls:#?}");
        for line in &ls {
            assert!(
                !line.contains("pid") || line.contains(&format!("pid {pid}")),
                "{ls:#?}"
            );
        }
        let stat = env
            .zklock(["stat", &longest])
            .env("COLUMNS", &columns)
            .run();
        let stat = fitted(&stat, width);
        let text = joined(&stat);
        assert!(
            text.contains(&format!("\n{longest}: ")),
            "the heading at {width}: {stat:#?}"
        );
        assert!(!text.contains("\\n"), "a newline shown escaped: {stat:#?}");
        for session in &sessions {
            assert!(
                text.contains(session.as_str()),
                "{session} at {width}: {stat:#?}"
            );
        }
        let watch = env.zklock(["watch", &longest, "--until", "held"]);
        let watched = joined(&fitted(&watch.env("COLUMNS", &columns).run(), width));
        assert!(
            watched.contains(&format!(" {longest} #0")),
            "watch at {width}: {watched}"
        );
        let held = fitted(
            &env.zklock(["stat", "/t/held"])
                .env("COLUMNS", &columns)
                .run(),
            width,
        );
        let held = joined(&held);
        assert!(held.contains(&holder.session), "{held}");
        // Every pid keeps its whole number: the holder's in the table, and
        // its starter's (this test) under it.
        let whole = [pid.to_string(), std::process::id().to_string()];
        assert!(
            held.split("pid ").skip(1).all(|after| {
                let number: String = after.chars().take_while(char::is_ascii_digit).collect();
                whole.contains(&number)
            }),
            "{held}"
        );
    }
    // On a terminal, the terminal's width.
    for width in [60u16, 80] {
        // Quiet: stderr, where a progress line may show, is the terminal too.
        let ls = env
            .zklock(["-q", "ls", "/t"])
            .env("COLUMNS", width.to_string());
        let run = on_terminal(&ls, &[]);
        let ls = fitted(&run, usize::from(width));
        let mut locks = first_column(&ls);
        locks.sort();
        assert_eq!(locks, expected, "ls on a terminal of {width}: {ls:#?}");
    }
    // -o wide fits nothing: one line per lock, every cell whole.
    let wide = env
        .zklock(["ls", "/t", "-o", "wide"])
        .env("COLUMNS", "40")
        .run();
    wide.assert_success();
    assert_eq!(
        wide.stdout.lines().count(),
        1 + expected.len(),
        "{}",
        wide.stdout
    );
    assert!(!wide.stdout.contains(GOES_ON), "{}", wide.stdout);
}

/// How long top gets to show what the test waits for.
const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The lines of top's table on `screen`: from its header (the line that
/// starts with `header`) to the line of keys.
fn top_table(screen: &str, header: &str) -> Option<Vec<String>> {
    let lines: Vec<String> = screen.lines().map(str::to_owned).collect();
    let start = lines.iter().position(|line| line.starts_with(header))?;
    let end = lines
        .iter()
        .rposition(|line| line.starts_with("s: sort") || line.starts_with("Esc: back"))?;
    Some(lines[start..end].to_vec())
}

#[test]
fn top_fits_80x24_60x20_and_120x30_and_never_cuts_a_name() {
    let env = TestEnv::new();
    let zk = env.connect();
    let wider_than_any_screen = format!("/tryout/{}", "nightly-settlement-".repeat(7));
    let mut expected = vec![
        "/tryout/mon1".to_owned(),
        "/tryout/mon2".to_owned(),
        "/tryout/bars-metrics-28555-521".to_owned(),
        "/tryout/配置/部署锁".to_owned(),
        wider_than_any_screen,
    ];
    for path in &expected {
        zk.mkdir_p(path);
        zk.create_ephemeral_sequential(&format!("{path}/lock-"), b"10.0.0.7");
    }
    // A zklock holder, whose owner names its pid; and a lock queued by
    // Curator, whose node names are 55 characters long.
    let holder: support::json::Grant = env
        .zklock([
            "-o",
            "json",
            "lock",
            "/tryout/held",
            "--detach",
            "--lease",
            "2m",
        ])
        .run()
        .assert_success()
        .json();
    let data = env.zk().get(&holder.token).0;
    let pid = serde_json::from_slice::<serde_json::Value>(&data).unwrap()["pid"].to_string();
    let curator = "/tryout/curated";
    zk.mkdir_p(curator);
    let queued = [env.connect(), env.connect()];
    for contender in &queued {
        contender.create_ephemeral_sequential(
            &format!("{curator}/_c_2f6a0e2e-5b7c-4f0e-9a43-7d0c1b8e9f10-lock-"),
            b"10.0.0.7",
        );
    }
    expected.extend(["/tryout/held".to_owned(), curator.to_owned()]);
    expected.sort();
    let command = command_line(&env.zklock(["top", "/tryout"]));
    for (columns, rows) in [(80u16, 24u16), (60, 20), (120, 30)] {
        let tmux = Tmux::start(columns, rows);
        tmux.send(&[&command, "Enter"]);
        let (screen, table) = support::wait_for(WAIT, "top lists every lock whole", || {
            let screen = tmux.screen();
            let table = top_table(&screen, "LOCK")?;
            let mut locks = first_column(&table);
            locks.sort();
            (locks == expected).then_some((screen, table))
        });
        assert!(
            screen
                .lines()
                .all(|line| width_of(line) <= usize::from(columns)),
            "{screen}"
        );
        let held = table
            .iter()
            .position(|line| line.starts_with("/tryout/held"));
        let held = &table[held.expect("the held lock's row")];
        assert!(
            !held.contains("pid") || held.contains(&format!("pid {pid}")),
            "{screen}"
        );
        // The Curator lock opened: its contenders by sequence number, each
        // session whole, and no node name.
        tmux.send(&["/", "curated", "Enter"]);
        wait_until(WAIT, "top lists the Curator lock alone", || {
            top_table(&tmux.screen(), "LOCK").is_some_and(|table| first_column(&table) == [curator])
        });
        tmux.send(&["Enter"]);
        let (screen, queue) = support::wait_for(WAIT, "top opens the Curator lock", || {
            let screen = tmux.screen();
            let table = top_table(&screen, "SEQ")?;
            (table.len() > 2).then_some((screen, table))
        });
        assert_eq!(first_column(&queue), ["0", "1"], "{screen}");
        assert!(!screen.contains("_c_2f6a0e2e"), "{screen}");
        for (contender, state) in queued.iter().zip(["holding", "waiting on 0"]) {
            let row = queue
                .iter()
                .find(|line| line.contains(&contender.session_hex()));
            assert!(row.is_some_and(|row| row.contains(state)), "{screen}");
        }
        tmux.send(&["q"]);
        tmux.wait_for_prompt();
    }
}
