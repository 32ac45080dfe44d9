module github.com/simdgpt/simdgpt

go 1.26.0

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/sys v0.49.0
)
