package eval

import (
	"encoding/binary"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// FromBytes reads a value of type t from its little-endian bytes, the layout
// of a constant's literal and of a driver's buffers.
func FromBytes(t ir.TensorType, b []byte) Tensor { return decodeLiteral(t, b) }

// Bytes is the value in its dtype's little-endian layout: what a driver
// writes for the same result.
func (v Tensor) Bytes() []byte {
	d := v.Type.DType
	n := v.Type.Shape.Size()
	out := make([]byte, n*d.Size())
	le := binary.LittleEndian
	for k := range n {
		switch d {
		case ir.F32:
			le.PutUint32(out[4*k:], math.Float32bits(float32(v.F[k])))
		case ir.F64:
			le.PutUint64(out[8*k:], math.Float64bits(v.F[k]))
		case ir.F16:
			le.PutUint16(out[2*k:], ir.F32ToF16(float32(v.F[k])))
		case ir.BF16:
			le.PutUint16(out[2*k:], ir.F32ToBF16(float32(v.F[k])))
		case ir.C64:
			le.PutUint32(out[8*k:], math.Float32bits(float32(real(v.C[k]))))
			le.PutUint32(out[8*k+4:], math.Float32bits(float32(imag(v.C[k]))))
		case ir.I64:
			le.PutUint64(out[8*k:], uint64(v.I[k]))
		case ir.I32, ir.U32:
			le.PutUint32(out[4*k:], uint32(v.I[k]))
		case ir.I16:
			le.PutUint16(out[2*k:], uint16(v.I[k]))
		case ir.I8, ir.U8, ir.Bool:
			out[k] = byte(v.I[k])
		}
	}
	return out
}
