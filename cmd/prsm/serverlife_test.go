package main

import (
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// serverpid NAME: sets NAME to the pid of the script's one server.
func cmdServerPID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serverpid NAME")
	}
	_, info := scriptServer(ts)
	ts.Setenv(args[0], strconv.Itoa(info.PID))
}

// exits PID: waits (2 min at most) for the process to end; a zombie
// nobody reaped counts as ended. With !, checks it still runs.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] exits PID")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	if neg {
		if !alive(pid) {
			ts.Fatalf("process %d has ended", pid)
		}
		return
	}
	for deadline := time.Now().Add(2 * time.Minute); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			ts.Fatalf("process %d still runs after 2m", pid)
		}
	}
}
