package kernels

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// expectedImpls is what this build must offer on this machine: a test
// fails, rather than skips, when an implementation the CPU supports is
// missing.
func expectedImpls() []string {
	want := []string{"generic"}
	if runtime.GOARCH == "amd64" && !puregoBuild {
		if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
			want = append(want, "avx2")
		}
		if cpu.X86.HasAVX512 && cpu.X86.HasAVX512F {
			want = append(want, "avx512")
		}
	}
	if runtime.GOARCH == "arm64" && !puregoBuild && cpu.ARM64.HasASIMD {
		want = append(want, "neon")
	}
	return want
}

func TestImplementations(t *testing.T) {
	var got []string
	for _, p := range Implementations() {
		got = append(got, p.Name())
	}
	if want := expectedImpls(); !slices.Equal(got, want) {
		t.Fatalf("Implementations() = %v, want %v", got, want)
	}
	if os.Getenv(EnvISA) == "" && Default().Name() != got[len(got)-1] {
		t.Errorf("Default() = %s, want the fastest, %s", Default().Name(), got[len(got)-1])
	}
	for _, name := range got {
		p, err := Lookup(name)
		if err != nil || p.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := Lookup("sse9"); err == nil || !strings.Contains(err.Error(), "no such implementation") {
		t.Errorf("Lookup(sse9) error = %v", err)
	}
}

func TestSetDefault(t *testing.T) {
	old := Default()
	defer current.Store(old)
	if err := SetDefault("generic"); err != nil || Default().Name() != "generic" {
		t.Fatalf("SetDefault(generic) = %v, Default() = %s", err, Default())
	}
	if err := SetDefault("nonsense"); err == nil || Default().Name() != "generic" {
		t.Fatalf("SetDefault(nonsense) = %v and changed the default to %s", err, Default())
	}
}

// TestEnvISA runs this test binary again with SIMDGPT_ISA and GODEBUG set
// and checks the implementation it picks, or its error message and exit
// status for a choice it cannot honour.
func TestEnvISA(t *testing.T) {
	if os.Getenv("SIMDGPT_CHILD") == "1" {
		os.Stdout.WriteString("default=" + Default().Name() + "\n")
		return
	}
	impls := expectedImpls()
	type tc struct {
		env      []string
		want     string // printed default, or part of the error
		exitCode int
	}
	cases := []tc{
		{[]string{EnvISA + "=generic"}, "default=generic", 0},
		{[]string{EnvISA + "=bogus"}, "SIMDGPT_ISA=bogus: no such implementation in this build; available: " + strings.Join(impls, ", "), 2},
	}
	for _, name := range impls {
		cases = append(cases, tc{[]string{EnvISA + "=" + name}, "default=" + name, 0})
	}
	if slices.Contains(impls, "avx512") {
		cases = append(cases,
			tc{[]string{"GODEBUG=cpu.avx512=off"}, "default=avx2", 0},
			tc{[]string{"GODEBUG=cpu.avx512=off", EnvISA + "=avx512"}, "SIMDGPT_ISA=avx512: this CPU or OS does not support avx512", 2})
	}
	if runtime.GOARCH != "amd64" || puregoBuild {
		cases = append(cases, tc{[]string{EnvISA + "=avx2"}, "SIMDGPT_ISA=avx2: no such implementation in this build", 2})
	}
	if runtime.GOARCH != "arm64" || puregoBuild {
		cases = append(cases, tc{[]string{EnvISA + "=neon"}, "SIMDGPT_ISA=neon: no such implementation in this build", 2})
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvISA$")
		if emu := emulator(t); emu != "" {
			cmd = exec.Command(emu, os.Args[0], "-test.run=^TestEnvISA$")
		}
		cmd.Env = append(os.Environ(), "SIMDGPT_CHILD=1", EnvISA+"=", "GODEBUG=")
		cmd.Env = append(cmd.Env, c.env...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.exitCode || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", c.env, code, out, c.exitCode, c.want)
		}
	}
}

// emulator returns the user-mode emulator to run this test binary again
// under, or "" when it runs natively. Under `go test -exec
// qemu-aarch64-static` on another architecture the kernel cannot execute
// the binary itself (no binfmt_misc entry), so the child is started as
// qemu-ARCH-static (ARCH as qemu names it: aarch64 for arm64), found
// on PATH.
func emulator(t *testing.T) string {
	err := exec.Command(os.Args[0], "-test.run=^$").Run()
	if err == nil || !strings.Contains(err.Error(), "exec format error") {
		return ""
	}
	arch := map[string]string{"arm64": "aarch64", "386": "i386", "amd64": "x86_64"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	emu, lerr := exec.LookPath("qemu-" + arch + "-static")
	if lerr != nil {
		t.Fatalf("cannot run %s again (%v) and no emulator: %v", os.Args[0], err, lerr)
	}
	return emu
}

func TestCPU(t *testing.T) {
	info := CPU()
	if info.Arch != runtime.GOARCH {
		t.Errorf("CPU().Arch = %q, want %q", info.Arch, runtime.GOARCH)
	}
	if runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && !slices.Contains(info.Features, "AVX2") {
		t.Errorf("CPU().Features = %v lacks AVX2", info.Features)
	}
	if runtime.GOARCH == "arm64" && cpu.ARM64.HasASIMD && !slices.Contains(info.Features, "ASIMD") {
		t.Errorf("CPU().Features = %v lacks ASIMD", info.Features)
	}
}
