//go:build arm64 && !purego

package kernels

// The neon kernel set registers itself.
import _ "github.com/simdgpt/simdgpt/kernels/arm64"
