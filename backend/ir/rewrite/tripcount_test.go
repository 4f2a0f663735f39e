package rewrite_test

import (
	"math/rand/v2"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/backend/ir/rewrite"
)

// loopCase is a counted loop: k starts at k0 and steps by step (written
// k - (-step) when sub) while compare(dir, k, n) holds (compare(dir, n,
// k) when kRight); n is a constant of cond, or (carried) a carried value
// the body hands on (or changes, when moveBound). A third carried value
// counts the iterations, for the interpreter to tell the truth.
type loopCase struct {
	name              string
	d                 ir.DType
	k0, n, step       int64
	dir               ir.CompareDir
	kRight, sub       bool
	carried           bool
	moveBound         bool
	boundParam        bool // n is the program's parameter instead
	chainInit         bool // k0 reaches the loop through convert, broadcast and add
	want              int  // -1: TripCount must say it does not know
	runs              bool // the interpreter can run it (it ends soon)
	andCond, floatCtr bool
}

func (c loopCase) build(t *testing.T) (*ir.Program, int) {
	t.Helper()
	d := c.d
	if c.floatCtr {
		d = ir.F32
	}
	b := ir.NewBuilder()
	var nParam ir.Value
	if c.boundParam {
		nParam = b.Parameter(scalar(d))
	}
	var k0 ir.Value
	if c.chainInit {
		// k0 - 3 as int64, converted, reshaped to [1] and back, plus 3.
		x := b.Convert(b.Scalar(ir.I64, float64(c.k0-3)), d)
		x = b.Reshape(b.Reshape(x, ir.Shape{1}), nil)
		k0 = b.Binary(ir.OpAdd, x, b.Scalar(d, 3))
	} else {
		k0 = b.Constant(scalar(d), literal(t, d, c.k0))
	}
	types := []ir.TensorType{scalar(d), scalar(d), scalar(ir.I32)}
	nInit := b.Constant(scalar(d), literal(t, d, c.n))
	if c.boundParam {
		nInit = nParam
	}

	cb := ir.NewBuilder()
	ck, cn := cb.Parameter(types[0]), cb.Parameter(types[1])
	cb.Parameter(types[2])
	if !c.carried && !c.boundParam {
		cn = cb.Constant(scalar(d), literal(t, d, c.n))
	}
	x, y := ck, cn
	if c.kRight {
		x, y = cn, ck
	}
	test := cb.Compare(c.dir, x, y)
	if c.andCond {
		test = cb.Binary(ir.OpAnd, test, cb.Compare(ir.CmpGE, ck, cb.Constant(scalar(d), literal(t, d, -100))))
	}
	cond := build(t, cb, test)

	bb := ir.NewBuilder()
	bk, bn, bc := bb.Parameter(types[0]), bb.Parameter(types[1]), bb.Parameter(types[2])
	var next ir.Value
	if c.sub {
		next = bb.Binary(ir.OpSub, bk, bb.Constant(scalar(d), literal(t, d, -c.step)))
	} else {
		next = bb.Binary(ir.OpAdd, bk, bb.Constant(scalar(d), literal(t, d, c.step)))
	}
	if c.moveBound {
		bn = bb.Binary(ir.OpSub, bn, bb.Constant(scalar(d), literal(t, d, 1)))
	}
	body := build(t, bb, next, bn, bb.Binary(ir.OpAdd, bc, bb.Scalar(ir.I32, 1)))

	loop := b.While(cond, body, k0, nInit, b.Scalar(ir.I32, 0))
	rs := b.Results(loop)
	return build(t, b, rs[2], rs[0]), int(loop)
}

// literal is x as a scalar of d, in d's arithmetic (two's complement).
func literal(t *testing.T, d ir.DType, x int64) []byte {
	t.Helper()
	buf := make([]byte, d.Size())
	for i := range buf {
		buf[i] = byte(uint64(x) >> (8 * i))
	}
	if d.IsFloat() {
		var err error
		if buf, err = ir.EncodeScalar(d, float64(x)); err != nil {
			t.Fatal(err)
		}
	}
	return buf
}

var loopCases = []loopCase{
	{name: "0 to 10", d: ir.I32, n: 10, step: 1, dir: ir.CmpLT, want: 10, runs: true},
	{name: "0 to 10 by 3", d: ir.I32, n: 10, step: 3, dir: ir.CmpLT, want: 4, runs: true},
	{name: "0 to 9 inclusive by 3", d: ir.I32, n: 9, step: 3, dir: ir.CmpLE, want: 4, runs: true},
	{name: "0 to 10 inclusive by 3", d: ir.I32, n: 10, step: 3, dir: ir.CmpLE, want: 4, runs: true},
	{name: "down from 10 by subtracting 3", d: ir.I32, k0: 10, step: -3, dir: ir.CmpGT, sub: true, want: 4, runs: true},
	{name: "down from 10 to 1 inclusive adding -3", d: ir.I32, k0: 10, n: 1, step: -3, dir: ir.CmpGE, want: 4, runs: true},
	{name: "down from 10 to 0 inclusive by 5", d: ir.I32, k0: 10, step: -5, dir: ir.CmpGE, sub: true, want: 3, runs: true},
	{name: "bound on the left", d: ir.I32, n: 10, step: 2, dir: ir.CmpGT, kRight: true, want: 5, runs: true},
	{name: "bound on the left, down", d: ir.I32, k0: 7, n: 0, step: -1, dir: ir.CmpLE, kRight: true, want: 8, runs: true},
	{name: "not equal, landing on the bound", d: ir.I32, n: 12, step: 3, dir: ir.CmpNE, want: 4, runs: true},
	{name: "not equal, down", d: ir.I32, k0: 12, n: -3, step: -5, dir: ir.CmpNE, sub: true, want: 3, runs: true},
	{name: "equal at the start", d: ir.I32, k0: 5, n: 5, step: 1, dir: ir.CmpEQ, want: 1, runs: true},
	{name: "equal never", d: ir.I32, k0: 4, n: 5, step: 1, dir: ir.CmpEQ, want: 0, runs: true},
	{name: "zero trips", d: ir.I32, k0: 5, n: 3, step: 1, dir: ir.CmpLT, want: 0, runs: true},
	{name: "zero trips, step 0", d: ir.I32, k0: 5, n: 3, step: 0, dir: ir.CmpLT, want: 0, runs: true},
	{name: "bound carried unchanged", d: ir.I32, n: 6, step: 1, dir: ir.CmpLT, carried: true, want: 6, runs: true},
	{name: "bound carried unchanged, on the left", d: ir.I32, k0: 1, n: 6, step: 2, dir: ir.CmpGE, carried: true, kRight: true, want: 3, runs: true},
	{name: "init through folding ops", d: ir.I32, k0: 2, n: 9, step: 2, dir: ir.CmpLT, chainInit: true, want: 4, runs: true},
	{name: "int64", d: ir.I64, n: 7, step: 2, dir: ir.CmpLT, want: 4, runs: true},
	{name: "int64 beyond int32", d: ir.I64, k0: -(1 << 40), n: 1 << 40, step: 1 << 39, dir: ir.CmpLT, want: 4, runs: true},
	{name: "uint32 near its top", d: ir.U32, k0: 1<<32 - 6, n: 1<<32 - 1, step: 1, dir: ir.CmpLT, want: 5, runs: true},
	{name: "uint32 down to 0", d: ir.U32, k0: 5, step: -1, dir: ir.CmpGT, sub: true, want: 5, runs: true},
	{name: "uint32 down to 0 inclusive", d: ir.U32, k0: 4, step: -2, dir: ir.CmpGE, sub: true, want: -1}, // 4, 2, 0, then wraps to 2^32-2
	{name: "int8 up to its top", d: ir.I8, k0: 120, n: 127, step: 7, dir: ir.CmpLT, want: 1, runs: true},
	{name: "uint8", d: ir.U8, k0: 10, n: 240, step: 16, dir: ir.CmpLE, want: 15, runs: true},
	{name: "uint8 past its top", d: ir.U8, k0: 10, n: 250, step: 16, dir: ir.CmpLE, want: -1}, // 250, then 266 wraps to 10

	// Not known, though some end: the interpreter checks those that do
	// run what they say, and TripCount must refuse them all.
	{name: "the bound is an input", d: ir.I32, step: 1, dir: ir.CmpLT, boundParam: true, want: -1, runs: true},
	{name: "the bound moves", d: ir.I32, n: 10, step: 1, dir: ir.CmpLT, carried: true, moveBound: true, want: -1, runs: true},
	{name: "cond tests more than the counter", d: ir.I32, n: 10, step: 1, dir: ir.CmpLT, andCond: true, want: -1, runs: true},
	{name: "float counter", d: ir.I32, n: 10, step: 1, dir: ir.CmpLT, floatCtr: true, want: -1, runs: true},
	{name: "stepping away from the bound", d: ir.I32, n: 10, step: -1, dir: ir.CmpLT, want: -1},
	{name: "step 0", d: ir.I32, n: 10, step: 0, dir: ir.CmpLT, want: -1},
	{name: "wraps past int32's top", d: ir.I32, k0: 2147483640, n: 2147483647, step: 5, dir: ir.CmpLT, want: -1},
	{name: "uint32 wraps", d: ir.U32, n: 1<<32 - 1, step: 2, dir: ir.CmpLT, want: -1},
	{name: "not equal, jumping over the bound", d: ir.I32, n: 10, step: 3, dir: ir.CmpNE, want: -1},
	{name: "more trips than 2^31-1", d: ir.I64, n: 1 << 31, step: 1, dir: ir.CmpLT, want: -1},
	{name: "2^31-1 trips", d: ir.I64, n: 1<<31 - 1, step: 1, dir: ir.CmpLT, want: 1<<31 - 1},
}

func TestTripCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range loopCases {
		t.Run(c.name, func(t *testing.T) {
			p, i := c.build(t)
			n, ok := rewrite.TripCount(p, i)
			switch {
			case c.want < 0 && ok:
				t.Errorf("TripCount = %d, want not known\n%s", n, p)
			case c.want >= 0 && (!ok || n != c.want):
				t.Errorf("TripCount = %d, %v; want %d\n%s", n, ok, c.want, p)
			}
			if !c.runs {
				return
			}
			// The interpreter's own count of the iterations.
			args := randomArgs(rng, p, 0, 12)
			got, err := eval.Run(p, args)
			if err != nil {
				t.Fatal(err)
			}
			if ok && got[0].I[0] != int64(n) {
				t.Errorf("the loop runs %d times, TripCount says %d", got[0].I[0], n)
			}
		})
	}
}

func TestTripCountOfOtherInstructions(t *testing.T) {
	p, i := loopCases[0].build(t)
	for _, j := range []int{-1, 0, i - 1, i + 1, len(p.Instrs)} {
		if n, ok := rewrite.TripCount(p, j); ok {
			t.Errorf("TripCount(%d), not a loop: %d, true", j, n)
		}
	}
	if _, ok := rewrite.TripCount(nil, 0); ok {
		t.Error("TripCount of a nil program is known")
	}
}
