//go:build !purego

package kernels

const puregoBuild = false
