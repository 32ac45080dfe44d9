//go:build !linux

package gpt

// systemLimits returns the memory limits the system states: none known
// here (see AvailableMemory).
func systemLimits() []memLimit { return nil }
