//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdgpt/simdgpt/gpt"
)

// fakeHang records the shell's process id and that of a child it starts
// (a sleep of ten minutes) in the file %[1]s, and waits for the child:
// a peer that never answers, with a process of its own.
const fakeHang = `echo $$ >> '%[1]s'; sleep 600 & echo $! >> '%[1]s'; wait; exit 0`

// fakeVersion answers the torch version check as python3 with torch
// does: the version on a line, exit status 0.
const fakeVersion = `if [ "$1" = "-c" ]; then echo 2.4.1+fake; exit 0; fi`

// fakeServe answers train_gpt.py's "threads N" and "run N" requests (each
// step 1.5 ms) until "quit", which it leaves unanswered.
const fakeServe = `while read cmd n; do
  case "$cmd" in
    threads) echo "ok $n";;
    run) printf ms; i=0; while [ $i -lt $n ]; do printf ' 1.5'; i=$((i+1)); done; echo;;
    quit) break;;
  esac
done
`

// TestPeerDeadlines runs the command with a stand-in for python3 (a shell
// script) that stops answering at one point or another: at the torch
// version check, before a serving script's ready line, before its reply
// to a request, after "quit", or in the middle of the training step
// check. Each wait
// has a deadline (shortened here): the command ends with one line naming
// what it waited for and how long, exit status 1 (or, when the version
// check does not answer and torch is optional, measures simdgpt alone,
// saying why), and the peer and its child are gone.
func TestPeerDeadlines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: tests that start processes run without -short (see pythonScript)")
	}
	saved := deadlines
	defer func() { deadlines = saved }()
	deadlines.version, deadlines.ready, deadlines.reply, deadlines.quit = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	deadlines.minFlops, deadlines.minRead = 1e12, 1e12

	train, err := parseOptions(tiny, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// A small GPT-2 file keeps -decode's set-up short.
	decodeCfg := gpt.Config{Vocab: 64, BlockSize: 32, Layers: 1, Heads: 2, Width: 64, TieEmbeddings: true}
	model, err := writeGPT2(t.TempDir(), decodeCfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	trainArgs := append(append([]string(nil), tiny...), "-steps", "1", "-rounds", "1", "-threads", "1")
	decodeArgs := []string{"-decode", "-model", model, "-ctx", "4,8", "-tokens", "3", "-rounds", "1", "-threads", "1"}
	with := func(base []string, extra ...string) []string { return append(append([]string(nil), base...), extra...) }
	ready := func(params int, extra string) string {
		return fmt.Sprintf(`echo "ready %d blas=other%s"; `, params, extra)
	}
	for _, tc := range []struct {
		name   string
		script string // the body of the stand-in, %[1]s the file of process ids
		args   []string
		status int
		msg    string // the line on stderr (status 1) or stdout (status 0)
	}{
		{"version check, torch optional", fakeHang, trainArgs, 0,
			"'s answer to the torch version check (import torch): killed it; measuring simdgpt alone"},
		{"version check, -require-torch", fakeHang, with(trainArgs, "-require-torch"), 1,
			"trainbench: -require-torch: waited 300ms for "},
		{"version check, -decode -require-torch", fakeHang, with(decodeArgs, "-require-torch"), 1,
			"trainbench: -require-torch: waited 300ms for "},
		{"ready line, training", fakeVersion + "\n" + fakeHang, trainArgs, 1,
			"trainbench: waited 300ms for train_gpt.py's ready line: killed it"},
		{"ready line, -decode", fakeVersion + "\n" + fakeHang, decodeArgs, 1,
			"trainbench: waited 300ms for gpt2_decode.py's ready line: killed it"},
		{"reply, training", fakeVersion + "\n" + ready(train.cfg.NumParams(), "") + fakeHang, trainArgs, 1,
			`trainbench: waited 300ms for train_gpt.py's reply to "threads": killed it`},
		{"reply, -decode", fakeVersion + "\n" + ready(decodeCfg.NumParams(), " dtype=fp32") + fakeHang, decodeArgs, 1,
			`trainbench: waited 300ms for gpt2_decode.py's reply to "threads": killed it`},
		{"reply, -decode -check", fakeVersion + "\n" + ready(decodeCfg.NumParams(), " dtype=fp32") + fakeHang, with(decodeArgs, "-check"), 1,
			`trainbench: waited 300ms for gpt2_decode.py's reply to "logits": killed it`},
		{"exit, training", fakeVersion + "\n" + ready(train.cfg.NumParams(), "") + fakeServe + fakeHang, trainArgs, 1,
			`trainbench: waited 300ms for train_gpt.py's exit after "quit": killed it`},
		{"training -check", fakeVersion + "\n" + fakeHang, with(trainArgs, "-check"), 1,
			"trainbench: waited 600ms for train_gpt.py --check's verdict: killed it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pids := filepath.Join(dir, "pids")
			python := filepath.Join(dir, "python3")
			if err := os.WriteFile(python, []byte("#!/bin/sh\n"+fmt.Sprintf(tc.script, pids)+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			start := time.Now()
			st := run(with(tc.args, "-python", python), &out, &errOut)
			el := time.Since(start)
			e := errOut.String()
			switch {
			case tc.status == 0:
				if st != 0 || !strings.Contains(out.String(), tc.msg+"\n") || strings.Contains(e, "trainbench:") {
					t.Errorf("exit status %d, stdout %q, stderr %q; want 0 and a line ending %q", st, out.String(), e, tc.msg)
				}
			case st != 1 || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "trainbench: ") || !strings.Contains(e, tc.msg):
				// Progress lines of the rounds may come first.
				lines := strings.Split(strings.TrimSuffix(e, "\n"), "\n")
				last := lines[len(lines)-1]
				if st == 1 && strings.HasPrefix(last, "trainbench: ") && strings.Contains(last, tc.msg) && strings.Count(e, "trainbench: ") == 1 && !strings.Contains(e, "goroutine") {
					break
				}
				t.Errorf("exit status %d, stderr %q; want 1 and one line containing %q", st, e, tc.msg)
			}
			if el > 20*time.Second {
				t.Errorf("took %v", el)
			}
			b, err := os.ReadFile(pids)
			if err != nil {
				t.Fatalf("the stand-in did not start: %v", err)
			}
			ids := strings.Fields(string(b))
			if len(ids) != 2 {
				t.Fatalf("process ids %q, want the stand-in's and its child's", ids)
			}
			for _, id := range ids {
				pid, err := strconv.Atoi(id)
				if err != nil {
					t.Fatal(err)
				}
				if !gone(pid, 5*time.Second) {
					t.Errorf("process %d is still running", pid)
					syscall.Kill(pid, syscall.SIGKILL) // the test's own grandchild
				}
			}
		})
	}
}

// gone reports whether process pid has ended (or is a zombie) within d.
func gone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		switch {
		case err == nil:
			// The state follows the command name in parentheses.
			if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
				return true
			}
		case os.IsNotExist(err):
			if _, err := os.Stat("/proc/self/stat"); err == nil {
				return true
			}
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return true
			}
		default:
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return true
			}
		}
		if time.Now().After(end) {
			return false
		}
	}
}
