package metal

import (
	"encoding/binary"

	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	registerLowering(lowerConstant, ir.OpConstant)
	registerLowering(lowerIota, ir.OpIota)
	registerLowering(lowerBroadcast, ir.OpBroadcastInDim)
	registerLowering(lowerReshape, ir.OpReshape)
	registerLowering(lowerTranspose, ir.OpTranspose)
	registerLowering(lowerSlice, ir.OpSlice)
	registerLowering(lowerConcat, ir.OpConcat)
	registerLowering(lowerPad, ir.OpPad)
	registerLowering(lowerReverse, ir.OpReverse)
}

// lowerConstant converts the literal to physical form on the host: half
// types are widened exactly to float32 and bools normalized to 0/1, so the
// graph holds no half or bool constants.
func lowerConstant(l *lowering, in ir.Instr, _ []val) (tensor, error) {
	t := in.Type
	lit := in.Literal
	switch t.DType {
	case ir.F16, ir.BF16:
		wide := make([]byte, 0, 2*len(lit))
		for i := 0; i+1 < len(lit); i += 2 {
			h := binary.LittleEndian.Uint16(lit[i:])
			f := ir.F16ToF32(h)
			if t.DType == ir.BF16 {
				f = ir.BF16ToF32(h)
			}
			wide = binary.LittleEndian.AppendUint32(wide, math.Float32bits(f))
		}
		lit = wide
	case ir.Bool:
		norm := make([]byte, len(lit))
		for i, b := range lit {
			if b != 0 {
				norm[i] = 1
			}
		}
		lit = norm
	}
	return l.constBytes(lit, physShape(t), mustPhys(t.DType)), nil
}

// encodePhys writes values in a physical MPS type's little-endian layout.
func encodePhys(dt gpu.DataType, vals []float64) []byte {
	var b []byte
	for _, v := range vals {
		switch dt {
		case gpu.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case gpu.Int8, gpu.UInt8:
			b = append(b, byte(int64(v)))
		case gpu.Int16:
			b = binary.LittleEndian.AppendUint16(b, uint16(int64(v)))
		case gpu.Int32, gpu.UInt32:
			b = binary.LittleEndian.AppendUint32(b, uint32(int64(v)))
		case gpu.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
		}
	}
	return b
}

// lowerIota is a constant 0..n-1 along the axis, broadcast over the rest:
// only n numbers are stored, whatever the shape.
func lowerIota(l *lowering, in ir.Instr, _ []val) (tensor, error) {
	t := in.Type
	if t.DType == ir.C64 || t.DType == ir.Bool {
		return tensor{}, fallback(in.Op, "iota of %v", t.DType)
	}
	axis := in.Axes[0]
	n := t.Shape[axis]
	return l.iotaAlong(t.Shape, axis, mustPhys(t.DType), n), nil
}

// iotaAlong is 0, 1, ... along axis of shape, in type dt.
func (l *lowering) iotaAlong(shape ir.Shape, axis int, dt gpu.DataType, n int) tensor {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(i)
	}
	one := make([]int, len(shape))
	for i := range one {
		one[i] = 1
	}
	one[axis] = n
	c := l.constBytes(encodePhys(dt, vals), one, dt)
	if ir.Shape(one).Equal(shape) {
		return c
	}
	return l.broadcastTo(c, shape)
}

// lowerBroadcast puts operand dim i at result dim Axes[i] (a nil Axes is a
// scalar operand) by a reshape to the result's rank and a broadcast.
func lowerBroadcast(l *lowering, in ir.Instr, args []val) (tensor, error) {
	op := args[0].typ
	shape := make([]int, in.Type.Shape.Rank())
	for i := range shape {
		shape[i] = 1
	}
	for i, d := range in.Axes {
		shape[d] = op.Shape[i]
	}
	if in.Type.DType == ir.C64 {
		shape = append(shape, 2)
	}
	if len(shape) == 0 {
		return l.identity(args[0].t), nil
	}
	x := l.reshape(args[0].t, shape)
	return l.broadcastTo(x, physShape(in.Type)), nil
}

func lowerReshape(l *lowering, in ir.Instr, args []val) (tensor, error) {
	return l.toShape(args[0].t, in.Type), nil
}

// withComplex extends per-dimension attributes with the entry for the
// trailing real/imaginary dimension of a complex64 value.
func withComplex(t ir.TensorType, v []int, last int) []int {
	v = slices.Clone(v)
	if t.DType == ir.C64 {
		v = append(v, last)
	}
	return v
}

func lowerTranspose(l *lowering, in ir.Instr, args []val) (tensor, error) {
	return l.transpose(args[0].t, withComplex(in.Type, in.Axes, len(in.Axes))), nil
}

func lowerSlice(l *lowering, in ir.Instr, args []val) (tensor, error) {
	s := in.Slice
	t := args[0].typ
	if t.Shape.Rank() == 0 {
		return l.identity(args[0].t), nil
	}
	x := l.slice(args[0].t, withComplex(t, s.Start, 0), withComplex(t, s.Limit, 2), withComplex(t, s.Strides, 1))
	return l.toShape(x, in.Type), nil
}

func lowerConcat(l *lowering, in ir.Instr, args []val) (tensor, error) {
	xs := make([]tensor, len(args))
	for i, a := range args {
		xs[i] = a.t
	}
	return l.concat(xs, in.Axes[0]), nil
}

func lowerReverse(l *lowering, in ir.Instr, args []val) (tensor, error) {
	return l.reverse(args[0].t, in.Axes), nil
}

// lowerPad pads with the scalar operand. A constant padding value (the
// usual case) is padded in directly; otherwise the operand is padded with
// zeros alongside a mask of ones, and the mask selects between the padded
// operand and the broadcast value.
func lowerPad(l *lowering, in ir.Instr, args []val) (tensor, error) {
	t := args[0].typ
	pa := in.Pad
	if t.Shape.Rank() == 0 {
		return l.identity(args[0].t), nil
	}
	low := withComplex(t, pa.Low, 0)
	high := withComplex(t, pa.High, 0)
	interior := withComplex(t, pa.Interior, 0)
	if v, ok := l.constantScalar(in.Args[1]); ok && t.DType != ir.C64 {
		return l.padGeneral(args[0].t, physShape(t), low, high, interior, v), nil
	}
	x := l.padGeneral(args[0].t, physShape(t), low, high, interior, 0)
	mask := l.padGeneral(l.full(1, physShape(t), gpu.UInt8), physShape(t), low, high, interior, 0)
	v := l.broadcastTo(args[1].t, physShape(in.Type))
	return l.sel(l.pred(mask), x, v), nil
}

// constantScalar is the value of a constant scalar instruction, in the
// physical type's terms (half types widened, bools 0/1).
func (l *lowering) constantScalar(v ir.Value) (float64, bool) {
	in := l.p.Instrs[v]
	if in.Op != ir.OpConstant || in.Type.Shape.Size() != 1 {
		return 0, false
	}
	b := in.Literal
	switch in.Type.DType {
	case ir.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
	case ir.F16:
		return float64(ir.F16ToF32(binary.LittleEndian.Uint16(b))), true
	case ir.BF16:
		return float64(ir.BF16ToF32(binary.LittleEndian.Uint16(b))), true
	case ir.I8:
		return float64(int8(b[0])), true
	case ir.U8:
		return float64(b[0]), true
	case ir.Bool:
		if b[0] != 0 {
			return 1, true
		}
		return 0, true
	case ir.I16:
		return float64(int16(binary.LittleEndian.Uint16(b))), true
	case ir.I32:
		return float64(int32(binary.LittleEndian.Uint32(b))), true
	case ir.I64:
		x := int64(binary.LittleEndian.Uint64(b))
		if x > -(1<<53) && x < 1<<53 {
			return float64(x), true
		}
	}
	return 0, false
}

// padGeneral is StableHLO's pad with a constant: interior padding between
// neighbours, then low and high padding, negative amounts cropping. shape is
// x's physical shape; every slice has one entry per physical dimension.
func (l *lowering) padGeneral(x tensor, shape, low, high, interior []int, v float64) tensor {
	shape = slices.Clone(shape)
	for d, k := range interior {
		n := shape[d]
		if k == 0 || n < 2 {
			continue
		}
		// [.., n, ..] -> [.., n, 1, ..] -> pad the new dim to k+1 ->
		// [.., n*(k+1), ..] -> drop the k after the last element.
		split := slices.Insert(slices.Clone(shape), d+1, 1)
		x = l.reshape(x, split)
		lo, hi := make([]int, len(split)), make([]int, len(split))
		hi[d+1] = k
		x = l.padConst(x, lo, hi, v)
		merged := slices.Clone(shape)
		merged[d] = n * (k + 1)
		x = l.reshape(x, merged)
		shape[d] = n + (n-1)*k
		starts, ends, strides := make([]int, len(shape)), slices.Clone(shape), ones(len(shape))
		x = l.slice(x, starts, ends, strides)
	}
	plo, phi := make([]int, len(shape)), make([]int, len(shape))
	crop := false
	grow := false
	for d := range shape {
		plo[d], phi[d] = max(low[d], 0), max(high[d], 0)
		grow = grow || plo[d] > 0 || phi[d] > 0
		crop = crop || low[d] < 0 || high[d] < 0
	}
	if grow {
		x = l.padConst(x, plo, phi, v)
		for d := range shape {
			shape[d] += plo[d] + phi[d]
		}
	}
	if crop {
		starts, ends := make([]int, len(shape)), slices.Clone(shape)
		for d := range shape {
			starts[d] = max(-low[d], 0)
			ends[d] = shape[d] - max(-high[d], 0)
		}
		x = l.slice(x, starts, ends, ones(len(shape)))
	}
	return x
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}
