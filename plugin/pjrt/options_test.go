package pjrt

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// A minimal protobuf writer, to build the CompileOptionsProto jax sends.
type pb []byte

func (p pb) tag(num, wire int) pb        { return binary.AppendUvarint(p, uint64(num<<3|wire)) }
func (p pb) varint(num int, v uint64) pb { return binary.AppendUvarint(p.tag(num, wireVarint), v) }
func (p pb) bytes(num int, v []byte) pb {
	return append(binary.AppendUvarint(p.tag(num, wireBytes), uint64(len(v))), v...)
}
func (p pb) double(num int, v float64) pb {
	return binary.LittleEndian.AppendUint64(p.tag(num, wireFixed64), math.Float64bits(v))
}

// options builds a CompileOptionsProto as jax's looks: build options with
// replicas, partitions, the SPMD flag and a debug-options blob, a profile
// version, and the given overrides.
func options(replicas, partitions uint64, overrides map[string]pb) []byte {
	build := pb(nil).bytes(3, pb(nil).varint(1, 1).varint(99, 7)). // debug_options: skipped
									varint(4, replicas).varint(5, partitions).varint(6, 1)
	p := pb(nil).bytes(fieldExecutableBuildOptions, build).varint(5, 0)
	for name, v := range overrides {
		p = p.bytes(fieldEnvOptionOverrides, pb(nil).bytes(1, []byte(name)).bytes(2, v))
	}
	return p.varint(9, 1)
}

func TestParseCompileOptions(t *testing.T) {
	o, err := parseCompileOptions(options(1, 1, map[string]pb{
		"xla_cpu_enable_fast_math": pb(nil).varint(fieldOverrideBool, 1),
		"xla_some_level":           pb(nil).varint(fieldOverrideInt, 3),
		"xla_ratio":                pb(nil).double(fieldOverrideDouble, 0.5),
		"xla_dump_to":              pb(nil).bytes(fieldOverrideString, []byte("/tmp/x")),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if o.numReplicas != 1 || o.numPartitions != 1 {
		t.Errorf("replicas %d, partitions %d", o.numReplicas, o.numPartitions)
	}
	want := map[string]string{"xla_cpu_enable_fast_math": "true", "xla_some_level": "3", "xla_ratio": "0.5", "xla_dump_to": `"/tmp/x"`}
	for name, v := range want {
		if got := o.overrides[name].String(); got != v {
			t.Errorf("override %s = %s, want %s", name, got, v)
		}
	}
	if err := o.check(); err != nil {
		t.Errorf("xla_* overrides must be accepted: %v", err)
	}
	empty, err := parseCompileOptions(nil)
	if err != nil || empty.check() != nil {
		t.Errorf("empty options (every default): %v", err)
	}
}

func TestCompileOptionsRefused(t *testing.T) {
	o, _ := parseCompileOptions(options(1, 1, map[string]pb{"invalid_key": pb(nil).bytes(1, []byte("invalid_value"))}))
	if err := o.check(); err == nil || err.Error() != "No such compile option: 'invalid_key'" || codeOf(err) != codeInvalidArgument {
		t.Errorf("an unknown option: %v; want XLA's \"No such compile option: 'invalid_key'\"", err)
	}
	o, _ = parseCompileOptions(options(2, 1, nil))
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "2 replicas × 1 partitions") {
		t.Errorf("two replicas: %v", err)
	}
	o, _ = parseCompileOptions(options(1, 4, nil))
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "1 replicas × 4 partitions") {
		t.Errorf("four partitions: %v", err)
	}
	for _, bad := range [][]byte{{0x1a, 0x05, 0x01}, {0x08}, {0x00}, {0x0f}} {
		if _, err := parseCompileOptions(bad); err == nil {
			t.Errorf("malformed %x must fail", bad)
		}
	}
}
