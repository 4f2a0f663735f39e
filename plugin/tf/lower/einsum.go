package lower

import (
	"slices"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
)

// Einsum (tensorflow/core/kernels/linalg/einsum_op_impl.h): one or two
// operands. Repeated labels within an operand take the diagonal, labels in one
// operand only and not in the output are summed first, labels in both
// operands become dot_general batch (kept) or contracting (summed) dims, and
// a transpose orders the result. Ellipsis dims broadcast numpy-style; named
// labels must agree in size exactly, as in TensorFlow.

func init() {
	register(Kernel{Op: "Einsum", Constraints: T(Floats), Inputs: []string{"inputs"}, Lower: lowerEinsum,
		Attrs: []AttrSpec{{Name: "equation", Kind: AttrString}}})
}

// Labels are positive for letters (the rune) and negative for ellipsis dims:
// -k is the k-th dim from the right of the broadcast ellipsis.
const ellipsisToken = 0

// parseSubscript splits one operand's subscript into letters and at most one
// ellipsis (ellipsisToken).
func parseSubscript(c *Call, s, eq string) ([]int, error) {
	var toks []int
	seen := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			toks = append(toks, int(ch))
		case ch == '.':
			if !strings.HasPrefix(s[i:], "...") || seen {
				return nil, c.Errorf("equation %q: bad ellipsis in %q (inputs %s)", eq, s, c.Inputs())
			}
			seen = true
			toks = append(toks, ellipsisToken)
			i += 2
		default:
			return nil, c.Errorf("equation %q: unexpected character %q (inputs %s)", eq, ch, c.Inputs())
		}
	}
	return toks, nil
}

// expand replaces the ellipsis token by e labels -e..-1.
func expand(toks []int, e int) []int {
	var out []int
	for _, t := range toks {
		if t == ellipsisToken {
			for j := e; j >= 1; j-- {
				out = append(out, -j)
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

type einsumOperand struct {
	v      ir.Value
	labels []int
}

func lowerEinsum(c *Call) error {
	eq := strings.ReplaceAll(c.Attrs.String("equation", ""), " ", "")
	n := len(c.In)
	if n < 1 || n > 2 {
		return c.Errorf("equation %q: %d operands; only 1 or 2 are supported (inputs %s)", eq, n, c.Inputs())
	}
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != n {
		return c.Errorf("equation %q names %d operands, got %d (inputs %s)", eq, len(terms), n, c.Inputs())
	}
	ops := make([]einsumOperand, n)
	sizes := map[int]int{}
	ell := 0 // rank of the broadcast ellipsis
	count := map[int]int{}
	for i, term := range terms {
		toks, err := parseSubscript(c, term, eq)
		if err != nil {
			return err
		}
		t := c.Type(i)
		named := len(toks)
		if slices.Contains(toks, ellipsisToken) {
			named--
		}
		e := t.Shape.Rank() - named
		if e < 0 || (e > 0 && !slices.Contains(toks, ellipsisToken)) {
			return c.Errorf("equation %q: subscript %q does not fit operand %d of shape %v", eq, term, i, t)
		}
		ell = max(ell, e)
		labels := expand(toks, e)
		for j, l := range labels {
			d := t.Shape[j]
			if s, ok := sizes[l]; ok && s != d {
				if l > 0 || (s != 1 && d != 1) {
					return c.Errorf("equation %q: label %s has sizes %d and %d (inputs %s)", eq, labelName(l), s, d, c.Inputs())
				}
				d = max(s, d)
			}
			sizes[l] = d
		}
		for _, l := range slices.Compact(slices.Sorted(slices.Values(labels))) {
			count[l]++
		}
		ops[i] = einsumOperand{c.In[i], labels}
	}
	var out []int
	if explicit {
		toks, err := parseSubscript(c, rhs, eq)
		if err != nil {
			return err
		}
		out = expand(toks, ell)
	} else {
		// numpy's implicit output: the ellipsis, then letters used once, sorted.
		out = expand([]int{ellipsisToken}, ell)
		var once []int
		for l, k := range count {
			if l > 0 && k == 1 && !repeatedIn(ops, l) {
				once = append(once, l)
			}
		}
		slices.Sort(once)
		out = append(out, once...)
	}
	for i, l := range out {
		if _, ok := sizes[l]; !ok || slices.Index(out, l) != i {
			return c.Errorf("equation %q: output label %s is repeated or absent from the inputs (inputs %s)", eq, labelName(l), c.Inputs())
		}
	}
	b := c.B
	for i := range ops {
		ops[i] = diagonal(b, ops[i])
		// Sum the labels no other operand and not the output needs.
		var sum []int
		for j, l := range ops[i].labels {
			if !slices.Contains(out, l) && !(n == 2 && slices.Contains(ops[1-i].labels, l)) {
				sum = append(sum, j)
			}
		}
		if len(sum) > 0 {
			ops[i] = einsumOperand{sumAxes(b, ops[i].v, sum), dropIndices(ops[i].labels, sum)}
		}
	}
	var res einsumOperand
	if n == 1 {
		res = ops[0]
	} else {
		res = contract(b, ops[0], ops[1], out, sizes)
	}
	perm := make([]int, len(out))
	for i, l := range out {
		perm[i] = slices.Index(res.labels, l)
	}
	if len(res.labels) != len(out) || slices.Contains(perm, -1) {
		return c.Errorf("equation %q: cannot form the output from the inputs %s", eq, c.Inputs())
	}
	y := b.Transpose(res.v, perm)
	// An ellipsis dim of size 1 in every operand that holds it, but broadcast
	// elsewhere, cannot occur here: contract broadcasts shared labels.
	c.Out = []ir.Value{y}
	return nil
}

func labelName(l int) string {
	if l < 0 {
		return "..."
	}
	return string(rune(l))
}

func repeatedIn(ops []einsumOperand, l int) bool {
	for _, o := range ops {
		k := 0
		for _, x := range o.labels {
			if x == l {
				k++
			}
		}
		if k > 1 {
			return true
		}
	}
	return false
}

// diagonal folds repeated labels of one operand: x[..i..i..] keeps the
// entries where the two indices agree, summed over the second (so the rest,
// zeros, add nothing).
func diagonal(b *ir.Builder, o einsumOperand) einsumOperand {
	for {
		a, d := -1, -1
		for i := 0; i < len(o.labels) && a < 0; i++ {
			for j := i + 1; j < len(o.labels); j++ {
				if o.labels[i] == o.labels[j] {
					a, d = i, j
					break
				}
			}
		}
		if a < 0 {
			return o
		}
		t := b.Type(o.v)
		it := ir.TensorType{DType: ir.I32, Shape: t.Shape}
		mask := b.Compare(ir.CmpEQ, b.Iota(it, a), b.Iota(it, d))
		v := b.Select(mask, o.v, b.Full(t, 0))
		o = einsumOperand{sumAxes(b, v, []int{d}), dropIndices(o.labels, []int{d})}
	}
}

func sumAxes(b *ir.Builder, v ir.Value, axes []int) ir.Value {
	d := b.Type(v).DType
	return b.Convert(b.Reduce(b.Convert(v, accType(d)), ir.ReduceSum, axes), d)
}

func dropIndices(labels []int, idx []int) []int {
	var out []int
	for i, l := range labels {
		if !slices.Contains(idx, i) {
			out = append(out, l)
		}
	}
	return out
}

// contract multiplies two operands with dot_general: shared labels in the
// output are batch dims, the other shared labels are summed.
func contract(b *ir.Builder, x, y einsumOperand, out []int, sizes map[int]int) einsumOperand {
	// Broadcast size-1 ellipsis dims to the shared size.
	grow := func(o einsumOperand) einsumOperand {
		s := b.Type(o.v).Shape.Clone()
		for i, l := range o.labels {
			s[i] = sizes[l]
		}
		return einsumOperand{b.BroadcastInDim(o.v, s, seq(len(s))), o.labels}
	}
	x, y = grow(x), grow(y)
	var dims ir.DotDims
	var labels []int
	for i, l := range x.labels {
		j := slices.Index(y.labels, l)
		if j < 0 {
			continue
		}
		if slices.Contains(out, l) {
			dims.LhsBatch = append(dims.LhsBatch, i)
			dims.RhsBatch = append(dims.RhsBatch, j)
			labels = append(labels, l)
		} else {
			dims.LhsContract = append(dims.LhsContract, i)
			dims.RhsContract = append(dims.RhsContract, j)
		}
	}
	for _, l := range x.labels {
		if !slices.Contains(y.labels, l) {
			labels = append(labels, l)
		}
	}
	for _, l := range y.labels {
		if !slices.Contains(x.labels, l) {
			labels = append(labels, l)
		}
	}
	return einsumOperand{b.DotGeneral(x.v, y.v, dims), labels}
}
