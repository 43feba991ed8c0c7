//! The harness's own pieces, tested apart from the scenarios that rely on
//! them: the fault proxy's framing and modes, and the fencing log's checker.
//! A harness that could not see a fault or an overlap would let every fault
//! scenario pass.

use crate::support;

use std::time::Duration;

use support::fencing::{self, FenceLog, Stage, WAIT, grant_order};
use support::proxy::{ClientFramer, ClientMessage, Mode, ServerFramer, ServerMessage, Trigger, op};
use support::{Scratch, Zklock, wait_until};

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = (body.len() as i32).to_be_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes
}

fn request(xid: i32, op: i32, path: Option<&str>) -> Vec<u8> {
    let mut body = xid.to_be_bytes().to_vec();
    body.extend_from_slice(&op.to_be_bytes());
    if let Some(path) = path {
        body.extend_from_slice(&(path.len() as i32).to_be_bytes());
        body.extend_from_slice(path.as_bytes());
        body.extend_from_slice(&[0, 0, 0, 0]); // data, say
    }
    frame(&body)
}

/// A multi-read of the children of each of `paths`: a header (type, not
/// done, no error) and a request (path, no watch) for each, then a header
/// marked done.
fn multi_read(xid: i32, paths: &[&str]) -> Vec<u8> {
    let mut body = xid.to_be_bytes().to_vec();
    body.extend_from_slice(&op::MULTI_READ.to_be_bytes());
    for path in paths {
        body.extend_from_slice(&op::GET_CHILDREN.to_be_bytes());
        body.push(0);
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&(path.len() as i32).to_be_bytes());
        body.extend_from_slice(path.as_bytes());
        body.push(0);
    }
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.push(1);
    body.extend_from_slice(&(-1i32).to_be_bytes());
    frame(&body)
}

#[test]
fn proxy_framing_finds_each_request_and_reply_across_any_split() {
    // A ConnectRequest: version, last zxid, timeout, session id, a password
    // of 16 bytes, and the read-only flag.
    let mut connect = vec![0; 24];
    connect.extend(16i32.to_be_bytes());
    connect.extend([7; 16]);
    connect.push(1);
    let mut stream = frame(&connect);
    stream.extend(request(1, op::CREATE2, Some("/t/locks/x/_c_1-lock-")));
    let create_end = stream.len();
    stream.extend(request(2, op::GET_CHILDREN, Some("/t/locks/x")));
    stream.extend(request(-2, op::PING, None));
    stream.extend(multi_read(3, &["/t/locks/a", "/t/locks/b"]));
    let expected = vec![
        ClientMessage::Connect { read_only: true },
        ClientMessage::Request {
            xid: 1,
            op: op::CREATE2,
            path: Some("/t/locks/x/_c_1-lock-".into()),
            multi_paths: Vec::new(),
        },
        ClientMessage::Request {
            xid: 2,
            op: op::GET_CHILDREN,
            path: Some("/t/locks/x".into()),
            multi_paths: Vec::new(),
        },
        ClientMessage::Request {
            xid: -2,
            op: op::PING,
            path: None,
            multi_paths: Vec::new(),
        },
        ClientMessage::Request {
            xid: 3,
            op: op::MULTI_READ,
            path: None,
            multi_paths: vec!["/t/locks/a".into(), "/t/locks/b".into()],
        },
    ];
    for chunk in [1, 3, 4, 5, 17, stream.len()] {
        let mut framer = ClientFramer::new();
        let mut seen = Vec::new();
        let mut offset = 0;
        for piece in stream.chunks(chunk) {
            for (end, message) in framer.push(piece) {
                if matches!(&message, ClientMessage::Request { xid: 1, .. }) {
                    assert_eq!(offset + end, create_end, "chunk {chunk}");
                }
                seen.push(message);
            }
            offset += piece.len();
        }
        assert_eq!(seen, expected, "chunk size {chunk}");
    }
    let trigger = Trigger::on(op::CREATE_LIKE).path_contains("/locks/x/");
    let matched: Vec<bool> = expected.iter().map(|m| trigger.matches(m)).collect();
    assert_eq!(matched, [false, true, false, false, false]);

    let mut replies = frame(&[0; 36]); // ConnectResponse
    let mut reply = 1i32.to_be_bytes().to_vec();
    reply.extend_from_slice(&77i64.to_be_bytes());
    reply.extend_from_slice(&(-101i32).to_be_bytes());
    replies.extend(frame(&reply));
    let mut framer = ServerFramer::new();
    let mut seen = Vec::new();
    for piece in replies.chunks(3) {
        seen.extend(framer.push(piece));
    }
    assert_eq!(
        seen,
        [
            ServerMessage::Connected,
            ServerMessage::Reply {
                xid: 1,
                zxid: 77,
                err: -101
            }
        ]
    );
}

#[test]
fn the_fencing_checker_catches_overlaps_stale_fences_and_open_sections() {
    let check = |text: &str| fencing::check(&fencing::parse(text).expect("parses"));
    let good = "start 5 1 a\nend 5 2 a\nstart 9 3 b\nend 9 4 b signal\n";
    let (sections, overlaps) = check(good).expect("a good log");
    assert_eq!(grant_order(&sections), ["a", "b"]);
    assert_eq!(sections[1].end_note(), "signal");
    assert!(overlaps.is_empty());

    let overlap = "start 5 1 a\nstart 9 2 b\nend 5 3 a\nend 9 4 b\n";
    let (_, overlaps) = check(overlap).expect("fenced, though overlapping");
    assert_eq!(overlaps.len(), 1, "{overlaps:?}");
    assert!(overlaps[0].stale.starts_with("a ") && overlaps[0].newer.starts_with("b "));

    let stale = "start 9 1 a\nend 9 2 a\nstart 5 3 b\nend 5 4 b\n";
    assert!(check(stale).unwrap_err().contains("fence did not grow"));
    let same = "start 9 1 a\nend 9 2 a\nstart 9 3 b\nend 9 4 b\n";
    assert!(check(same).unwrap_err().contains("fence did not grow"));
    let open = "start 5 1 a\nend 5 2 a\nstart 9 3 b\n";
    assert!(check(open).unwrap_err().contains("never ended"));
    let stray = "end 5 2 a\n";
    assert!(check(stray).unwrap_err().contains("not open"));
    assert!(fencing::parse("begin 5 1 a\n").is_err());

    let scratch = Scratch::new();
    let log = FenceLog::new(&scratch);
    log.append("start 1 10 a");
    log.append("start 2 11 b");
    log.record_end(1, "a");
    log.append("end 2 12 b");
    assert!(
        log.check_exclusive()
            .unwrap_err()
            .contains("still in its section")
    );
}

#[test]
fn the_proxy_passes_freezes_cuts_and_drops_after_a_request() {
    let (stage, proxy, through_proxy) = Stage::behind_a_proxy("p");
    // Pass: a lock through the proxy works.
    stage
        .fenced(&through_proxy, &[], "a", "true")
        .run()
        .assert_success();
    // Freeze: nothing gets through, but the connection stays open.
    proxy.freeze();
    let heard = proxy.bytes_to_clients();
    let accepted = proxy.accepted();
    let mut frozen = Zklock::new(["--connect-timeout", "10s", "stat", "/"])
        .hosts(&through_proxy)
        .spawn();
    wait_until(WAIT, "the proxy holds the new connection", || {
        proxy.accepted() > accepted
    });
    // A bounded look: nothing gets through while frozen.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        proxy.bytes_to_clients(),
        heard,
        "a frozen proxy passes nothing"
    );
    assert!(frozen.is_running(), "a frozen proxy answers nothing");
    assert!(proxy.open_connections() >= 1, "the connection stays open");
    proxy.pass();
    frozen.wait(WAIT).assert_success();
    // Cut: connections are refused until the mode changes.
    proxy.cut();
    Zklock::new(["--connect-timeout", "500ms", "stat", "/"])
        .hosts(&through_proxy)
        .run()
        .assert_code(3);
    proxy.pass();
    // Drop after the create: the server made the node, the client never
    // heard; zklock reconnects and finds it. (A persistent lock directory:
    // the container one of the first lock may be gone already.)
    stage.zk().mkdir_p(stage.dir());
    proxy.drop_after(Trigger::on(op::CREATE_LIKE).path_contains("/locks/p/"));
    stage
        .fenced(&through_proxy, &[], "b", "true")
        .run()
        .assert_success();
    let dropped = proxy.wait_for_drop(WAIT);
    assert!(op::CREATE_LIKE.contains(&dropped.op), "{dropped:?}");
    assert_eq!(dropped.reply.map(|(_, err)| err), Some(0), "{dropped:?}");
    assert_eq!(proxy.mode(), Mode::Pass);
    stage.assert_granted(&["a", "b"]);
}
