//go:build !unix

package main

import (
	"os/exec"
	"time"
)

// ownGroup leaves cmd as it is where there are no process groups: its
// cancellation kills the process it started.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills the process of cmd.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// processCPU is 0 where getrusage is not there: CPU times are not
// measured.
func processCPU() time.Duration { return 0 }
