package host

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// TestAgreesWithTheReferenceInterpreter runs the fuzz target's programs
// (float32, finite inputs) on the host driver and on the IR's reference
// interpreter (backend/ir/eval), and compares.
func TestAgreesWithTheReferenceInterpreter(t *testing.T) {
	d := New(Options{})
	rnd := rand.New(rand.NewPCG(7, 11))
	compared := map[ir.Op]int{}
	for i := range 3000 {
		seed := make([]byte, 40)
		for j := range seed {
			seed[j] = byte(rnd.IntN(256))
			if i%2 == 1 {
				seed[j] %= 3
			}
		}
		seed[0] = 0 // float32
		p, err := buildFuzz(&fuzzReader{b: seed})
		if err != nil || p.ResultTypes()[0].DType != ir.F32 {
			continue
		}
		args := make([]eval.Tensor, len(p.Params))
		ptrs := make([]unsafe.Pointer, len(p.Params))
		for k, pt := range p.Params {
			if pt.DType != ir.F32 {
				args = nil
				break
			}
			v := eval.New(pt)
			buf := make([]byte, pt.Bytes()+1)
			for e := range v.F {
				x := float32(rnd.IntN(17)-8) / 4 // exact in every float type
				v.F[e] = float64(x)
				binary.LittleEndian.PutUint32(buf[4*e:], math.Float32bits(x))
			}
			args[k], ptrs[k] = v, unsafe.Pointer(&buf[0])
		}
		if args == nil {
			continue
		}
		want, err := eval.Run(p, args)
		if err != nil {
			if strings.Contains(err.Error(), "not supported") {
				continue
			}
			t.Fatalf("the interpreter failed: %v\n%s", err, p)
		}
		exe, err := d.Compile(p)
		if err != nil {
			t.Fatalf("Compile: %v\n%s", err, p)
		}
		rt := p.ResultTypes()[0]
		out := make([]byte, rt.Bytes()+1)
		if err := d.Run(exe, ptrs, []unsafe.Pointer{unsafe.Pointer(&out[0])}); err != nil {
			t.Fatalf("Run: %v\n%s", err, p)
		}
		last := p.Instrs[p.Results[0]].Op
		for e, w := range want[0].F {
			got := float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*e:])))
			if !(got == w || math.IsNaN(got) && math.IsNaN(w) || math.Abs(got-w) <= 1e-5*math.Max(1, math.Abs(w))) {
				t.Fatalf("%s: element %d is %g on the host driver, %g in the interpreter\n%s", last, e, got, w, p)
			}
		}
		compared[last]++
	}
	t.Logf("programs compared, by final op: %v", compared)
	if len(compared) < 8 {
		t.Errorf("only %d kinds of program compared", len(compared))
	}
}
