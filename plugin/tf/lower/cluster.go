package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/tf/graphpass"
	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// Clusters. The graph pass (plugin/tf/graphpass) replaces a connected
// subgraph of device nodes by one node of the library's own op,
// _MetalplugCluster. Its kernel lowers the members one after another into
// one program, each with the lowering registered for its op, so no op is
// written twice and a training step runs a handful of programs (one
// MPSGraph dispatch each on a Mac) rather than one per op.
//
// The node's attributes, as graphpass.Clusters writes them (its file
// comment says how it chooses members):
//
//	members      a serialized GraphDef: the member nodes in topological
//	             order, their control inputs removed
//	inputs       the tensors the node's device inputs (args) carry, named
//	             as the members name them ("node" or "node:k")
//	host_inputs  the same for its host inputs (host_args): values members
//	             read on the host, such as a Reshape's shape
//	outputs      the member tensors the node yields, in order
//	Tin, Thost, Tout  the dtypes of those three lists, which TensorFlow
//	             checks; the program takes its types from the call

// ClusterOp is the op type of a cluster node, "_MetalplugCluster", as the
// graph pass writes it.
const ClusterOp = graphpass.ClusterOp

// ClusterSignature is ClusterOp's definition, as TensorFlow's op builder
// (tensorflow/c/ops.h) spells attributes, inputs and outputs.
var ClusterSignature = struct{ Attrs, Inputs, Outputs []string }{
	Attrs: []string{"Tin: list(type) >= 0", "Thost: list(type) >= 0", "Tout: list(type) >= 1", "members: string",
		"inputs: list(string) >= 0", "host_inputs: list(string) >= 0", "outputs: list(string) >= 1"},
	Inputs:  []string{"args: Tin", "host_args: Thost"},
	Outputs: []string{"results: Tout"},
}

func init() {
	register(Kernel{Op: ClusterOp, Inputs: []string{"args", "host_args"},
		HostInputs: []string{"host_args"}, HostInputIndex: []int{-1}, HostInputsOf: clusterHostInputs,
		Attrs: []AttrSpec{
			{Name: "members", Kind: AttrString}, {Name: "inputs", Kind: AttrStrings},
			{Name: "host_inputs", Kind: AttrStrings}, {Name: "outputs", Kind: AttrStrings},
		},
		Lower: lowerCluster})
}

// clusterHostInputs: the host args are the last len(host_inputs) inputs.
// Without attributes (the registry's own checks) a call has one input per
// list, and the last is the host one.
func clusterHostInputs(a *Attrs, n int) []int {
	if a == nil {
		return []int{n - 1}
	}
	return rangeInts(n-len(a.StringList("host_inputs")), n)
}

func lowerCluster(c *Call) error {
	var members pb.GraphDef
	if err := proto.Unmarshal([]byte(c.Attrs.String("members", "")), &members); err != nil {
		return c.Errorf("attribute members is not a serialized GraphDef: %v", err)
	}
	if len(members.Node) == 0 {
		return c.Errorf("the cluster has no members")
	}
	args, hostArgs, outs := c.Attrs.StringList("inputs"), c.Attrs.StringList("host_inputs"), c.Attrs.StringList("outputs")
	if len(args)+len(hostArgs) != len(c.In) {
		return c.Errorf("the node names %d inputs and %d host inputs, but is called with %d", len(args), len(hostArgs), len(c.In))
	}
	values := make(map[string]ir.Value, len(args)+len(members.Node))
	for i, name := range args {
		values[name] = c.In[i]
	}
	hostAt := make(map[string]int, len(hostArgs))
	for j, name := range hostArgs {
		hostAt[name] = len(args) + j
	}
	for _, n := range members.Node {
		out, err := lowerMember(c, n, values, hostAt)
		if err != nil {
			return err
		}
		for k, v := range out {
			values[TensorName(n.Name, k)] = v
		}
	}
	c.Out = make([]ir.Value, len(outs))
	for i, name := range outs {
		v, ok := values[name]
		if !ok {
			return c.Errorf("output %d names %s, which no member produces", i, name)
		}
		c.Out[i] = v
	}
	return nil
}

// lowerMember lowers one member node into the cluster's program: its data
// inputs are earlier members' values or the cluster's args, its host
// inputs the cluster's host args.
func lowerMember(c *Call, n *pb.NodeDef, values map[string]ir.Value, hostAt map[string]int) ([]ir.Value, error) {
	k, ok := registry[n.Op]
	if !ok || k.Lower == nil || k.Op == ClusterOp {
		return nil, c.Errorf("member %s: op %s has no lowering", n.Name, n.Op)
	}
	attrs, err := attrsOf(n, k)
	if err != nil {
		return nil, c.Errorf("member %s (%s): %v", n.Name, n.Op, err)
	}
	data := dataInputs(n)
	m := &Call{Op: n.Op, B: c.B, Attrs: attrs, In: make([]ir.Value, len(data)), Host: map[int][]int64{},
		types: make([]ir.TensorType, len(data)), member: true}
	for i, in := range data {
		name := canonicalTensor(in)
		if k.IsHostInput(attrs, i, len(data)) {
			p, ok := hostAt[name]
			if !ok {
				return nil, c.Errorf("member %s (%s) reads input %d (%s) on the host, and the cluster has no host input of that name", n.Name, n.Op, i, name)
			}
			m.In[i], m.Host[i], m.types[i] = -1, c.Host[p], c.Type(p)
			continue
		}
		v, ok := values[name]
		if !ok {
			return nil, c.Errorf("member %s (%s): input %d (%s) is neither an earlier member's output nor a cluster input", n.Name, n.Op, i, name)
		}
		m.In[i], m.types[i] = v, c.B.Type(v)
	}
	c.B.SetLoc(n.Name)
	if err := k.Lower(m); err != nil {
		return nil, fmt.Errorf("%s (member %s of a cluster): %w", n.Op, n.Name, err)
	}
	if err := c.B.Err(); err != nil {
		return nil, fmt.Errorf("%s (member %s of a cluster): inputs %s: %w", n.Op, n.Name, m.Inputs(), err)
	}
	return m.Out, nil
}

// ClusterMember reports whether node n may be lowered inside a cluster and
// which of its data inputs are host inputs. It may when its op has a
// lowering that reads no device data on the host (ReadInputs), owns no
// variable, and its dtypes are ones the op is registered for here: exactly
// the nodes whose own kernel would run on the device. Stateful ops (random
// draws keep a counter) are for the caller to exclude, from the op
// definition.
func ClusterMember(n *pb.NodeDef) (host []int, ok bool) {
	k, found := registry[n.Op]
	if !found || k.Lower == nil || k.Op == ClusterOp || k.Variables.Access != VarNone ||
		len(k.ReadInputs) > 0 || k.ReadInputsOf != nil {
		return nil, false
	}
	attrs, err := attrsOf(n, k)
	if err != nil {
		return nil, false
	}
	for _, con := range k.Constraints {
		v, ok := n.Attr[con.Attr]
		if !ok {
			return nil, false
		}
		if d, ok := FromTF(int(v.GetType())); !ok || !slices.Contains(con.DTypes, d) {
			return nil, false
		}
	}
	data := len(dataInputs(n))
	for i := range data {
		if k.IsHostInput(attrs, i, data) {
			host = append(host, i)
		}
	}
	return host, true
}

// attrsOf reads the attributes k's lowering takes from a NodeDef, as the
// kernel glue reads them from TensorFlow for a lone kernel.
func attrsOf(n *pb.NodeDef, k *Kernel) (*Attrs, error) {
	a := NewAttrs()
	for _, spec := range k.Attrs {
		v, ok := n.Attr[spec.Name]
		if !ok {
			if spec.Optional {
				continue
			}
			return nil, fmt.Errorf("attribute %s is missing", spec.Name)
		}
		switch spec.Kind {
		case AttrType:
			d, ok := FromTF(int(v.GetType()))
			if !ok {
				return nil, fmt.Errorf("attribute %s: dtype %v is not supported on this device", spec.Name, v.GetType())
			}
			a.Types[spec.Name] = d
		case AttrInt:
			a.Ints[spec.Name] = []int64{v.GetI()}
		case AttrInts:
			a.Ints[spec.Name] = slices.Clone(v.GetList().GetI())
		case AttrString:
			a.Strings[spec.Name] = string(v.GetS())
		case AttrBool:
			a.Bools[spec.Name] = v.GetB()
		case AttrFloat:
			a.Floats[spec.Name] = v.GetF()
		case AttrStrings:
			ss := []string{}
			for _, s := range v.GetList().GetS() {
				ss = append(ss, string(s))
			}
			a.StringLists[spec.Name] = ss
		case AttrFloats:
			a.FloatLists[spec.Name] = slices.Clone(v.GetList().GetF())
		default:
			return nil, fmt.Errorf("attribute %s: kind %d cannot be read", spec.Name, spec.Kind)
		}
	}
	return a, nil
}

// dataInputs are a node's inputs but its control inputs ("^name").
func dataInputs(n *pb.NodeDef) []string {
	out := make([]string, 0, len(n.Input))
	for _, in := range n.Input {
		if !strings.HasPrefix(in, "^") {
			out = append(out, in)
		}
	}
	return out
}

// TensorName names output k of node: "node" for the first, "node:k" after.
func TensorName(node string, k int) string {
	if k == 0 {
		return node
	}
	return node + ":" + strconv.Itoa(k)
}

// canonicalTensor writes "node:0" as "node".
func canonicalTensor(s string) string {
	return strings.TrimSuffix(s, ":0")
}

// ClusterSummary names a cluster node by its members' ops, in the order
// they first appear, with counts ("Conv2D*3+BiasAdd*3+Relu"), and with
// names set, by its members' names too: what a trace shows of it.
func ClusterSummary(a *Attrs, names bool) string {
	var members pb.GraphDef
	if err := proto.Unmarshal([]byte(a.String("members", "")), &members); err != nil {
		return ClusterOp
	}
	var ops []string
	count := map[string]int{}
	for _, n := range members.Node {
		if count[n.Op] == 0 {
			ops = append(ops, n.Op)
		}
		count[n.Op]++
	}
	var b strings.Builder
	for i, op := range ops {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(op)
		if count[op] > 1 {
			b.WriteString("*" + strconv.Itoa(count[op]))
		}
	}
	if names {
		b.WriteString(" [")
		for i, n := range members.Node {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n.Name)
		}
		b.WriteByte(']')
	}
	return b.String()
}
