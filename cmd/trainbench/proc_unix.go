//go:build unix

package main

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup makes cmd start in a process group of its own, and its
// cancellation (its context done, or a deadline passed) kill that whole
// group: the Python process and whatever it started. In its own group it
// also does not receive the terminal's Ctrl-C, which this command handles
// by killing it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills the process group of cmd, started with ownGroup.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// processCPU is the CPU time (user and system) this process has used, 0
// when getrusage fails.
func processCPU() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
