// The raw measurements behind PERF.md (benchmark logs, loss logs and the
// charts drawn from them). This go.mod makes perf/ a module of its own, so
// that none of it is downloaded by `go get github.com/simdgpt/simdgpt`:
// importers get the code and the two charts README shows (doc/), not
// about a megabyte of logs. It holds no Go code.
module github.com/simdgpt/simdgpt/perf

go 1.24
