//go:build purego

package impltest

const puregoBuild = true
