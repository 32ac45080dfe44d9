//go:build amd64 && !purego

package kernels

// The avx2 and avx512 kernel sets register themselves.
import _ "github.com/simdgpt/simdgpt/kernels/amd64"
