//go:build !purego

package cpuexpect

// Purego reports whether the build has the purego tag (no assembly).
const Purego = false
