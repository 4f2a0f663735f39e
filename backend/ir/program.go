package ir

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Value names the result of one instruction: its index in Program.Instrs.
type Value int

// Instr is one SSA instruction. Only the attribute fields its Op documents are
// set; the rest stay zero.
type Instr struct {
	Op   Op
	Args []Value
	Type TensorType // the result's type

	Param   int            // OpParameter: which input
	Literal []byte         // OpConstant: row-major little-endian elements
	Axes    []int          // OpReduce axes, OpBroadcastInDim dims, OpTranspose perm, OpConcat/OpIota/OpArgReduce axis, OpReverse dims
	Reduce  ReduceKind     // OpReduce, OpReduceWindow, OpArgReduce (max or min)
	Compare CompareDir     // OpCompare; OpSelectAndScatter (GE picks the max, LE the min)
	Dot     *DotDims       // OpDotGeneral
	Conv    *ConvAttrs     // OpConvolution
	Window  *WindowAttrs   // OpReduceWindow, OpSelectAndScatter
	Slice   *SliceAttrs    // OpSlice
	Pad     *PadAttrs      // OpPad; Args[1] is the scalar padding value
	Gather  *GatherDims    // OpGather
	Scatter *ScatterDims   // OpScatter
	Sort    *SortAttrs     // OpSort, OpArgSort
	Rng     *RngAttrs      // OpRng
	FFT     *FFTAttrs      // OpFFT
	Linalg  *LinalgAttrs   // OpCholesky, OpTriangularSolve, OpEigh, OpSvd, OpTridiagonal
	Host    *HostCallAttrs // OpHostCall

	Regions []*Program // OpWhile (cond, body), OpCase (branches), OpCall (callee)
	// Loc is where the frontend's source wrote the instruction (jax's
	// "jit(f)/mul at model.py:12:8"), for messages only: neither String
	// nor Key prints it, so it never tells two programs apart.
	Loc string

	Tuple []TensorType // the results of the region ops (OpWhile, OpCase, OpCall, ...) and of OpQr, OpEigh, OpLu, OpSvd, OpEig, OpHessenberg, OpTridiagonal, OpQrPivoted, OpSchur and OpHostCall, whose own Type is unset
}

// Program is a straight-line computation: parameters in, results out. A
// program is not changed once it has been verified (Verify remembers that
// it passed): a pass that changes one makes a new Program.
type Program struct {
	Params  []TensorType
	Instrs  []Instr
	Results []Value

	// verified is what Normalize found of the program when it passed, so
	// that the frontend, the rewrites, the split layer and the driver
	// that each accept it verify it once between them.
	verified atomic.Pointer[normalForm]
}

// ResultTypes are the types of the program's outputs, in order.
func (p *Program) ResultTypes() []TensorType {
	ts := make([]TensorType, len(p.Results))
	for i, v := range p.Results {
		ts[i] = p.Instrs[v].Type
	}
	return ts
}

// Type is the type of value v.
func (p *Program) Type(v Value) TensorType { return p.Instrs[v].Type }

// String prints the program one instruction per line: two programs with the
// same text and parameters compute the same thing (Key hashes both).
func (p *Program) String() string {
	var b strings.Builder
	for i, in := range p.Instrs {
		fmt.Fprintf(&b, "%%%d = %s", i, in.Op)
		for _, a := range in.Args {
			fmt.Fprintf(&b, " %%%d", a)
		}
		switch in.Op {
		case OpParameter, OpGetResult:
			fmt.Fprintf(&b, " #%d", in.Param)
		case OpConstant:
			fmt.Fprintf(&b, " 0x%x", in.Literal)
		}
		// Every field that can change what an instruction computes is
		// printed when set, whatever the op, so that the text (and Key)
		// tells apart any two programs that differ.
		if in.Reduce != 0 {
			fmt.Fprintf(&b, " %s", in.Reduce)
		}
		if in.Compare != 0 {
			fmt.Fprintf(&b, " %s", in.Compare)
		}
		if in.Axes != nil {
			fmt.Fprintf(&b, " axes=%v", in.Axes)
		}
		if in.Dot != nil {
			fmt.Fprintf(&b, " dot=%+v", *in.Dot)
		}
		if in.Conv != nil {
			fmt.Fprintf(&b, " conv=%+v", *in.Conv)
		}
		if in.Window != nil {
			fmt.Fprintf(&b, " window=%+v", *in.Window)
		}
		if in.Slice != nil {
			fmt.Fprintf(&b, " slice=%+v", *in.Slice)
		}
		if in.Pad != nil {
			fmt.Fprintf(&b, " pad=%+v", *in.Pad)
		}
		if in.Gather != nil {
			fmt.Fprintf(&b, " gather=%+v", *in.Gather)
		}
		if in.Scatter != nil {
			fmt.Fprintf(&b, " scatter=%+v", *in.Scatter)
		}
		if in.Sort != nil {
			fmt.Fprintf(&b, " sort=%+v", *in.Sort)
		}
		if in.Rng != nil {
			fmt.Fprintf(&b, " rng=%+v", *in.Rng)
		}
		if in.FFT != nil {
			fmt.Fprintf(&b, " fft=%+v", *in.FFT)
		}
		if in.Linalg != nil {
			fmt.Fprintf(&b, " linalg=%+v", *in.Linalg)
		}
		if in.Host != nil {
			fmt.Fprintf(&b, " host=%d", in.Host.ID)
		}
		if in.Tuple != nil {
			fmt.Fprintf(&b, " : %v\n", in.Tuple)
		} else {
			fmt.Fprintf(&b, " : %s\n", in.Type)
		}
		for r, region := range in.Regions {
			fmt.Fprintf(&b, "  region %d params %v {\n", r, region.Params)
			for _, line := range strings.Split(region.String(), "\n") {
				fmt.Fprintf(&b, "    %s\n", line)
			}
			b.WriteString("  }\n")
		}
	}
	fmt.Fprintf(&b, "return")
	for _, r := range p.Results {
		fmt.Fprintf(&b, " %%%d", r)
	}
	return b.String()
}

// Size is the program's instructions, its regions' included: what a
// compiled program's memory grows with, by which the drivers' caches weigh
// their entries.
func (p *Program) Size() int {
	n := len(p.Instrs)
	for _, in := range p.Instrs {
		for _, r := range in.Regions {
			n += r.Size()
		}
	}
	return n
}
