package ir

import (
	"fmt"
	"slices"
)

// OpInfo is everything the IR knows of one op, in one place: its name, how
// many operands it takes, which attribute fields of Instr it reads, and how
// its result type follows from its operands (by replaying it through the
// Builder, whose checks are the IR's rules).
type OpInfo struct {
	Name  string
	Arity int      // operand count, or Variadic
	Attrs []string // Instr fields read beyond Args and Type
	// infer rebuilds in on b from its rebuilt operands; the builder checks
	// the operands and attributes and infers the result type.
	infer func(b *Builder, p *Program, in Instr, args []Value) (Value, error)
}

// HasRegions reports whether o's instructions hold sub-programs (and yield a
// tuple).
func (o Op) HasRegions() bool {
	info, ok := o.Info()
	return ok && slices.Contains(info.Attrs, "Regions")
}

// YieldsTuple reports whether o's instructions yield a tuple of results
// (the region ops, and the decompositions with several results), which
// OpGetResult takes apart.
func (o Op) YieldsTuple() bool {
	info, ok := o.Info()
	return ok && slices.Contains(info.Attrs, "Tuple")
}

// Variadic is the Arity of an op that takes one or more operands.
const Variadic = -1

// Info is o's table entry; ok is false for an op the IR does not have.
func (o Op) Info() (OpInfo, bool) {
	if o <= OpInvalid || o >= numOps {
		return OpInfo{}, false
	}
	return opTable[o], true
}

// String is the op's StableHLO-style name.
func (o Op) String() string {
	if info, ok := o.Info(); ok {
		return info.Name
	}
	return fmt.Sprintf("op(%d)", uint16(o))
}

func unaryOp(name string) OpInfo {
	return OpInfo{Name: name, Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Unary(in.Op, a[0]), nil
	}}
}

func binaryOp(name string) OpInfo {
	return OpInfo{Name: name, Arity: 2, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
		return b.Binary(in.Op, a[0], a[1]), nil
	}}
}

// missing is the error of an instruction that lacks an attribute its op needs.
func missing(what string) error { return fmt.Errorf("missing %s", what) }

// singleAxis is Axes[0] of an op that takes one axis, or -1 (which the
// builder rejects) when there is not exactly one.
func singleAxis(in Instr) int {
	if len(in.Axes) != 1 {
		return -1
	}
	return in.Axes[0]
}

// opTable is filled by init: the region ops' inference verifies their
// regions, which reads the table.
var opTable [numOps]OpInfo

func init() { opTable = opEntries() }

func opEntries() [numOps]OpInfo {
	return [numOps]OpInfo{
		OpParameter: {Name: "parameter", Arity: 0, Attrs: []string{"Param"}, infer: func(b *Builder, p *Program, in Instr, _ []Value) (Value, error) {
			if in.Param < 0 || in.Param >= len(p.Params) {
				return 0, fmt.Errorf("parameter #%d of a program with %d", in.Param, len(p.Params))
			}
			if pt := p.Params[in.Param]; pt.DType != in.Type.DType || !pt.Shape.Equal(in.Type.Shape) {
				return 0, fmt.Errorf("parameter #%d is declared %v but typed %v", in.Param, pt, in.Type)
			}
			return b.Parameter(in.Type), nil
		}},
		OpConstant: {Name: "constant", Arity: 0, Attrs: []string{"Literal"}, infer: func(b *Builder, _ *Program, in Instr, _ []Value) (Value, error) {
			return b.Constant(in.Type, in.Literal), nil
		}},
		OpIota: {Name: "iota", Arity: 0, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, _ []Value) (Value, error) {
			return b.Iota(in.Type, singleAxis(in)), nil
		}},

		OpNeg: unaryOp("negate"), OpAbs: unaryOp("abs"), OpExp: unaryOp("exponential"), OpLog: unaryOp("log"),
		OpSqrt: unaryOp("sqrt"), OpRsqrt: unaryOp("rsqrt"), OpTanh: unaryOp("tanh"), OpLogistic: unaryOp("logistic"),
		OpFloor: unaryOp("floor"), OpCeil: unaryOp("ceil"), OpSign: unaryOp("sign"), OpErf: unaryOp("erf"),
		OpLog1p: unaryOp("log_plus_one"), OpExpm1: unaryOp("exponential_minus_one"), OpRound: unaryOp("round_nearest_even"),
		OpSin: unaryOp("sine"), OpCos: unaryOp("cosine"), OpNot: unaryOp("not"),

		OpAdd: binaryOp("add"), OpSub: binaryOp("subtract"), OpMul: binaryOp("multiply"), OpDiv: binaryOp("divide"),
		OpRem: binaryOp("remainder"), OpMax: binaryOp("maximum"), OpMin: binaryOp("minimum"), OpPow: binaryOp("power"),
		OpAnd: binaryOp("and"), OpOr: binaryOp("or"), OpXor: binaryOp("xor"), OpShiftLeft: binaryOp("shift_left"),
		OpShiftRightLogical: binaryOp("shift_right_logical"), OpShiftRightArithmetic: binaryOp("shift_right_arithmetic"),

		OpCompare: {Name: "compare", Arity: 2, Attrs: []string{"Compare"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Compare(in.Compare, a[0], a[1]), nil
		}},
		OpSelect: {Name: "select", Arity: 3, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
			return b.Select(a[0], a[1], a[2]), nil
		}},
		OpConvert: {Name: "convert", Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Convert(a[0], in.Type.DType), nil
		}},
		OpBitcastConvert: {Name: "bitcast_convert", Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.BitcastConvert(a[0], in.Type.DType), nil
		}},

		OpReal: {Name: "real", Arity: 1, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
			return b.Real(a[0]), nil
		}},
		OpImag: {Name: "imag", Arity: 1, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
			return b.Imag(a[0]), nil
		}},
		OpComplex: {Name: "complex", Arity: 2, infer: func(b *Builder, _ *Program, _ Instr, a []Value) (Value, error) {
			return b.Complex(a[0], a[1]), nil
		}},

		OpBroadcastInDim: {Name: "broadcast_in_dim", Arity: 1, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			dims := in.Axes
			if dims == nil {
				dims = []int{} // nil asks the builder for numpy alignment; an instruction means rank 0
			}
			return b.BroadcastInDim(a[0], in.Type.Shape, dims), nil
		}},
		OpReshape: {Name: "reshape", Arity: 1, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Reshape(a[0], in.Type.Shape), nil
		}},
		OpTranspose: {Name: "transpose", Arity: 1, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Transpose(a[0], in.Axes), nil
		}},
		OpSlice: {Name: "slice", Arity: 1, Attrs: []string{"Slice"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Slice == nil {
				return 0, missing("slice attributes")
			}
			return b.Slice(a[0], in.Slice.Start, in.Slice.Limit, in.Slice.Strides), nil
		}},
		OpConcat: {Name: "concatenate", Arity: Variadic, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Concat(singleAxis(in), a...), nil
		}},
		OpPad: {Name: "pad", Arity: 2, Attrs: []string{"Pad"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Pad == nil {
				return 0, missing("pad attributes")
			}
			return b.Pad(a[0], a[1], in.Pad.Low, in.Pad.High, in.Pad.Interior), nil
		}},

		OpDotGeneral: {Name: "dot_general", Arity: 2, Attrs: []string{"Dot"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Dot == nil {
				return 0, missing("dot dimension numbers")
			}
			return b.DotGeneral(a[0], a[1], *in.Dot), nil
		}},
		OpConvolution: {Name: "convolution", Arity: 2, Attrs: []string{"Conv"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Conv == nil {
				return 0, missing("convolution attributes")
			}
			return b.Convolution(a[0], a[1], *in.Conv), nil
		}},
		OpReduce: {Name: "reduce", Arity: 1, Attrs: []string{"Reduce", "Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Reduce(a[0], in.Reduce, in.Axes), nil
		}},
		OpReduceWindow: {Name: "reduce_window", Arity: 1, Attrs: []string{"Reduce", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Window == nil {
				return 0, missing("window attributes")
			}
			return b.ReduceWindow(a[0], in.Reduce, *in.Window), nil
		}},

		OpReverse: {Name: "reverse", Arity: 1, Attrs: []string{"Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Reverse(a[0], in.Axes), nil
		}},
		OpGather: {Name: "gather", Arity: 2, Attrs: []string{"Gather"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Gather == nil {
				return 0, missing("gather dimension numbers")
			}
			return b.Gather(a[0], a[1], *in.Gather), nil
		}},
		OpScatter: {Name: "scatter", Arity: 3, Attrs: []string{"Scatter"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Scatter == nil {
				return 0, missing("scatter dimension numbers")
			}
			return b.Scatter(a[0], a[1], a[2], *in.Scatter), nil
		}},
		OpSort: {Name: "sort", Arity: 1, Attrs: []string{"Sort"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Sort == nil {
				return 0, missing("sort attributes")
			}
			return b.Sort(a[0], *in.Sort), nil
		}},
		OpArgSort: {Name: "arg_sort", Arity: 1, Attrs: []string{"Sort"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Sort == nil {
				return 0, missing("sort attributes")
			}
			return b.ArgSort(a[0], *in.Sort, in.Type.DType), nil
		}},
		OpArgReduce: {Name: "arg_reduce", Arity: 1, Attrs: []string{"Reduce", "Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.ArgReduce(a[0], in.Reduce, singleAxis(in), in.Type.DType), nil
		}},
		OpSelectAndScatter: {Name: "select_and_scatter", Arity: 2, Attrs: []string{"Compare", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Window == nil {
				return 0, missing("window attributes")
			}
			return b.SelectAndScatter(a[0], a[1], in.Compare, *in.Window), nil
		}},
		OpRng: {Name: "rng", Arity: 2, Attrs: []string{"Rng"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Rng == nil {
				return 0, missing("rng attributes")
			}
			return b.Rng(a[0], a[1], in.Rng.Distribution, in.Type), nil
		}},
		OpWhile: {Name: "while", Arity: Variadic, Attrs: []string{"Regions", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 2 {
				return 0, fmt.Errorf("%d regions, want cond and body", len(in.Regions))
			}
			return b.While(in.Regions[0], in.Regions[1], a...), nil
		}},
		OpCase: {Name: "case", Arity: Variadic, Attrs: []string{"Regions", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Case(a[0], in.Regions, a[1:]...), nil
		}},
		OpCall: {Name: "call", Arity: Variadic, Attrs: []string{"Regions", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 1 {
				return 0, fmt.Errorf("%d regions, want the callee", len(in.Regions))
			}
			return b.Call(in.Regions[0], a...), nil
		}},
		OpGetResult: {Name: "get_result", Arity: 1, Attrs: []string{"Param"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.GetResult(a[0], in.Param), nil
		}},
		OpReduceRegion: {Name: "reduce_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Axes"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 1 || len(a)%2 != 0 {
				return 0, fmt.Errorf("%d operands and %d regions, want operands and inits in pairs and one body", len(a), len(in.Regions))
			}
			n := len(a) / 2
			return b.ReduceRegion(in.Regions[0], a[:n], a[n:], in.Axes), nil
		}},
		OpSortRegion: {Name: "sort_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Sort"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 1 || in.Sort == nil {
				return 0, missing("the comparator or the sort dimension")
			}
			return b.SortRegion(in.Regions[0], in.Sort.Dim, a...), nil
		}},
		OpScatterRegion: {Name: "scatter_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Scatter"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 1 || len(a)%2 != 1 || in.Scatter == nil {
				return 0, fmt.Errorf("%d operands and %d regions, want N operands, the indices, N updates, the body and dimension numbers", len(a), len(in.Regions))
			}
			n := len(a) / 2
			return b.ScatterRegion(in.Regions[0], a[:n], a[n], a[n+1:], *in.Scatter), nil
		}},
		OpReduceWindowRegion: {Name: "reduce_window_region", Arity: Variadic, Attrs: []string{"Regions", "Tuple", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 1 || len(a)%2 != 0 || in.Window == nil {
				return 0, fmt.Errorf("%d operands and %d regions, want operands and inits in pairs, one body and a window", len(a), len(in.Regions))
			}
			n := len(a) / 2
			return b.ReduceWindowRegion(in.Regions[0], a[:n], a[n:], *in.Window), nil
		}},
		OpSelectAndScatterRegion: {Name: "select_and_scatter_region", Arity: 3, Attrs: []string{"Regions", "Tuple", "Window"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if len(in.Regions) != 2 || in.Window == nil {
				return 0, fmt.Errorf("%d regions, want select and scatter, and a window", len(in.Regions))
			}
			return b.SelectAndScatterRegion(in.Regions[0], in.Regions[1], a[0], a[1], a[2], *in.Window), nil
		}},
		OpCholesky: {Name: "cholesky", Arity: 1, Attrs: []string{"Linalg"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Linalg == nil {
				return 0, missing("linalg attributes (lower)")
			}
			return b.Cholesky(a[0], in.Linalg.Lower), nil
		}},
		OpTriangularSolve: {Name: "triangular_solve", Arity: 2, Attrs: []string{"Linalg"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Linalg == nil {
				return 0, missing("linalg attributes (left_side, lower, unit_diagonal, transpose)")
			}
			return b.TriangularSolve(a[0], a[1], *in.Linalg), nil
		}},
		OpQr: {Name: "qr", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Qr(a[0]), nil
		}},
		OpHouseholderProduct: {Name: "householder_product", Arity: 2, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.HouseholderProduct(a[0], a[1]), nil
		}},
		OpEigh: {Name: "eigh", Arity: 1, Attrs: []string{"Linalg", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Linalg == nil {
				return 0, missing("linalg attributes (lower)")
			}
			return b.Eigh(a[0], in.Linalg.Lower), nil
		}},
		OpLu: {Name: "lu", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Lu(a[0]), nil
		}},
		OpSvd: {Name: "svd", Arity: 1, Attrs: []string{"Linalg", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Linalg == nil {
				return 0, missing("linalg attributes (full_matrices)")
			}
			return b.Svd(a[0], in.Linalg.FullMatrices), nil
		}},
		OpEig: {Name: "eig", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Eig(a[0]), nil
		}},
		OpHessenberg: {Name: "hessenberg", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Hessenberg(a[0]), nil
		}},
		OpTridiagonal: {Name: "tridiagonal", Arity: 1, Attrs: []string{"Linalg", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Linalg == nil {
				return 0, missing("linalg attributes (lower)")
			}
			return b.Tridiagonal(a[0], in.Linalg.Lower), nil
		}},
		OpQrPivoted: {Name: "qr_pivoted", Arity: 2, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.QrPivoted(a[0], a[1]), nil
		}},
		OpSchur: {Name: "schur", Arity: 1, Attrs: []string{"Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			return b.Schur(a[0]), nil
		}},
		OpHostCall: {Name: "host_call", Arity: Variadic, Attrs: []string{"Host", "Tuple"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.Host == nil {
				return 0, missing("the host function's id")
			}
			if len(in.Tuple) == 0 {
				return 0, fmt.Errorf("no results: the first is the token after the call")
			}
			return b.HostCall(in.Host.ID, a[0], a[1:], in.Tuple[1:]), nil
		}},
		OpFFT: {Name: "fft", Arity: 1, Attrs: []string{"FFT"}, infer: func(b *Builder, _ *Program, in Instr, a []Value) (Value, error) {
			if in.FFT == nil {
				return 0, missing("fft attributes")
			}
			return b.FFT(a[0], in.FFT.Kind, in.FFT.Length), nil
		}},
	}
}
