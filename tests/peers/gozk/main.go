// zk-peer is a go-zookeeper lock contender for zklock's integration tests:
// it takes go-zookeeper's own Lock (zk.NewLock) on a path, holds it, and
// reports on stdout in the line protocol of tests/peers/CuratorPeer.java and
// tests/peers/kazoo_peer.py:
//
//	zk-peer <connect-string[/chroot]> <lock-path> mutex [options]
//
//	--hold-ms N             hold N ms, then release (default: until SIGTERM)
//	--timeout-ms N          give up after N ms: print TIMEOUT and exit 1
//	--session-timeout-ms N  default 4000
//
// stdout, one line each: READY (connected), ACQUIRED <node> <epoch-ms>,
// RELEASED <epoch-ms>, TIMEOUT. Exit 0 done, 1 timeout, 2 error.
// SIGTERM or SIGINT: release if holding (RELEASED), else give up; exit 0.
//
// go-zookeeper has no chroot, so a chroot in the connect string is put in
// front of the lock path here, and taken off the node path reported.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

func nowMs() int64 { return time.Now().UnixMilli() }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "zk-peer: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 4 {
		fail("usage: zk-peer <connect-string> <lock-path> mutex [--hold-ms N] [--timeout-ms N] [--session-timeout-ms N]")
	}
	connect, lockPath, mode := os.Args[1], os.Args[2], os.Args[3]
	if mode != "mutex" {
		fail("go-zookeeper has only a mutex, not %q", mode)
	}
	flags := flag.NewFlagSet("zk-peer", flag.ContinueOnError)
	holdMs := flags.Int64("hold-ms", -1, "")
	timeoutMs := flags.Int64("timeout-ms", -1, "")
	sessionMs := flags.Int64("session-timeout-ms", 4000, "")
	if err := flags.Parse(os.Args[4:]); err != nil {
		os.Exit(2)
	}

	hosts, chroot := connect, ""
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		hosts, chroot = connect[:i], strings.TrimSuffix(connect[i:], "/")
	}
	conn, events, err := zk.Connect(strings.Split(hosts, ","), time.Duration(*sessionMs)*time.Millisecond,
		zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		fail("connect to %s: %v", hosts, err)
	}
	defer conn.Close()
	connected := time.After(10 * time.Second)
	for waiting := true; waiting; {
		select {
		case event := <-events:
			waiting = event.State != zk.StateHasSession
		case <-connected:
			fail("no session with %s within 10 s", hosts)
		}
	}
	fmt.Println("READY")

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	lock := zk.NewLock(conn, chroot+lockPath, zk.WorldACL(zk.PermAll))
	acquired := make(chan error, 1)
	go func() { acquired <- lock.Lock() }()
	var deadline <-chan time.Time
	if *timeoutMs >= 0 {
		deadline = time.After(time.Duration(*timeoutMs) * time.Millisecond)
	}
	select {
	case err := <-acquired:
		if err != nil {
			fail("lock %s: %v", lockPath, err)
		}
	case <-deadline:
		// Closing the session takes our waiting node with it.
		conn.Close()
		fmt.Println("TIMEOUT")
		os.Exit(1)
	case <-signals:
		return
	}
	fmt.Printf("ACQUIRED %s %d\n", strings.TrimPrefix(ownNode(conn, chroot+lockPath), chroot), nowMs())

	var hold <-chan time.Time
	if *holdMs >= 0 {
		hold = time.After(time.Duration(*holdMs) * time.Millisecond)
	}
	select {
	case <-hold:
	case <-signals:
	}
	if err := lock.Unlock(); err != nil {
		fail("unlock %s: %v", lockPath, err)
	}
	fmt.Printf("RELEASED %d\n", nowMs())
}

// ownNode is the path of this session's node under lockPath: go-zookeeper's
// Lock keeps the name it created to itself.
func ownNode(conn *zk.Conn, lockPath string) string {
	children, _, err := conn.Children(lockPath)
	if err != nil {
		fail("list %s: %v", lockPath, err)
	}
	for _, child := range children {
		node := lockPath + "/" + child
		if _, stat, err := conn.Get(node); err == nil && stat.EphemeralOwner == conn.SessionID() {
			return node
		}
	}
	fail("none of the nodes under %s is this session's", lockPath)
	return ""
}
