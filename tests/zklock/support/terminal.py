#!/usr/bin/python3
"""Runs a command on a new pseudo-terminal, the way a shell at a terminal runs
a job: the command leads a new session whose controlling terminal is the pty,
in the terminal's foreground process group.

    terminal.py DEADLINE STEP... -- COMMAND...

Each STEP is `expect:TEXT` (wait until TEXT appears in what the terminal
shows, after the previous match) or `send:TEXT` (type TEXT; backslash escapes
as in Python, so \\x03 is Ctrl-C, \\x1a is Ctrl-Z, \\n is Enter). Prints
everything the terminal showed on stdout and exits with the command's exit
code (128+n for signal n); the terminal is 100 columns wide, or COLUMNS
wide when that is set. When a step or the command's end takes longer than
DEADLINE seconds in all, kills what runs on the terminal, says which step
hung on stderr, and exits 99."""

import codecs
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

HUNG = 99


def main():
    separator = sys.argv.index("--")
    deadline = time.monotonic() + float(sys.argv[1])
    steps = sys.argv[2:separator]
    command = sys.argv[separator + 1 :]
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    # The size of an ordinary terminal window (a new pty has none), or as
    # wide as COLUMNS says.
    columns = int(os.environ.get("COLUMNS", "100"))
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    shown = bytearray()

    def read_for(seconds):
        """Reads what the terminal shows for at most `seconds`; False once
        nothing more can come (the last process holding the terminal left)."""
        ready, _, _ = select.select([master], [], [], max(0.0, seconds))
        if not ready:
            return True
        try:
            data = os.read(master, 4096)
        except OSError:
            return False
        shown.extend(data)
        return bool(data)

    def hung(what):
        # Only groups of the terminal's own session (the command leads it):
        # never anything of the caller's.
        groups = {pid}
        try:
            groups.add(os.tcgetpgrp(master))
        except OSError:
            pass
        for group in groups:
            try:
                if os.getsid(group) == pid:
                    os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        sys.stdout.write(shown.decode(errors="replace"))
        sys.stderr.write(f"terminal.py: hung at {what}\n")
        sys.exit(HUNG)

    matched = 0
    for step in steps:
        kind, _, text = step.partition(":")
        text = codecs.decode(text, "unicode_escape").encode()
        if kind == "send":
            os.write(master, text)
            continue
        while text not in shown[matched:]:
            left = deadline - time.monotonic()
            if left <= 0 or not read_for(min(left, 0.2)):
                hung(step)
        matched = shown.index(text, matched) + len(text)
    while True:
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            hung("the command's end")
        if not read_for(min(left, 0.1)):
            time.sleep(0.05)
    while read_for(0.05):
        pass
    sys.stdout.write(shown.decode(errors="replace"))
    code = os.waitstatus_to_exitcode(status)
    sys.exit(128 - code if code < 0 else code)


main()
