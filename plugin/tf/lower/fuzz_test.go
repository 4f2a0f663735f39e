package lower

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/fuzzrun"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// FuzzKernel lowers mutated calls of every registered kernel (the format
// is fuzzcall_test.go's): an op, a registration, input dtypes and shapes,
// attribute values (negative and huge ints, lists, strings) and host
// values. Errors are fine, and must start with the op's name, as
// TensorFlow shows them; a panic (Build recovers them into Internal
// errors), a program that does not verify, a hang, or a panic or hang
// running the program on the host driver is a bug.
func FuzzKernel(f *testing.F) {
	for _, c := range fuzzSeeds(f) {
		op, combo, sig, vals, attrBytes, ok := encodeCall(c)
		if !ok {
			f.Fatalf("%s: a seed the format cannot hold", c.k.Op)
		}
		f.Add(op, combo, sig, vals, attrBytes)
	}
	d := host.New(host.Options{MemoryBytes: 1 << 30})
	f.Fuzz(func(t *testing.T, op string, combo uint16, sig, vals, attrBytes []byte) {
		c, ok := decodeCall(op, combo, sig, vals, attrBytes)
		if !ok || c.k.Lower == nil {
			return
		}
		stop := fuzzrun.Watchdog(fuzzrun.Default.Timeout, c.k.Op+"'s lowering")
		defer stop()
		l, err := c.k.Build(c.attrs, c.in, c.host, c.raw)
		stop()
		if err != nil {
			var se *status.Error
			if errors.As(err, &se) && se.Code == status.Internal {
				t.Fatalf("%v\nattributes %+v, host values %v", err, *c.attrs, c.host)
			}
			if !strings.HasPrefix(err.Error(), c.k.Op+": ") {
				t.Fatalf("the error does not start with the op: %v", err)
			}
			return
		}
		if err := ir.Verify(l.Program); err != nil {
			t.Fatalf("%s %v: Build returned a program that does not verify: %v", c.k.Op, c.in, err)
		}
		_ = fuzzrun.Run(t, d, l.Program, c.data, fuzzrun.Default)
	})
}

// fuzzSeeds are the calls FuzzKernel starts from: every shape case the
// format holds (dimensions up to 255), a cluster, and for each kernel without either a call of
// float32[2,3] inputs and int32[1] host inputs holding 1.
func fuzzSeeds(t testing.TB) []fuzzCall {
	var out []fuzzCall
	covered := map[*Kernel]bool{}
	add := func(op string, a *Attrs, in []ir.TensorType, host map[int][]int64, raw map[int][]byte) {
		k, ok := Lookup(op)
		if !ok {
			t.Fatalf("%s is not registered", op)
		}
		c, ok := seedCall(k, a, in, host, raw)
		if _, _, _, _, _, fits := encodeCall(c); ok && fits {
			out = append(out, c)
			covered[k] = true
		}
	}
	for _, sc := range shapeCases() {
		add(sc.op, sc.attrs.Attrs, sc.in, sc.host, sc.raw)
	}
	f := map[string]*pb.AttrValue{"T": typeAttr(pb.DataType_DT_FLOAT)}
	members := []*pb.NodeDef{nodeDef("add", "AddV2", f, "x", "y"), nodeDef("r", "Reshape", f, "add", "shape")}
	a := clusterAttrs(t, members, []string{"x", "y"}, []string{"shape"}, []string{"r"})
	add(ClusterOp, a.Attrs, []ir.TensorType{f32(2, 3), f32(2, 3), i32(2)}, h(2, v(3, 2)), nil)
	for _, k := range Kernels() {
		if covered[k] || k.Lower == nil {
			continue
		}
		in := make([]ir.TensorType, len(k.Inputs))
		host := map[int][]int64{}
		for i := range in {
			in[i] = f32(2, 3)
			if k.IsHostInput(nil, i, len(in)) {
				in[i], host[i] = i32(1), []int64{1}
			}
		}
		add(k.Op, nil, in, host, nil)
	}
	return out
}

// seedCall is a call the format holds: a's attributes the kernel reads,
// the required ones it lacks set to zero values (TensorFlow always gives
// them), a registration that agrees with its type attributes, host and
// read inputs filled out. ok is false when the format cannot hold it.
func seedCall(k *Kernel, a *Attrs, in []ir.TensorType, host map[int][]int64, raw map[int][]byte) (c fuzzCall, ok bool) {
	if a == nil {
		a = NewAttrs()
	}
	c = fuzzCall{k: k, attrs: NewAttrs(), in: in, host: map[int][]int64{}, raw: map[int][]byte{}, data: []byte{1, 2, 0, 0}}
	combos := k.Combinations()
	for i, combo := range combos {
		agrees := true
		for _, s := range k.Attrs {
			if d, set := a.Types[s.Name]; set && s.Kind == AttrType {
				if cd, constrained := combo[s.Name]; constrained && cd != d {
					agrees = false
				}
			}
		}
		if agrees {
			c.combo = i
			break
		}
	}
	zero := decodeAttrs(k, combos[c.combo], &reader{})
	for _, s := range k.Attrs {
		switch {
		case attrPresent(a, s):
			copyAttr(c.attrs, a, s)
		case !s.Optional:
			copyAttr(c.attrs, zero, s)
		}
	}
	for i, t := range in {
		if t.Shape.Size() > fuzzMaxElems {
			return c, false
		}
		if k.IsHostInput(c.attrs, i, len(in)) {
			if t.Shape.Size() > fuzzMaxHost || len(host[i]) != t.Shape.Size() {
				return c, false
			}
			c.host[i] = host[i]
		}
	}
	for _, i := range k.ReadPositions(len(in)) {
		if i >= 0 && i < len(in) {
			b := make([]byte, in[i].Bytes())
			copy(b, raw[i])
			c.raw[i] = b
		}
	}
	return c, true
}
