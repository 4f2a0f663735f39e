// Package graphpass is the plugin's Grappler optimizer: it folds a bias and
// an activation into the convolution or matrix multiplication in front of
// them, in the GraphDef TensorFlow hands the plugin (TF_InitGraph), so that
// the device runs one kernel where it ran three and keeps no intermediate.
//
//	Conv2D -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid]   =>  _FusedConv2D
//	MatMul -> BiasAdd [-> the same]                                          =>  _FusedMatMul
//
// The fused node takes the last node's name, so its consumers read it
// unchanged, and TensorFlow's own op definitions (the ones its CPU and CUDA
// remapper produces), so the graph stays valid anywhere. A chain is left as
// it is when any node of it is not on the plugin's device, its dtype is
// not one the fused kernel is registered for, an intermediate has another
// consumer (data or control) or is a node TensorFlow asks to preserve (a
// fetch, a feed), or the layout is not NHWC.
package graphpass

import (
	"slices"
	"strings"

	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// Options say what may be fused.
type Options struct {
	// DeviceType is the plugin's device type ("GPU", "METALPLUG_HOST"): only
	// nodes placed on it are rewritten.
	DeviceType string
	// ConvTypes and MatMulTypes are the dtypes _FusedConv2D and
	// _FusedMatMul are registered for on the device.
	ConvTypes, MatMulTypes []pb.DataType
	// Preserve are the nodes TensorFlow says must keep their name and
	// outputs (fetches, feeds, nodes to keep).
	Preserve []string
	// OpDefs are the running TensorFlow's definitions of _FusedConv2D and
	// _FusedMatMul, which change between releases (2.21's _FusedConv2D
	// types its extra inputs by a list attribute TArgs, and has host_args):
	// the fused node gets exactly the attributes its definition declares,
	// and an op without a definition here is not written.
	OpDefs map[string]*pb.OpDef
}

// Fusion is one rewrite.
type Fusion struct {
	Name     string   // the fused node, which took the last node's name
	Op       string   // _FusedConv2D or _FusedMatMul
	Removed  []string // the nodes it replaced
	FusedOps []string
}

// activations are the ops the fused kernels take after the bias, by name.
var activations = map[string]bool{"Relu": true, "Relu6": true, "Elu": true, "LeakyRelu": true, "Tanh": true, "Sigmoid": true}

// carried are the attributes of the matched op that the fused op has too;
// others (MatMul's grad_a and grad_b, say) are not attributes of the fused
// op and would make the node invalid.
var carried = map[string][]string{
	"Conv2D": {"T", "strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu"},
	"MatMul": {"T", "transpose_a", "transpose_b"},
}

// Rewrite fuses every chain Options allow, in place, and says what it did.
func Rewrite(g *pb.GraphDef, o Options) []Fusion {
	byName := make(map[string]*pb.NodeDef, len(g.Node))
	uses := map[string]int{}
	for _, n := range g.Node {
		byName[n.Name] = n
	}
	for _, n := range g.Node {
		for _, in := range n.Input {
			uses[nodeOf(in)]++
		}
	}
	preserved := map[string]bool{}
	for _, name := range o.Preserve {
		preserved[name] = true
	}
	// Only a node that nothing else reads and TensorFlow need not keep may
	// disappear into a fused one.
	private := func(n *pb.NodeDef) bool { return uses[n.Name] == 1 && !preserved[n.Name] }
	consumerOf := map[string]*pb.NodeDef{} // for nodes with one use: the node that uses it
	for _, n := range g.Node {
		for _, in := range n.Input {
			if uses[nodeOf(in)] == 1 {
				consumerOf[nodeOf(in)] = n
			}
		}
	}

	var fusions []Fusion
	removed := map[string]bool{}
	replace := map[string]*pb.NodeDef{}
	for _, bias := range g.Node {
		if bias.Op != "BiasAdd" || removed[bias.Name] || len(bias.Input) < 2 || !o.onDevice(bias) || !nhwc(bias) {
			continue
		}
		prod := byName[dataInput(bias.Input[0])]
		if prod == nil || removed[prod.Name] || carried[prod.Op] == nil || !o.onDevice(prod) || !private(prod) || len(prod.Input) < 2 {
			continue
		}
		t := typeAttr(bias)
		types := o.MatMulTypes
		if prod.Op == "Conv2D" {
			types = o.ConvTypes
			if !nhwc(prod) {
				continue
			}
		}
		if typeAttr(prod) != t || !slices.Contains(types, t) {
			continue
		}
		tail, fused := bias, []string{"BiasAdd"}
		if act := consumerOf[bias.Name]; act != nil && private(bias) && activations[act.Op] && !removed[act.Name] &&
			o.onDevice(act) && typeAttr(act) == t && len(act.Input) >= 1 && dataInput(act.Input[0]) == bias.Name {
			tail, fused = act, append(fused, act.Op)
		}
		n := fusedNode(prod, bias, tail, fused)
		if !fitDefinition(n, o.OpDefs[n.Op], t) {
			continue
		}
		chain := []string{prod.Name, bias.Name}
		if tail != bias {
			chain = append(chain, tail.Name)
		}
		for _, name := range chain {
			removed[name] = true
		}
		replace[tail.Name] = n
		fusions = append(fusions, Fusion{Name: n.Name, Op: n.Op, Removed: chain, FusedOps: fused})
	}
	if len(fusions) == 0 {
		return nil
	}
	out := g.Node[:0]
	for _, n := range g.Node {
		if r := replace[n.Name]; r != nil {
			out = append(out, r)
		} else if !removed[n.Name] {
			out = append(out, n)
		}
	}
	g.Node = out
	return fusions
}

// fusedNode is the fused op of prod -> bias [-> tail], named and placed as
// tail, with the chain's control inputs.
func fusedNode(prod, bias, tail *pb.NodeDef, fused []string) *pb.NodeDef {
	n := &pb.NodeDef{
		Name:   tail.Name,
		Op:     "_Fused" + prod.Op,
		Device: tail.Device,
		Input:  []string{prod.Input[0], prod.Input[1], bias.Input[1]},
		Attr:   map[string]*pb.AttrValue{},
	}
	for _, from := range []*pb.NodeDef{prod, bias, tail} {
		for _, in := range from.Input {
			if strings.HasPrefix(in, "^") && !slices.Contains(n.Input, in) {
				n.Input = append(n.Input, in)
			}
		}
	}
	for _, k := range carried[prod.Op] {
		if v, ok := prod.Attr[k]; ok {
			n.Attr[k] = v
		}
	}
	names := make([][]byte, len(fused))
	for i, f := range fused {
		names[i] = []byte(f)
	}
	n.Attr["num_args"] = &pb.AttrValue{Value: &pb.AttrValue_I{I: 1}}
	n.Attr["fused_ops"] = &pb.AttrValue{Value: &pb.AttrValue_List{List: &pb.AttrValue_ListValue{S: names}}}
	n.Attr["epsilon"] = &pb.AttrValue{Value: &pb.AttrValue_F{F: 0.0001}}
	alpha := float32(0.2) // LeakyRelu's default
	if tail.Op == "LeakyRelu" {
		if v, ok := tail.Attr["alpha"]; ok {
			alpha = v.GetF()
		}
	}
	n.Attr["leakyrelu_alpha"] = &pb.AttrValue{Value: &pb.AttrValue_F{F: alpha}}
	return n
}

// fitDefinition makes n's attributes the ones def declares: a list(type)
// attribute typing the bias input (TArgs) becomes [T], attributes def lacks
// are dropped. It reports false, and n must not be written, when there is
// no definition or a required attribute is still missing.
func fitDefinition(n *pb.NodeDef, def *pb.OpDef, t pb.DataType) bool {
	if def == nil {
		return false
	}
	declared := map[string]bool{}
	for _, a := range def.Attr {
		declared[a.Name] = true
	}
	for _, in := range def.InputArg {
		if in.Name == "args" && in.TypeListAttr != "" {
			n.Attr[in.TypeListAttr] = &pb.AttrValue{Value: &pb.AttrValue_List{List: &pb.AttrValue_ListValue{Type: []pb.DataType{t}}}}
		}
	}
	for k := range n.Attr {
		if !declared[k] {
			delete(n.Attr, k)
		}
	}
	for _, a := range def.Attr {
		if _, ok := n.Attr[a.Name]; !ok && a.DefaultValue == nil {
			return false
		}
	}
	return true
}

// onDevice reports whether n is placed on the plugin's device.
func (o Options) onDevice(n *pb.NodeDef) bool {
	return o.DeviceType != "" && strings.Contains(n.Device, "device:"+o.DeviceType+":")
}

// nhwc reports a node's data_format is NHWC (the default), the only layout
// the fused ops take everywhere.
func nhwc(n *pb.NodeDef) bool {
	v, ok := n.Attr["data_format"]
	return !ok || string(v.GetS()) == "NHWC"
}

func typeAttr(n *pb.NodeDef) pb.DataType {
	if v, ok := n.Attr["T"]; ok {
		return v.GetType()
	}
	return pb.DataType_DT_INVALID
}

// nodeOf is the node an input names: "name", "name:1" or "^name".
func nodeOf(in string) string {
	in = strings.TrimPrefix(in, "^")
	if i := strings.LastIndexByte(in, ':'); i >= 0 {
		return in[:i]
	}
	return in
}

// dataInput is the node of a data input read at output 0, or "" for a
// control input or another output.
func dataInput(in string) string {
	if strings.HasPrefix(in, "^") {
		return ""
	}
	if name, port, ok := strings.Cut(in, ":"); ok {
		if port != "0" {
			return ""
		}
		return name
	}
	return in
}
