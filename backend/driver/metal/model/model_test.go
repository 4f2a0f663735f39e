package model

import (
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

var dev15 = New(Options{})

func TestDevice(t *testing.T) {
	dev := New(Options{})
	if dev.Name() != "MPSGraph model" || dev.MacOS() != (gpu.Version{Major: 15}) || dev.WorkingSet() != 8<<30 {
		t.Errorf("defaults: %q %v %d", dev.Name(), dev.MacOS(), dev.WorkingSet())
	}
	other := New(Options{MacOS: gpu.Version{Major: 13, Minor: 3}, WorkingSet: 1 << 30})
	if other.MacOS() != (gpu.Version{Major: 13, Minor: 3}) || other.WorkingSet() != 1<<30 {
		t.Errorf("options: %v %d", other.MacOS(), other.WorkingSet())
	}
	mem := make([]byte, 4096)
	b, err := dev.NewBuffer(mem)
	fatalIf(t, err)
	if &b.Bytes()[0] != &mem[0] || len(b.Bytes()) != 4096 {
		t.Error("NewBuffer copied its memory")
	}
	s, err := dev.NewScratch(100)
	fatalIf(t, err)
	if len(s.Bytes()) != 100 || dev.AllocatedBytes() != 4196 || other.AllocatedBytes() != 0 {
		t.Errorf("allocated %d after 4096 + 100 bytes", dev.AllocatedBytes())
	}
	s.Release()
	s.Release() // twice counts once
	if dev.AllocatedBytes() != 4096 {
		t.Errorf("allocated %d after releasing the scratch", dev.AllocatedBytes())
	}
	b.Release()
	if dev.AllocatedBytes() != 0 {
		t.Errorf("allocated %d after releasing everything", dev.AllocatedBytes())
	}
	if _, err := dev.NewBuffer(nil); err == nil {
		t.Error("an empty no-copy buffer was made")
	}
	if _, err := dev.NewScratch(0); err == nil {
		t.Error("an empty scratch buffer was made")
	}
}

// Float results are float32 after every primitive, not only when stored:
// (2^24 + 1) - 2^24 is 0, as on the GPU, not 1 as in float64.
func TestFloat32Rounding(t *testing.T) {
	g := graphOn(dev15)
	big := f32(g, []int{2}, 16777216, 16785408)
	sum := g.Addition(big, f32(g, []int{2}, 1, 0))
	back := g.Subtraction(sum, big)
	sq := g.Subtraction(g.Multiplication(f32(g, []int{1}, 4097), f32(g, []int{1}, 4097)), f32(g, []int{1}, 16785408))
	third := g.Division(f32(g, []int{1}, 1), f32(g, []int{1}, 3))
	r := run(t, dev15, g, sum, back, sq, third)
	checkF32(t, "2^24 + 1", r[0], 16777216, 16785408)
	checkF32(t, "(2^24 + 1) - 2^24", r[1], 0, 0)
	checkF32(t, "4097*4097 - 16785408", r[2], 0) // 16785409 ties to the even 16785408
	check(t, "1/3 bits", r[3], uint32(0x3eaaaaab))
}

// Float16 arithmetic rounds to nearest even, overflows to infinity from
// 65520, and keeps subnormals.
func TestFloat16Rounding(t *testing.T) {
	g := graphOn(dev15)
	const one, three, half, h2048, max16, h16, h15 = 0x3c00, 0x4200, 0x3800, 0x6800, 0x7bff, 0x4c00, 0x4b80
	sum := g.Addition(f16(g, []int{4}, h2048, h2048, max16, max16), f16(g, []int{4}, one, three, h16, h15))
	back := g.Subtraction(g.Slice(sum, []int{0}, []int{1}, []int{1}), f16(g, []int{1}, h2048))
	sub := g.Multiplication(f16(g, []int{2}, 0x0001, 0x0003), f16(g, []int{1}, half))
	narrow := g.Cast(f32(g, []int{6}, 1+0x1p-11, 1+3*0x1p-11, 0.1, 1e5, -1e-8, 6e-8), gpu.Float16)
	wide := g.Cast(f16(g, []int{3}, 0x0001, max16, 0xfc00), gpu.Float32)
	r := run(t, dev15, g, sum, back, sub, narrow, wide)
	// 2049 ties to 2048, 2051 to 2052; 65520 is infinity, 65519 is 65504.
	checkF16(t, "float16 sums", r[0], h2048, 0x6802, 0x7c00, max16)
	checkF16(t, "(2048 + 1) - 2048", r[1], 0)
	// 2^-25 ties to 0, 1.5 * 2^-24 to 2 * 2^-24.
	checkF16(t, "subnormal products", r[2], 0x0000, 0x0002)
	checkF16(t, "float32 to float16", r[3], one, 0x3c02, 0x2e66, 0x7c00, 0x8000, 0x0001)
	checkF32(t, "float16 to float32", r[4], 0x1p-24, 65504, -inf)
}

func TestIntegerWrap(t *testing.T) {
	g := graphOn(dev15)
	a := g.Addition(i32(g, []int{2}, math.MaxInt32, math.MinInt32), i32(g, []int{2}, 1, -1))
	m := g.Multiplication(i32(g, []int{1}, 65536), i32(g, []int{1}, 65536))
	s8 := g.Addition(konst[int8](g, gpu.Int8, []int{2}, 127, -128), konst[int8](g, gpu.Int8, []int{2}, 1, -1))
	m8 := g.Multiplication(konst[int8](g, gpu.Int8, []int{1}, 16), konst[int8](g, gpu.Int8, []int{1}, 16))
	u8 := g.Subtraction(konst[uint8](g, gpu.UInt8, []int{1}, 0), konst[uint8](g, gpu.UInt8, []int{1}, 1))
	u64 := g.Addition(konst[uint64](g, gpu.UInt64, []int{2}, math.MaxUint64, 1<<63), konst[uint64](g, gpu.UInt64, []int{2}, 1, 1<<63))
	i64 := g.Subtraction(konst[int64](g, gpu.Int64, []int{1}, math.MinInt64), konst[int64](g, gpu.Int64, []int{1}, 1))
	r := run(t, dev15, g, a, m, s8, m8, u8, u64, i64)
	check(t, "int32 add", r[0], int32(math.MinInt32), math.MaxInt32)
	check(t, "int32 mul", r[1], int32(0))
	check(t, "int8 add", r[2], int8(-128), 127)
	check(t, "int8 mul", r[3], int8(0))
	check(t, "uint8 sub", r[4], uint8(255))
	check(t, "uint64 add", r[5], uint64(0), 0)
	check(t, "int64 sub", r[6], int64(math.MaxInt64))
}

// Integer division truncates and by zero gives the poison (the type's
// maximum); floor modulo takes the divisor's sign and by zero gives 0, as
// Apple's header says.
func TestDivisionAndModulo(t *testing.T) {
	g := graphOn(dev15)
	div := g.Division(i32(g, []int{6}, 7, -7, 7, -7, 7, math.MinInt32), i32(g, []int{6}, 2, 2, -2, -2, 0, -1))
	mod := g.FloorModulo(i32(g, []int{6}, 7, -7, 7, -7, 7, 6), i32(g, []int{6}, 2, 2, -2, -2, 0, 3))
	fdiv := g.Division(f32(g, []int{3}, 1, -1, 0), f32(g, []int{1}, 0))
	fmod := g.FloorModulo(f32(g, []int{5}, -7.5, 7.5, 5, -4, 0.75), f32(g, []int{5}, 2, -2, 0, 2, 0.5))
	r := run(t, dev15, g, div, mod, fdiv, fmod)
	check(t, "int32 division", r[0], int32(3), -3, -3, 3, math.MaxInt32, math.MinInt32)
	check(t, "int32 floorModulo", r[1], int32(1), 1, -1, -1, 0, 0) // "returns 0 if divisor is 0"
	checkF32(t, "float32 division by zero", r[2], inf, -inf, nan)
	checkF32(t, "float32 floorModulo", r[3], 0.5, -0.5, 0, 0, 0.25)
}

// Plain maximum and minimum drop a NaN (the unspecified case), the
// propagating variants keep it; of -0 and +0 the first operand wins.
func TestMaximumMinimum(t *testing.T) {
	g := graphOn(dev15)
	a := f32(g, []int{4}, nan, 1, negz, nan)
	b := f32(g, []int{4}, 1, nan, 0, nan)
	c := f32(g, []int{3}, nan, 1, 2)
	d := f32(g, []int{3}, 1, nan, 3)
	u := konst[uint64](g, gpu.UInt64, []int{1}, 1)
	umax := konst[uint64](g, gpu.UInt64, []int{1}, math.MaxUint64)
	r := run(t, dev15, g, g.Maximum(a, b), g.Minimum(b, a), g.MaximumNaN(c, d), g.MinimumNaN(c, d),
		g.Maximum(u, umax), g.Minimum(u, umax), g.Maximum(i32(g, []int{1}, -1), i32(g, []int{1}, 0)))
	checkF32(t, "maximum", r[0], 1, 1, negz, nan)
	checkF32(t, "minimum", r[1], 1, 1, 0, nan)
	checkF32(t, "maximumWithNaNPropagation", r[2], nan, nan, 3)
	checkF32(t, "minimumWithNaNPropagation", r[3], nan, nan, 2)
	check(t, "uint64 maximum", r[4], uint64(math.MaxUint64))
	check(t, "uint64 minimum", r[5], uint64(1))
	check(t, "int32 maximum", r[6], int32(0))
}

func TestComparisons(t *testing.T) {
	g := graphOn(dev15)
	a := f32(g, []int{4}, nan, 1, 2, negz)
	b := f32(g, []int{4}, nan, 2, 2, 0)
	ops := []func(a, b gpu.Tensor) gpu.Tensor{g.Equal, g.NotEqual, g.LessThan, g.LessThanOrEqual, g.GreaterThan, g.GreaterThanOrEqual}
	var outs []gpu.Tensor
	for _, op := range ops {
		outs = append(outs, op(a, b))
	}
	outs = append(outs,
		g.GreaterThan(konst[uint64](g, gpu.UInt64, []int{1}, math.MaxUint64), konst[uint64](g, gpu.UInt64, []int{1}, 1)),
		g.LessThan(i32(g, []int{1}, -1), i32(g, []int{1}, 0)),
		g.LessThan(konst[uint32](g, gpu.UInt32, []int{1}, 0x80000000), konst[uint32](g, gpu.UInt32, []int{1}, 1)),
		g.Equal(konst(g, gpu.Bool, []int{2}, true, false), konst(g, gpu.Bool, []int{2}, true, true)),
	)
	r := run(t, dev15, g, outs...)
	want := [][]bool{
		{false, false, true, true}, // equal: NaN is not NaN, -0 is +0
		{true, true, false, false}, // notEqual: NaN differs from NaN
		{false, true, false, false},
		{false, true, true, true},
		{false, false, false, false},
		{false, false, true, true},
		{true}, {true}, {false}, {true, false},
	}
	for i, w := range want {
		check(t, "comparison", r[i], w...)
	}
}

// Shifts by a negative amount or the width or more give the poison; right
// shifts are arithmetic for signed types, logical for unsigned ones.
func TestBitwise(t *testing.T) {
	g := graphOn(dev15)
	x, y := i32(g, []int{1}, 0b1100), i32(g, []int{1}, 0b1010)
	i8 := func(v ...int8) gpu.Tensor { return konst(g, gpu.Int8, []int{len(v)}, v...) }
	u8 := func(v ...uint8) gpu.Tensor { return konst(g, gpu.UInt8, []int{len(v)}, v...) }
	u32 := func(v ...uint32) gpu.Tensor { return konst(g, gpu.UInt32, []int{len(v)}, v...) }
	r := run(t, dev15, g, g.BitwiseAND(x, y), g.BitwiseOR(x, y), g.BitwiseXOR(x, y),
		g.BitwiseLeftShift(i8(1, 1, 3, 1), i8(7, 8, -1, 0)),
		g.BitwiseRightShift(i8(-128, -128, 64), i8(1, 7, 7)),
		g.BitwiseRightShift(u8(128, 255), u8(1, 8)),
		g.BitwiseLeftShift(u32(1, 0xffffffff), u32(32, 4)),
		g.BitwiseRightShift(i32(g, []int{2}, -8, -8), i32(g, []int{2}, 1, 32)))
	check(t, "and", r[0], int32(8))
	check(t, "or", r[1], int32(14))
	check(t, "xor", r[2], int32(6))
	check(t, "int8 left shift", r[3], int8(-128), 127, 127, 1)
	check(t, "int8 right shift", r[4], int8(-64), -1, 0)
	check(t, "uint8 right shift", r[5], uint8(64), 255)
	check(t, "uint32 left shift", r[6], uint32(0xffffffff), 0xfffffff0)
	check(t, "int32 right shift", r[7], int32(-4), math.MaxInt32)
}

func TestUnary(t *testing.T) {
	g := graphOn(dev15)
	x := func(v ...float32) gpu.Tensor { return f32(g, []int{len(v)}, v...) }
	bools := func(v ...bool) gpu.Tensor { return konst(g, gpu.Bool, []int{len(v)}, v...) }
	p, q := bools(true, true, false, false), bools(true, false, true, false)
	r := run(t, dev15, g,
		g.Exponent(x(0, 1)), g.Logarithm(x(1, 0, -1)), g.SquareRoot(x(4, 2)), g.ReciprocalSquareRoot(x(4, 0)),
		g.Tanh(x(0, inf)), g.Sigmoid(x(0, -inf)), g.Erf(x(0, inf)), g.Sin(x(0)), g.Cos(x(0)),
		g.Floor(x(-1.5, 1.5)), g.Ceil(x(-1.5, 1.5)), g.Negative(x(2, 0)), g.Absolute(x(-3, negz)),
		g.IsNaN(x(nan, inf, 1)), g.IsFinite(x(nan, inf, 1)), g.Power(x(2, -8, 2), x(10, 1.0/3, 0.5)),
		g.Not(bools(true, false)), g.LogicalAND(p, q), g.LogicalOR(p, q), g.LogicalXOR(p, q),
		g.Identity(konst[uint64](g, gpu.UInt64, []int{1}, math.MaxUint64)))
	check(t, "exponent bits", r[0], uint32(0x3f800000), 0x402df854)
	checkF32(t, "logarithm", r[1], 0, -inf, nan)
	check(t, "squareRoot bits", r[2], uint32(0x40000000), 0x3fb504f3)
	checkF32(t, "reciprocalSquareRoot", r[3], 0.5, inf)
	checkF32(t, "tanh", r[4], 0, 1)
	checkF32(t, "sigmoid", r[5], 0.5, 0)
	checkF32(t, "erf", r[6], 0, 1)
	checkF32(t, "sin", r[7], 0)
	checkF32(t, "cos", r[8], 1)
	checkF32(t, "floor", r[9], -2, 1)
	checkF32(t, "ceil", r[10], -1, 2)
	checkF32(t, "negative", r[11], -2, negz)
	checkF32(t, "absolute", r[12], 3, 0)
	check(t, "isNaN", r[13], true, false, false)
	check(t, "isFinite", r[14], false, false, true)
	checkF32(t, "power", r[15], 1024, nan, math.Sqrt2)
	check(t, "not", r[16], false, true)
	check(t, "logicalAND", r[17], true, false, false, false)
	check(t, "logicalOR", r[18], true, true, true, false)
	check(t, "logicalXOR", r[19], false, true, true, false)
	check(t, "identity", r[20], uint64(math.MaxUint64))
}

func TestBroadcastAndSelect(t *testing.T) {
	g := graphOn(dev15)
	col := i32(g, []int{2, 1}, 10, 20)
	row := i32(g, []int{3}, 1, 2, 3)
	p := konst(g, gpu.Bool, []int{2, 1}, true, false)
	sel := g.Select(p, i32(g, []int{1, 3}, 1, 2, 3), i32(g, []int{1}, 0))
	r := run(t, dev15, g, g.Addition(col, row), sel, g.BroadcastTo(row, []int{2, 3}))
	check(t, "[2,1] + [3]", r[0], int32(11), 12, 13, 21, 22, 23)
	check(t, "select", r[1], int32(1), 2, 3, 0, 0, 0)
	check(t, "broadcast", r[2], int32(1), 2, 3, 1, 2, 3)

	bad := graphOn(dev15)
	bad.Addition(i32(bad, []int{2}, 1, 2), i32(bad, []int{3}, 1, 2, 3))
	if bad.Err() == nil {
		t.Error("[2] + [3] was accepted")
	}
}

// Casts: truncation toward zero; NaN and out-of-range floats give the
// target's minimum; out-of-range integers saturate; integers round to the
// nearest float in one rounding.
func TestCast(t *testing.T) {
	g := graphOn(dev15)
	fx := func(v ...float32) gpu.Tensor { return f32(g, []int{len(v)}, v...) }
	ix := func(v ...int32) gpu.Tensor { return i32(g, []int{len(v)}, v...) }
	u64 := konst[uint64](g, gpu.UInt64, []int{2}, math.MaxUint64, 1<<63+1<<39+1)
	i64 := konst[int64](g, gpu.Int64, []int{3}, 1<<40, -(1 << 40), 1<<62+1<<38+1)
	r := run(t, dev15, g,
		g.Cast(fx(2.9, -2.9, nan, 3e9, -3e9, -0.5, 2147483520, 2147483648), gpu.Int32),
		g.Cast(fx(-1, 255.9, 256, 1.5), gpu.UInt8),
		g.Cast(fx(nan, 9.3e18, -9.223372e18, 1e10), gpu.Int64),
		g.Cast(fx(1.8446744e19, 1e19), gpu.UInt64),
		g.Cast(fx(nan, 0, negz, 0.5), gpu.Bool),
		g.Cast(ix(300, -300, 127, -1), gpu.Int8),
		g.Cast(ix(-1, 256, 255), gpu.UInt8),
		g.Cast(ix(-1), gpu.UInt32),
		g.Cast(konst[uint32](g, gpu.UInt32, []int{1}, 0xffffffff), gpu.Int32),
		g.Cast(i64, gpu.Int32),
		g.Cast(u64, gpu.Int64),
		g.Cast(u64, gpu.Float32),
		g.Cast(i64, gpu.Float32),
		g.Cast(ix(16777217, -16777217, 16777219), gpu.Float32),
		g.Cast(ix(2049, 70000), gpu.Float16),
		g.Cast(ix(2, 0, -1), gpu.Bool),
		g.Cast(konst(g, gpu.Bool, []int{2}, true, false), gpu.Int32),
		g.Cast(konst(g, gpu.Bool, []int{2}, true, false), gpu.Float32))
	check(t, "float32 to int32", r[0], int32(2), -2, math.MinInt32, math.MinInt32, math.MinInt32, 0, 2147483520, math.MinInt32)
	check(t, "float32 to uint8", r[1], uint8(0), 255, 0, 1)
	check(t, "float32 to int64", r[2], int64(math.MinInt64), math.MinInt64, math.MinInt64, 10000000000)
	check(t, "float32 to uint64", r[3], uint64(0), 9999999980506447872)
	check(t, "float32 to bool", r[4], true, false, false, true)
	check(t, "int32 to int8 saturates", r[5], int8(127), -128, 127, -1)
	check(t, "int32 to uint8 saturates", r[6], uint8(0), 255, 255)
	check(t, "int32 -1 to uint32 saturates", r[7], uint32(0))
	check(t, "uint32 max to int32 saturates", r[8], int32(math.MaxInt32))
	check(t, "int64 to int32 saturates", r[9], int32(math.MaxInt32), math.MinInt32, math.MaxInt32)
	check(t, "uint64 to int64 saturates", r[10], int64(math.MaxInt64), math.MaxInt64)
	check(t, "uint64 to float32 bits", r[11], uint32(0x5f800000), 0x5f000001)
	// 2^62 + 2^38 + 1 rounds up to 2^62 + 2^39; through float64 it would tie
	// down to 2^62.
	check(t, "int64 to float32 bits", r[12], uint32(0x53800000), 0xd3800000, 0x5e800001)
	checkF32(t, "int32 to float32", r[13], 16777216, -16777216, 16777220)
	checkF16(t, "int32 to float16", r[14], 0x6800, 0x7c00)
	check(t, "int32 to bool", r[15], true, false, true)
	check(t, "bool to int32", r[16], int32(1), 0)
	checkF32(t, "bool to float32", r[17], 1, 0)
}

func TestReinterpretCast(t *testing.T) {
	g := graphOn(dev15)
	sig := i32(g, []int{2}, 0x7f800001, 0x7fc00000) // a signaling and a quiet NaN
	asFloat := g.ReinterpretCast(sig, gpu.Float32)
	r := run(t, dev15, g,
		g.ReinterpretCast(f32(g, []int{2}, 1, negz), gpu.Int32),
		asFloat, g.ReinterpretCast(asFloat, gpu.Int32),
		g.Cast(g.ReinterpretCast(konst[uint16](g, gpu.UInt16, []int{1}, 0x3c00), gpu.Float16), gpu.Float32),
		g.ReinterpretCast(f16(g, []int{1}, 0xfc00), gpu.Int16),
		g.ReinterpretCast(konst[int8](g, gpu.Int8, []int{1}, -1), gpu.UInt8),
		g.ReinterpretCast(konst[uint32](g, gpu.UInt32, []int{1}, 0x40490fdb), gpu.Float32))
	check(t, "float32 as int32", r[0], int32(0x3f800000), math.MinInt32)
	check(t, "NaN bits as float32", r[1], uint32(0x7f800001), 0x7fc00000)
	check(t, "NaN bits round trip", r[2], int32(0x7f800001), 0x7fc00000)
	checkF32(t, "uint16 as float16", r[3], 1)
	check(t, "float16 as int16", r[4], int16(-1024))
	check(t, "int8 as uint8", r[5], uint8(255))
	checkF32(t, "uint32 as float32", r[6], math.Pi)

	old := New(Options{MacOS: gpu.Version{Major: 13, Minor: 1}})
	og := graphOn(old)
	og.ReinterpretCast(i32(og, []int{1}, 1), gpu.Float32)
	if og.Err() == nil {
		t.Error("reinterpretCast was accepted on macOS 13.1")
	}
}

// Fill, scalar and pad values convert to the type as cast would.
func TestConstants(t *testing.T) {
	g := graphOn(dev15)
	r := run(t, dev15, g,
		g.Fill(2.7, []int{2}, gpu.Int32), g.Fill(math.NaN(), []int{1}, gpu.Int32),
		g.Fill(0.1, []int{1}, gpu.Float16), g.Scalar(-1, gpu.UInt8), g.Fill(0.5, []int{1}, gpu.Bool),
		g.Scalar(16777217, gpu.Float32), g.Fill(300, []int{1}, gpu.Int8),
		konst[uint8](g, gpu.Bool, []int{3}, 0, 1, 2))
	check(t, "fill int32", r[0], int32(2), 2)
	check(t, "fill NaN int32", r[1], int32(math.MinInt32))
	checkF16(t, "fill float16", r[2], 0x2e66)
	check(t, "scalar -1 uint8", r[3], uint8(0))
	check(t, "fill bool", r[4], true)
	checkF32(t, "scalar float32", r[5], 16777216)
	check(t, "fill 300 int8", r[6], int8(math.MinInt8))
	check(t, "bool constant", r[7], false, true, true)
}

func TestMovement(t *testing.T) {
	g := graphOn(dev15)
	x := i32(g, []int{2, 3}, 0, 1, 2, 3, 4, 5)
	y := i32(g, []int{2, 2, 3}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	var v []int32
	for i := range int32(15) {
		v = append(v, i)
	}
	z := i32(g, []int{3, 5}, v...)
	r := run(t, dev15, g,
		g.Reshape(x, []int{3, 2}), g.Transpose(x, 0, 1), g.Transpose(y, 0, 2),
		g.Slice(z, []int{0, 1}, []int{3, 5}, []int{2, 2}),
		g.Concat([]gpu.Tensor{x, i32(g, []int{2, 1}, 100, 101)}, 1), g.Concat([]gpu.Tensor{x, x}, 0),
		g.Pad(x, []int{1, 0}, []int{0, 1}, 2.5), g.Pad(f32(g, []int{1}, 7), []int{1}, []int{2}, -0.25),
		g.Reverse(x, []int{1}), g.Reverse(x, []int{0, 1}))
	check(t, "reshape", r[0], int32(0), 1, 2, 3, 4, 5)
	check(t, "transpose", r[1], int32(0), 3, 1, 4, 2, 5)
	check(t, "transpose 0,2", r[2], int32(0), 6, 3, 9, 1, 7, 4, 10, 2, 8, 5, 11)
	check(t, "slice", r[3], int32(1), 3, 11, 13)
	check(t, "concat 1", r[4], int32(0), 1, 2, 100, 3, 4, 5, 101)
	check(t, "concat 0", r[5], int32(0), 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5)
	check(t, "pad int32", r[6], int32(2), 2, 2, 2, 0, 1, 2, 2, 3, 4, 5, 2)
	checkF32(t, "pad float32", r[7], -0.25, 7, -0.25, -0.25)
	check(t, "reverse 1", r[8], int32(2), 1, 0, 5, 4, 3)
	check(t, "reverse 0,1", r[9], int32(5), 4, 3, 2, 1, 0)
}

// Arithmetic gives the canonical NaN, whatever NaN went in (MPSGraph does
// not say it keeps a NaN's sign and payload); select, data movement and
// reinterpretCast move a NaN's bits untouched.
func TestNaNBits(t *testing.T) {
	g := graphOn(dev15)
	bits := i32(g, []int{3}, -0x3edcba99, 0x7f800001, 0x7fc12345) // 0xc1234567 is a number
	x := g.ReinterpretCast(bits, gpu.Float32)
	one := f32(g, []int{1}, 1)
	r := run(t, dev15, g,
		g.ReinterpretCast(g.Multiplication(x, one), gpu.Int32),
		g.ReinterpretCast(g.Negative(x), gpu.Int32),
		g.ReinterpretCast(g.Select(g.IsNaN(x), x, one), gpu.Int32),
		g.ReinterpretCast(g.Reverse(g.Reverse(x, []int{0}), []int{0}), gpu.Int32))
	check(t, "x * 1", r[0], int32(-0x3edcba99), 0x7fc00000, 0x7fc00000)
	check(t, "-x", r[1], int32(0x41234567), 0x7fc00000, 0x7fc00000)
	check(t, "select", r[2], int32(0x3f800000), 0x7f800001, 0x7fc12345)
	check(t, "reverse", r[3], int32(-0x3edcba99), 0x7f800001, 0x7fc12345)
}
