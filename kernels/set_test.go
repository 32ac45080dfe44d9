package kernels

import (
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/simdgpt/simdgpt/kernels/internal/cpuexpect"
	"github.com/simdgpt/simdgpt/kernels/internal/kernelset"
)

// parityTests lists, for every kernel of kernelset.Set, the tests that
// compare it on every implementation against generic (or a float64
// reference). TestSetFields fails when a field of Set has no row here, so
// a new kernel cannot be added without its parity test.
var parityTests = map[string][]func(*testing.T){
	"Gemm":            {TestGemmSweep, TestGemmMatchesGeneric, TestMatMul},
	"Gemv":            {TestGemvSweep, TestGemvSpecial, TestGemvDeterministicSplit},
	"Softmax":         {TestSoftmaxSweep, TestSoftmaxSpecial},
	"SoftmaxBackward": {TestSoftmaxBackwardSweep, TestSoftmaxBackwardSpecial},
	"MaskedScores":    {TestMaskedScoresSweep, TestMaskedScoresMatchesGemm},
	"Dot":             {TestDot},
	"Axpy":            {TestAxpy},
	"Scale":           {TestScale},
	"Add":             {TestAdd},
	"Sum":             {TestSum},
	"Max":             {TestMax, TestMaxNaN},
	"GELU":            {TestGELUAccuracy, TestGELUSizes, TestGELUSpecial},
	"GELUBackward":    {TestGELUAccuracy, TestGELUSizes, TestGELUSpecial},
	"BiasGELU":        {TestBiasGELU},
	"GemmBiasGELU":    {TestGemmBiasGELU, TestGemmBiasGELULarge},
	"GemmBias":        {TestGemmBias, TestGemmBiasLarge},
	"GemmBF16":        {TestGemmLowbitSweep, TestGemmLowbitSpecial, TestGemvLowbit, TestGemmLowbitDeterministicSplit},
	"GemmInt8":        {TestGemmLowbitSweep, TestGemmLowbitSpecial, TestGemvLowbit, TestGemmLowbitDeterministicSplit},

	"GemmBF16Compute":         {TestGemmBF16ComputeBound, TestGemmBF16ComputeExact, TestGemmBF16ComputeRounds, TestGemmBF16ComputeSpecial},
	"GemmBiasBF16Compute":     {TestGemmBF16ComputeEpilogues},
	"GemmBiasGELUBF16Compute": {TestGemmBF16ComputeEpilogues},
	"GemmBF16ComputeWeights":  {TestGemmBF16ComputeWeights},
	"DequantizeInt8":          {TestDequantizeInt8, TestDequantizeInt8Allocs},
	"GemmDequantInt8":         {TestGemmDequantInt8, TestGemmDequantInt8Allocs},

	"LayerNorm":           {TestLayerNormSweep, TestLayerNormInPlace, TestLayerNormSpecial},
	"LayerNormBackward":   {TestLayerNormBackwardSweep, TestLayerNormBackwardMatchesGeneric},
	"AdamW":               {TestAdamW, TestAdamWSpecial},
	"SumSquares":          {TestSumSquares, TestSumSquaresSpecial},
	"SoftmaxCrossEntropy": {TestSoftmaxCrossEntropySweep, TestSoftmaxCrossEntropySpecial},
}

// setDescription lists the fields of kernelset.Set that are not kernels:
// the set's description and its Instruments. Every other field must be a
// kernel.
var setDescription = map[string]bool{"Name": true, "Requires": true, "Available": true, "BF16Pair": true, "Instruments": true}

// TestSetFields derives the list of kernels from kernelset.Set by
// reflection: every field but the description is a func, a kernel, which
// must have parity tests (above), be set in every registered
// implementation and, outside generic, not be generic's own function (a
// wiring slip would otherwise pass every parity test). Outside generic
// the FMA loop of the Instruments must be set as well.
func TestSetFields(t *testing.T) {
	typ := reflect.TypeFor[kernelset.Set]()
	gen := reflect.ValueOf(genericSet).Elem()
	var kernels []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if setDescription[f.Name] {
			continue
		}
		if f.Type.Kind() != reflect.Func {
			t.Errorf("kernelset.Set.%s is a %s, neither a kernel nor part of the set's description", f.Name, f.Type)
			continue
		}
		kernels = append(kernels, f.Name)
		if len(parityTests[f.Name]) == 0 {
			t.Errorf("kernelset.Set.%s has no parity test in parityTests", f.Name)
		}
	}
	for name := range parityTests {
		if !slices.Contains(kernels, name) {
			t.Errorf("parityTests lists %s, which is not a kernel of kernelset.Set", name)
		}
	}
	var names []string
	for _, p := range registry {
		names = append(names, p.Name())
	}
	if want := expectedImplsInBuild(); !slices.Equal(names, want) {
		t.Errorf("registry holds %v, want %v", names, want)
	}
	for _, p := range registry {
		v := reflect.ValueOf(&p.set).Elem()
		for _, name := range kernels {
			f := v.FieldByName(name)
			if f.IsNil() {
				t.Errorf("%s: kernel %s is nil", p.Name(), name)
				continue
			}
			if p != genericImpl && !gen.FieldByName(name).IsNil() && f.Pointer() == gen.FieldByName(name).Pointer() {
				t.Errorf("%s: kernel %s is generic's", p.Name(), name)
			}
		}
		if p != genericImpl && p.set.Instruments.FMALoop == nil {
			t.Errorf("%s: Instruments.FMALoop is nil", p.Name())
		}
		if (p.set.Instruments.FMALoop == nil) != (p.set.Instruments.FMAFlops == 0) {
			t.Errorf("%s: FMALoop and FMAFlops disagree", p.Name())
		}
		if (p.set.Instruments.BF16Loop == nil) != (p.set.Instruments.BF16Flops == 0) {
			t.Errorf("%s: BF16Loop and BF16Flops disagree", p.Name())
		}
		if (p.set.Instruments.ReadLoop == nil) != (p.set.Instruments.ReadBlock == 0) {
			t.Errorf("%s: ReadLoop and ReadBlock disagree", p.Name())
		}
	}
}

// expectedImplsInBuild is every implementation this build compiles in,
// whether or not the CPU runs it.
func expectedImplsInBuild() []string {
	switch {
	case cpuexpect.Purego:
		return []string{"generic"}
	case runtime.GOARCH == "amd64":
		return []string{"generic", "avx2", "avx512"}
	case runtime.GOARCH == "arm64":
		return []string{"generic", "neon"}
	}
	return []string{"generic"}
}

// TestFMAPeakLoop runs every implementation's FMA loop and checks the
// operation count it reports.
func TestFMAPeakLoop(t *testing.T) {
	forEachImpl(t, func(t *testing.T, p *Impl) {
		flops := p.FMAPeakLoop(10)
		if p == genericImpl {
			if flops != 0 {
				t.Errorf("generic FMAPeakLoop(10) = %d, want 0", flops)
			}
			return
		}
		if flops != 10*p.set.Instruments.FMAFlops || flops <= 0 {
			t.Errorf("FMAPeakLoop(10) = %d, want 10×%d", flops, p.set.Instruments.FMAFlops)
		}
		if got := p.FMAPeakLoop(0); got != 0 {
			t.Errorf("FMAPeakLoop(0) = %d, want 0", got)
		}
	})
}
