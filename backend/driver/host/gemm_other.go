//go:build !amd64

package host

var haveFMA = false

func sgemmKernelAsm(kc int, a, b, c *float32, ldc int) { panic("host: no assembly micro-kernel") }

func setFMA(bool) {}
