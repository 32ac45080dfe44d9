//go:build purego

package main

// buildTags are the build tags of this test binary, for the binaries it
// builds.
const buildTags = "purego"
