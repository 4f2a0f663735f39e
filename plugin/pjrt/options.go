package pjrt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/metalplug/metalplug/backend/status"
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

// check refuses what one device cannot run, and overrides XLA would
// refuse, in XLA's words (jax's tests match them). An override XLA would
// take is accepted and ignored: metalplug compiles with none of XLA's
// passes to tune.
func (o *compileOptions) check() error {
	names := make([]string, 0, len(o.overrides))
	for name := range o.overrides {
		names = append(names, name)
	}
	sort.Strings(names)
	// XLA reads every override before applying any
	// (CompileOptions::LoadEnvOptionOverrides), and reports one without a
	// value as INTERNAL then.
	for _, name := range names {
		if o.overrides[name].kind == "" {
			return status.Errorf(status.Internal, "OptionOverrideProto value not set.")
		}
	}
	for _, name := range names {
		if err := checkOverride(name, o.overrides[name]); err != nil {
			return err
		}
	}
	r, p := max(o.numReplicas, 1), max(o.numPartitions, 1)
	if r != 1 || p != 1 {
		return status.Invalidf("the program asks for %d replicas × %d partitions; metalplug runs programs on one device (num_replicas = num_partitions = 1)", r, p)
	}
	return nil
}

// debugOption is one field of xla.DebugOptions, from debug_options_gen.go.
type debugOption struct {
	typ      string   // XLA's name of its protobuf type (FieldDescriptor::type_name): bool, int32, int64, float, double, string, enum, message, ...
	repeated bool     // a repeated field (a map is a repeated message)
	values   []string // an enum's value names
}

// debug_options_gen.go is read from an openxla/xla checkout ($XLA) at the
// commit ($XLA_COMMIT) the targeted jaxlib was built from: jax's
// third_party/xla/revision.bzl at that release. Regenerate it when the
// jaxlib moves.
//
//go:generate go run ./internal/debugoptgen -o debug_options_gen.go -from openxla/xla@$XLA_COMMIT $XLA

// checkOverride is XLA's CompileOptions::ApplyOption
// (xla/pjrt/pjrt_executable.cc) without the applying: name must be a field
// of xla.DebugOptions, and the value one XLA would set it to.
//
// A name DebugOptions reserves, a field XLA has since removed, is accepted
// with any value: the table may be newer than the jaxlib in use, which may
// still have the field (and then jax's CPU backend takes it), and a name
// XLA once had is no typo. So is any other name of XLA's form (xla_...)
// that the table lacks: the table is read from an xla.proto older than
// jaxlib 0.12's XLA, which has 37 fields more, and refusing an option the
// running jaxlib knows would break a program XLA's own backends compile.
// A name of no XLA form is refused as unknown, in XLA's words.
func checkOverride(name string, v optionOverride) error {
	opt, ok := debugOptions[name]
	if !ok {
		if slices.Contains(debugOptionsReserved, name) || strings.HasPrefix(name, "xla_") {
			return nil
		}
		return status.Invalidf("No such compile option: '%s'", name)
	}
	if v.kind == "string" {
		if !opt.repeated {
			return opt.checkString(name, v.s)
		}
		// A repeated field takes a comma-separated list, each item
		// parsed as one value; "" clears it.
		if v.s == "" {
			return nil
		}
		for _, item := range strings.Split(v.s, ",") {
			if err := opt.checkString(name, item); err != nil {
				return err
			}
		}
		return nil
	}
	ok = false
	switch opt.typ {
	case "bool":
		ok = v.kind == "bool"
	case "int32":
		ok = v.kind == "int" && v.i >= math.MinInt32 && v.i <= math.MaxInt32
	case "int64", "enum":
		ok = v.kind == "int" // any number for an enum: XLA's are open
	case "float":
		// XLA's bounds are numeric_limits<float>::min() and max(): the
		// smallest positive normal float, so 0 and negative values are
		// refused too.
		ok = v.kind == "double" && v.f >= 0x1p-126 && v.f <= math.MaxFloat32
	case "double":
		ok = v.kind == "double"
	}
	if !ok {
		return status.Invalidf("While setting option %s, '%s' is not a valid %s value.", name, strCat(v), opt.typ)
	}
	return nil
}

// checkString is XLA's ApplyOptionFromSingleString: s parsed as one value
// of the field's type, as absl's SimpleAtoi and SimpleAtof would.
func (opt debugOption) checkString(name, s string) error {
	ok := false
	switch opt.typ {
	case "string":
		ok = true
	case "int32", "int64":
		bits := 32
		if opt.typ == "int64" {
			bits = 64
		}
		_, err := strconv.ParseInt(strings.Trim(s, asciiSpace), 10, bits)
		ok = err == nil
	case "float", "double":
		ok = atof(s, opt.typ)
	case "bool":
		ok = s == "True" || s == "False" // Python's spelling, and no other
	case "enum":
		_, err := strconv.ParseInt(strings.Trim(s, asciiSpace), 10, 32)
		ok = err == nil || slices.Contains(opt.values, s)
	}
	if !ok {
		return status.Invalidf("While setting option %s, '%s' is not a valid %s value.", name, s, opt.typ)
	}
	return nil
}

// asciiSpace is what absl's StripAsciiWhitespace strips.
const asciiSpace = " \t\n\v\f\r"

// atof is absl's SimpleAtof (typ "float") or SimpleAtod ("double"):
// decimal only, an optional sign ("+" too, but not "+-"), inf, infinity,
// nan and nan(chars) in any case; a value out of range is taken (as ±inf or 0).
func atof(s, typ string) bool {
	s = strings.Trim(s, asciiSpace)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		if strings.HasPrefix(rest, "-") {
			return false
		}
		s = rest
	}
	digits := strings.TrimPrefix(s, "-")
	if strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0X") || strings.HasPrefix(digits, "+") {
		return false // Go's hex floats; a sign after "-"
	}
	bits := 64
	if typ == "float" {
		bits = 32
	}
	if l := strings.ToLower(digits); strings.HasPrefix(l, "nan(") && strings.HasSuffix(l, ")") {
		// from_chars's nan(n-char-sequence)
		return strings.Trim(l[4:len(l)-1], "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
	}
	_, err := strconv.ParseFloat(s, bits)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// strCat is absl::StrCat of a value, as XLA quotes it in an error: a bool
// as 1 or 0, a double with six significant digits.
func strCat(v optionOverride) string {
	switch v.kind {
	case "bool":
		if v.b {
			return "1"
		}
		return "0"
	case "int":
		return strconv.FormatInt(v.i, 10)
	case "double":
		switch {
		case math.IsNaN(v.f):
			return "nan"
		case math.IsInf(v.f, 1):
			return "inf"
		case math.IsInf(v.f, -1):
			return "-inf"
		}
		return strconv.FormatFloat(v.f, 'g', 6, 64)
	}
	return v.s
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
