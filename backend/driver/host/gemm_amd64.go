package host

// haveFMA reports AVX2 and FMA, with the OS saving the YMM registers: what
// the assembly micro-kernel needs.
var haveFMA = detectFMA()

func detectFMA() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&fma == 0 || ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	if lo, _ := xgetbv(); lo&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0 // AVX2
}

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// sgemmKernelAsm is microKernel in AVX2/FMA: c[6x16] += a-panel · b-panel.
//
//go:noescape
func sgemmKernelAsm(kc int, a, b, c *float32, ldc int)

// setFMA switches the assembly kernels on or off, for tests of both paths.
func setFMA(on bool) { haveFMA = on && detectFMA() }
