//go:build !purego

package impltest

const puregoBuild = false
