package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Shape cases of the image, patch, pooling-extra and RNN families
// (image.go, patches.go, pool_argmax.go, rnn.go).

func init() {
	familyShapeCases = append(familyShapeCases, imageShapeCases)
	pool := func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		a.Is("ksize", 1, 2, 2, 1).Is("strides", 1, 2, 2, 1).S("padding", "SAME")
		return []ir.TensorType{tt(combo["T"], 2, 5, 4, 3)}, nil, nil
	}
	familyMultiCases["MaxPoolWithArgmax"] = pool
	grad := func(out ...int) multiCase {
		return func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			a.Is("ksize", 1, 2, 2, 1).Is("strides", 1, 2, 2, 1).S("padding", "SAME")
			d := combo["T"]
			return []ir.TensorType{tt(d, 2, 5, 4, 3), tt(d, out...), i64(2, 3, 2, 3)}, nil, nil
		}
	}
	familyMultiCases["MaxPoolGradWithArgmax"] = grad(2, 3, 2, 3)
	familyMultiCases["MaxPoolGradGradWithArgmax"] = grad(2, 5, 4, 3)
	for _, op := range []string{"NonMaxSuppressionV3", "NonMaxSuppressionV4"} {
		familyMultiCases[op] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			in, host, raw := nmsCase(5)
			return in, host, raw
		}
	}
	for _, op := range []string{"ImageProjectiveTransformV2", "ImageProjectiveTransformV3"} {
		v3 := op == "ImageProjectiveTransformV3"
		familyMultiCases[op] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
			a.S("interpolation", "BILINEAR").S("fill_mode", "WRAP")
			in := []ir.TensorType{tt(combo["dtype"], 2, 5, 4, 3), f32(2, 8), i32(2)}
			if v3 {
				in = append(in, f32())
			}
			return in, h(2, v(3, 6)), nil
		}
	}
	familyMultiCases["MirrorPadGrad"] = func(combo map[string]ir.DType, a attrs) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
		a.S("mode", "REFLECT")
		return []ir.TensorType{tt(combo["T"], 7, 5), tt(combo["Tpaddings"], 2, 2)}, h(1, v(1, 2, 0, 1)), nil
	}
}

// nmsCase is three boxes, the first two overlapping (IOU 0.6), and the
// thresholds, for n inputs.
func nmsCase(n int) ([]ir.TensorType, map[int][]int64, map[int][]byte) {
	in := []ir.TensorType{f32(3, 4), f32(3), i32(), f32(), f32()}[:n]
	raw := map[int][]byte{0: f32bytes(0, 0, 1, 1, 0, 0.25, 1, 1.25, 2, 2, 3, 3), 1: f32bytes(0.9, 0.8, 0.7), 3: f32bytes(0.5), 4: f32bytes(0.75)}
	if n == 4 {
		delete(raw, 4)
	}
	return in, h(2, 10), raw
}

func imageShapeCases() []shapeCase {
	var cs []shapeCase
	add := func(c shapeCase) { cs = append(cs, c) }
	win := func() attrs { return A().Is("ksize", 1, 3, 3, 1).Is("strides", 1, 2, 2, 1).S("padding", "SAME") }
	add(shapeCase{op: "MaxPoolWithArgmax", attrs: win(), in: []ir.TensorType{f32(2, 7, 6, 3)}, out: []ir.TensorType{f32(2, 4, 3, 3), i64(2, 4, 3, 3)}})
	add(shapeCase{op: "MaxPoolGradWithArgmax", attrs: win().B("include_batch_in_index", true),
		in: []ir.TensorType{f32(2, 7, 6, 3), f32(2, 4, 3, 3), i64(2, 4, 3, 3)}, out: []ir.TensorType{f32(2, 7, 6, 3)}})
	add(shapeCase{op: "MaxPoolGradGradWithArgmax", attrs: win(),
		in: []ir.TensorType{f32(2, 7, 6, 3), f32(2, 7, 6, 3), i64(2, 4, 3, 3)}, out: []ir.TensorType{f32(2, 4, 3, 3)}})
	add(shapeCase{op: "MaxPoolGradGrad", attrs: win(), in: []ir.TensorType{f32(2, 7, 6, 3), f32(2, 4, 3, 3), f32(2, 7, 6, 3)},
		out: []ir.TensorType{f32(2, 4, 3, 3)}})
	add(shapeCase{op: "MaxPoolGradGradV2", attrs: A().S("padding", "VALID"), in: []ir.TensorType{f32(2, 7, 6, 3), f32(2, 3, 3, 3), f32(2, 7, 6, 3), i32(4), i32(4)},
		host: h(3, v(1, 2, 2, 1), 4, v(1, 2, 2, 1)), out: []ir.TensorType{f32(2, 3, 3, 3)}})
	add(shapeCase{op: "MaxPool3DGradGrad", attrs: A().Is("ksize", 1, 2, 2, 2, 1).Is("strides", 1, 2, 2, 2, 1).S("padding", "VALID"),
		in: []ir.TensorType{f32(2, 4, 5, 6, 3), f32(2, 2, 2, 3, 3), f32(2, 4, 5, 6, 3)}, out: []ir.TensorType{f32(2, 2, 2, 3, 3)}})
	add(shapeCase{op: "MirrorPadGrad", attrs: A().S("mode", "SYMMETRIC"), in: []ir.TensorType{f32(9, 6), i32(2, 2)}, host: h(1, v(2, 3, 0, 1)),
		out: []ir.TensorType{f32(4, 5)}})
	add(shapeCase{op: "ExtractImagePatches", attrs: A().Is("ksizes", 1, 3, 2, 1).Is("strides", 1, 2, 2, 1).Is("rates", 1, 2, 1, 1).S("padding", "SAME"),
		in: []ir.TensorType{f32(2, 7, 8, 3)}, out: []ir.TensorType{f32(2, 4, 4, 18)}})
	add(shapeCase{op: "ExtractVolumePatches", attrs: A().Is("ksizes", 1, 2, 2, 3, 1).Is("strides", 1, 1, 2, 2, 1).S("padding", "VALID"),
		in: []ir.TensorType{f32(2, 4, 5, 6, 2)}, out: []ir.TensorType{f32(2, 3, 2, 2, 24)}})
	dil := func() attrs { return A().Is("strides", 1, 2, 1, 1).Is("rates", 1, 1, 2, 1).S("padding", "VALID") }
	add(shapeCase{op: "Dilation2D", attrs: dil(), in: []ir.TensorType{f32(2, 7, 8, 3), f32(2, 3, 3)}, out: []ir.TensorType{f32(2, 3, 4, 3)}})
	add(shapeCase{op: "Dilation2DBackpropInput", attrs: dil(), in: []ir.TensorType{f32(2, 7, 8, 3), f32(2, 3, 3), f32(2, 3, 4, 3)},
		out: []ir.TensorType{f32(2, 7, 8, 3)}})
	add(shapeCase{op: "Dilation2DBackpropFilter", attrs: dil(), in: []ir.TensorType{f32(2, 7, 8, 3), f32(2, 3, 3), f32(2, 3, 4, 3)},
		out: []ir.TensorType{f32(2, 3, 3)}})
	for _, op := range []string{"RGBToHSV", "HSVToRGB"} {
		add(shapeCase{op: op, in: []ir.TensorType{f32(2, 5, 3)}, out: []ir.TensorType{f32(2, 5, 3)}})
	}
	for _, op := range []string{"AdjustContrastv2", "AdjustHue", "AdjustSaturation"} {
		add(shapeCase{op: op, in: []ir.TensorType{tt(ir.F16, 2, 5, 4, 3), f32()}, out: []ir.TensorType{tt(ir.F16, 2, 5, 4, 3)}})
	}
	boxes := []ir.TensorType{f32(5, 4), i32(5)}
	add(shapeCase{op: "CropAndResize", attrs: A().S("method", "nearest"), in: append([]ir.TensorType{tt(ir.F16, 2, 7, 9, 3)}, append(boxes, i32(2))...),
		host: h(3, v(4, 6)), out: []ir.TensorType{f32(5, 4, 6, 3)}})
	add(shapeCase{name: "CropAndResizeGradImage_half", op: "CropAndResizeGradImage", attrs: A().T("T", ir.F16), in: append([]ir.TensorType{f32(5, 4, 6, 3)}, append(boxes, i32(4))...),
		host: h(3, v(2, 7, 9, 3)), out: []ir.TensorType{tt(ir.F16, 2, 7, 9, 3)}})
	add(shapeCase{name: "CropAndResizeGradBoxes_float", op: "CropAndResizeGradBoxes", in: append([]ir.TensorType{f32(5, 4, 6, 3), f32(2, 7, 9, 3)}, boxes...),
		out: []ir.TensorType{f32(5, 4)}})
	add(shapeCase{op: "Conv", attrs: A().Is("strides", 1, 2, 1, 1).S("padding", "SAME").I("batch_dims", 2),
		in: []ir.TensorType{f32(2, 3, 7, 8, 3), f32(3, 3, 3, 4)}, out: []ir.TensorType{f32(2, 3, 4, 8, 4)}})
	add(shapeCase{name: "Conv_channels_first", op: "Conv", attrs: A().Is("strides", 1, 1, 2, 1).S("padding", "VALID").S("data_format", "CHANNELS_FIRST"),
		in: []ir.TensorType{f32(2, 3, 11, 6), f32(3, 3, 3, 5)}, out: []ir.TensorType{f32(2, 5, 5, 4)}})
	cell := []ir.TensorType{f32(3, 4), f32(3, 5), f32(3, 5), f32(9, 20), f32(5), f32(5), f32(5), f32(20)}
	bc := f32(3, 5)
	add(shapeCase{op: "LSTMBlockCell", attrs: A().B("use_peephole", true), in: cell, out: []ir.TensorType{bc, bc, bc, bc, bc, bc, bc}})
	add(shapeCase{op: "LSTMBlockCellGrad", in: append(append(cell[:8:8], bc, bc, bc, bc, bc, bc), bc, bc),
		out: []ir.TensorType{bc, f32(3, 20), f32(5), f32(5), f32(5)}})
	seq := append([]ir.TensorType{i64(), f32(6, 3, 4)}, cell[1:]...)
	ts := f32(6, 3, 5)
	for _, op := range []string{"BlockLSTM", "BlockLSTMV2"} {
		add(shapeCase{op: op, in: seq, host: h(0, 4), out: []ir.TensorType{ts, ts, ts, ts, ts, ts, ts}})
	}
	for _, op := range []string{"BlockLSTMGrad", "BlockLSTMGradV2"} {
		add(shapeCase{op: op, attrs: A().B("use_peephole", true), in: append(append(seq[:9:9], ts, ts, ts, ts, ts, ts, ts), ts, ts), host: h(0, 5),
			out: []ir.TensorType{f32(6, 3, 4), bc, bc, f32(9, 20), f32(5), f32(5), f32(5), f32(20)}})
	}
	gru := []ir.TensorType{f32(3, 4), bc, f32(9, 10), f32(9, 5), f32(10), f32(5)}
	add(shapeCase{op: "GRUBlockCell", in: gru, out: []ir.TensorType{bc, bc, bc, bc}})
	add(shapeCase{op: "GRUBlockCellGrad", in: append(gru[:6:6], bc, bc, bc, bc), out: []ir.TensorType{f32(3, 4), bc, bc, f32(3, 10)}})
	add(shapeCase{op: "ImageProjectiveTransformV2", attrs: A().S("interpolation", "BILINEAR").S("fill_mode", "REFLECT"),
		in: []ir.TensorType{f32(2, 7, 9, 3), f32(2, 8), i32(2)}, host: h(2, v(5, 6)), out: []ir.TensorType{f32(2, 5, 6, 3)}})
	add(shapeCase{op: "ImageProjectiveTransformV3", attrs: A().S("interpolation", "NEAREST").S("fill_mode", "WRAP"),
		in: []ir.TensorType{f32(2, 7, 9, 3), f32(1, 8), i32(2), f32()}, host: h(2, v(8, 4)), out: []ir.TensorType{f32(2, 8, 4, 3)}})
	nms := func(n int, name, op string, a attrs, out ...ir.TensorType) {
		in, host, raw := nmsCase(n)
		add(shapeCase{name: name, op: op, attrs: a, in: in, host: host, raw: raw, out: out})
	}
	nms(4, "", "NonMaxSuppressionV2", A(), i32(2))
	nms(5, "", "NonMaxSuppressionV3", A(), i32(1))
	nms(5, "", "NonMaxSuppressionV4", A().B("pad_to_max_output_size", true), i32(10), i32())
	return cs
}
