//go:build unix && !linux

package readfile

// mapPopulate is 0: only Linux populates a mapping ahead.
const mapPopulate = 0
