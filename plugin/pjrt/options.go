package pjrt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// compileOptions is what metalplug reads of a serialized
// xla.CompileOptionsProto (xla/pjrt/proto/compile_options.proto), the
// compile_options of PJRT_Client_Compile. A program for one device needs
// only the replica and partition counts and the overrides jax passes as
// jit(..., compiler_options={...}); the rest (debug options, layouts,
// device assignment, effort levels) is skipped unread.
//
// The message is read field by field from the protobuf wire format rather
// than with google.golang.org/protobuf: the module does not depend on it,
// the library would carry the whole runtime and a descriptor of XLA's
// protos for three fields, and the wire format of those three is fixed by
// protobuf's compatibility rules.
type compileOptions struct {
	numReplicas   int64 // 0 (unset) means 1
	numPartitions int64
	overrides     map[string]optionOverride
}

// optionOverride is one xla.OptionOverrideProto: exactly one of its values.
type optionOverride struct {
	kind string // "string", "bool", "int", "double"
	s    string
	b    bool
	i    int64
	f    float64
}

func (o optionOverride) String() string {
	switch o.kind {
	case "string":
		return fmt.Sprintf("%q", o.s)
	case "bool":
		return fmt.Sprint(o.b)
	case "int":
		return fmt.Sprint(o.i)
	case "double":
		return fmt.Sprint(o.f)
	}
	return "unset"
}

// Field numbers, from xla/pjrt/proto/compile_options.proto.
const (
	fieldExecutableBuildOptions = 3 // CompileOptionsProto.executable_build_options
	fieldEnvOptionOverrides     = 7 // CompileOptionsProto.env_option_overrides (map)
	fieldNumReplicas            = 4 // ExecutableBuildOptionsProto.num_replicas
	fieldNumPartitions          = 5 // ExecutableBuildOptionsProto.num_partitions
	fieldMapKey                 = 1 // a map entry's key
	fieldMapValue               = 2 // and value
	fieldOverrideString         = 1 // OptionOverrideProto.string_field
	fieldOverrideBool           = 2
	fieldOverrideInt            = 3
	fieldOverrideDouble         = 4
)

// parseCompileOptions reads the fields above; it fails on malformed bytes,
// never on fields it does not know.
func parseCompileOptions(data []byte) (*compileOptions, error) {
	o := &compileOptions{overrides: map[string]optionOverride{}}
	err := eachField(data, func(num int, wire int, v []byte, n uint64) error {
		switch {
		case num == fieldExecutableBuildOptions && wire == wireBytes:
			return eachField(v, func(num int, wire int, _ []byte, n uint64) error {
				switch {
				case num == fieldNumReplicas && wire == wireVarint:
					o.numReplicas = int64(n)
				case num == fieldNumPartitions && wire == wireVarint:
					o.numPartitions = int64(n)
				}
				return nil
			})
		case num == fieldEnvOptionOverrides && wire == wireBytes:
			key, val, err := parseOverrideEntry(v)
			if err != nil {
				return fmt.Errorf("env_option_overrides: %w", err)
			}
			o.overrides[key] = val
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("compile_options is not a serialized xla.CompileOptionsProto: %w", err)
	}
	return o, nil
}

func parseOverrideEntry(data []byte) (string, optionOverride, error) {
	var key string
	var val optionOverride
	err := eachField(data, func(num int, wire int, v []byte, n uint64) error {
		switch {
		case num == fieldMapKey && wire == wireBytes:
			key = string(v)
		case num == fieldMapValue && wire == wireBytes:
			return eachField(v, func(num int, wire int, v []byte, n uint64) error {
				switch {
				case num == fieldOverrideString && wire == wireBytes:
					val = optionOverride{kind: "string", s: string(v)}
				case num == fieldOverrideBool && wire == wireVarint:
					val = optionOverride{kind: "bool", b: n != 0}
				case num == fieldOverrideInt && wire == wireVarint:
					val = optionOverride{kind: "int", i: int64(n)}
				case num == fieldOverrideDouble && wire == wireFixed64:
					val = optionOverride{kind: "double", f: math.Float64frombits(n)}
				}
				return nil
			})
		}
		return nil
	})
	return key, val, err
}

// check refuses what one device cannot run, and overrides XLA would not
// know, in XLA's words (jax's tests match them). An override whose name is
// an XLA debug option (xla_*) is accepted and ignored: metalplug compiles
// with none of XLA's passes to tune.
func (o *compileOptions) check() error {
	r, p := max(o.numReplicas, 1), max(o.numPartitions, 1)
	if r != 1 || p != 1 {
		return invalidf("the program asks for %d replicas × %d partitions; metalplug runs programs on one device (num_replicas = num_partitions = 1)", r, p)
	}
	names := make([]string, 0, len(o.overrides))
	for name := range o.overrides {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasPrefix(name, "xla_") {
			return invalidf("No such compile option: '%s'", name)
		}
	}
	return nil
}

// -------------------------------------------------------------- wire format

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireStart   = 3 // groups, long deprecated: skipped like any other field
	wireEnd     = 4
	wireFixed32 = 5
)

var errTruncated = errors.New("truncated")

// eachField calls fn for each field of a message: its number, wire type,
// and value (the bytes of a length-delimited field, or the integer of the
// others).
func eachField(data []byte, fn func(num, wire int, v []byte, n uint64) error) error {
	for len(data) > 0 {
		tag, k := binary.Uvarint(data)
		if k <= 0 {
			return fmt.Errorf("bad field tag: %w", errTruncated)
		}
		data = data[k:]
		num, wire := int(tag>>3), int(tag&7)
		if num == 0 {
			return errors.New("field number 0")
		}
		var v []byte
		var n uint64
		switch wire {
		case wireVarint:
			n, k = binary.Uvarint(data)
			if k <= 0 {
				return fmt.Errorf("field %d: bad varint: %w", num, errTruncated)
			}
			data = data[k:]
		case wireFixed64:
			if len(data) < 8 {
				return fmt.Errorf("field %d: %w", num, errTruncated)
			}
			n, data = binary.LittleEndian.Uint64(data), data[8:]
		case wireFixed32:
			if len(data) < 4 {
				return fmt.Errorf("field %d: %w", num, errTruncated)
			}
			n, data = uint64(binary.LittleEndian.Uint32(data)), data[4:]
		case wireBytes:
			l, k := binary.Uvarint(data)
			if k <= 0 || l > uint64(len(data)-k) {
				return fmt.Errorf("field %d: bad length: %w", num, errTruncated)
			}
			v, data = data[k:k+int(l)], data[k+int(l):]
		case wireStart, wireEnd:
			continue // group markers carry no payload of their own
		default:
			return fmt.Errorf("field %d: unknown wire type %d", num, wire)
		}
		if err := fn(num, wire, v, n); err != nil {
			return err
		}
	}
	return nil
}
