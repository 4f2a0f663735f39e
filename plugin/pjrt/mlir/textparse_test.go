package mlir

import (
	"fmt"
	"regexp"
	"strings"
)

// This file reads the generic-form text that jaxlib's MLIR prints
// (get_asm(print_generic_op_form=True, enable_debug_info=True)) into a tree
// the golden test can compare with Read's, and rewrites VHLO spellings of
// types and attributes into the builtin spellings this package prints.

type tNamed struct{ name, value string }

type tOp struct {
	defs       []string // value names this op defines: %5, or %5#0.. for %5:N
	name       string
	operands   []string
	successors []string
	props      []tNamed
	attrs      []tNamed
	regions    []*tRegion
	inTypes    []string
	outTypes   []string
	loc        string // inner text of loc(...), "" if none
}

type tRegion struct{ blocks []*tBlock }

type tBlock struct {
	label string
	args  []tArg
	ops   []*tOp
}

type tArg struct{ name, typ, loc string }

type tModule struct {
	top     *tOp
	aliases map[string]string // #locN -> inner text of its loc(...)
}

type textParser struct {
	s string
	i int
}

func (p *textParser) fail(format string, args ...any) {
	start := max(0, p.i-60)
	end := min(len(p.s), p.i+60)
	panic(fmt.Sprintf("text offset %d: %s near %q", p.i, fmt.Sprintf(format, args...), p.s[start:end]))
}

func (p *textParser) peek(prefix string) bool { return strings.HasPrefix(p.s[p.i:], prefix) }

func (p *textParser) eat(prefix string) {
	if !p.peek(prefix) {
		p.fail("expected %q", prefix)
	}
	p.i += len(prefix)
}

func (p *textParser) try(prefix string) bool {
	if p.peek(prefix) {
		p.i += len(prefix)
		return true
	}
	return false
}

func (p *textParser) skipSpaces() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n') {
		p.i++
	}
}

// stringEnd returns the index just past the string literal starting at i.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// scan returns the index of the first character of stops at bracket depth
// zero, starting at i; "->" does not count as a bracket.
func scan(s string, i int, stops string) int {
	depth := 0
	for j := i; j < len(s); j++ {
		c := s[j]
		if c == '>' && j > 0 && s[j-1] == '-' {
			continue
		}
		if depth == 0 && strings.IndexByte(stops, c) >= 0 {
			return j
		}
		switch c {
		case '"':
			j = stringEnd(s, j) - 1
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '}':
			depth--
		case '>':
			depth--
		}
	}
	return len(s)
}

// matching returns the index of the bracket closing the one at i.
func matching(s string, i int) int {
	j := scan(s, i+1, ")]}>")
	if j >= len(s) {
		panic(fmt.Sprintf("unbalanced %q at %d", s[i], i))
	}
	return j
}

// splitTop splits at commas at bracket depth zero, trimming spaces.
func splitTop(s string) []string {
	var parts []string
	for len(strings.TrimSpace(s)) > 0 {
		j := scan(s, 0, ",")
		parts = append(parts, strings.TrimSpace(s[:j]))
		if j >= len(s) {
			break
		}
		s = s[j+1:]
	}
	return parts
}

func parseText(text string) (m *tModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p := &textParser{s: text}
	m = &tModule{aliases: map[string]string{}}
	for {
		p.skipSpaces()
		if p.i >= len(p.s) {
			break
		}
		if p.peek("#") {
			eq := strings.Index(p.s[p.i:], " = ")
			name := p.s[p.i : p.i+eq]
			p.i += eq + 3
			p.eat("loc(")
			end := matching(p.s, p.i-1)
			m.aliases[name] = p.s[p.i:end]
			p.i = end + 1
			continue
		}
		if m.top != nil {
			p.fail("expected one top-level op")
		}
		m.top = p.op()
	}
	if m.top == nil {
		return nil, fmt.Errorf("no op in text")
	}
	return m, nil
}

var valueName = regexp.MustCompile(`^%[A-Za-z0-9_$.#]+`)

func (p *textParser) value() string {
	v := valueName.FindString(p.s[p.i:])
	if v == "" {
		p.fail("expected a value name")
	}
	p.i += len(v)
	return v
}

func (p *textParser) op() *tOp {
	op := &tOp{}
	if p.peek("%") {
		name := p.value()
		n := 1
		if p.try(":") {
			fmt.Sscanf(p.s[p.i:], "%d", &n)
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
		}
		if n == 1 {
			op.defs = []string{name}
		} else {
			for k := 0; k < n; k++ {
				op.defs = append(op.defs, fmt.Sprintf("%s#%d", name, k))
			}
		}
		p.eat(" = ")
	}
	if !p.peek(`"`) {
		p.fail("expected an op name")
	}
	end := stringEnd(p.s, p.i)
	op.name = p.s[p.i+1 : end-1]
	p.i = end
	p.eat("(")
	for !p.try(")") {
		op.operands = append(op.operands, p.value())
		p.try(", ")
	}
	if p.try("[") {
		for !p.try("]") {
			j := scan(p.s, p.i, ",]")
			op.successors = append(op.successors, strings.TrimSpace(p.s[p.i:j]))
			p.i = j
			p.try(",")
			p.try(" ")
		}
	}
	if p.try(" <{") {
		end := matching(p.s, p.i-1)
		op.props = namedEntries(p.s[p.i:end])
		p.i = end + 1
		p.eat(">")
	}
	if p.try(" (") {
		for {
			op.regions = append(op.regions, p.region())
			if !p.try(", ") {
				break
			}
		}
		p.eat(")")
	}
	if p.try(" {") {
		end := matching(p.s, p.i-1)
		op.attrs = namedEntries(p.s[p.i:end])
		p.i = end + 1
	}
	p.eat(" : (")
	end = matching(p.s, p.i-1)
	op.inTypes = splitTop(p.s[p.i:end])
	p.i = end + 1
	p.eat(" -> ")
	if p.peek("(") {
		end := matching(p.s, p.i)
		op.outTypes = splitTop(p.s[p.i+1 : end])
		p.i = end + 1
	} else {
		end := scan(p.s, p.i, " \n")
		op.outTypes = []string{p.s[p.i:end]}
		p.i = end
	}
	if p.try(" loc(") {
		end := matching(p.s, p.i-1)
		op.loc = p.s[p.i:end]
		p.i = end + 1
	}
	p.try("\n")
	return op
}

func (p *textParser) region() *tRegion {
	r := &tRegion{}
	p.eat("{")
	p.try("\n")
	var cur *tBlock
	for {
		for p.i < len(p.s) && p.s[p.i] == ' ' {
			p.i++
		}
		if p.try("}") {
			return r
		}
		if p.peek("^") {
			cur = &tBlock{}
			r.blocks = append(r.blocks, cur)
			j := scan(p.s, p.i, "(:")
			cur.label = p.s[p.i:j]
			p.i = j
			if p.try("(") {
				for !p.try(")") {
					a := tArg{name: p.value()}
					p.eat(": ")
					j := scan(p.s, p.i, ",) ")
					a.typ = p.s[p.i:j]
					p.i = j
					if p.try(" loc(") {
						end := matching(p.s, p.i-1)
						a.loc = p.s[p.i:end]
						p.i = end + 1
					}
					cur.args = append(cur.args, a)
					p.try(", ")
				}
			}
			p.eat(":\n")
			continue
		}
		if cur == nil {
			cur = &tBlock{}
			r.blocks = append(r.blocks, cur)
		}
		cur.ops = append(cur.ops, p.op())
	}
}

// namedEntries splits the inside of an attribute dictionary.
func namedEntries(s string) []tNamed {
	var out []tNamed
	for _, e := range splitTop(s) {
		eq := scan(e, 0, "=")
		if eq >= len(e) {
			out = append(out, tNamed{name: unquoteKey(strings.TrimSpace(e)), value: "unit"})
			continue
		}
		out = append(out, tNamed{name: unquoteKey(strings.TrimSpace(e[:eq])), value: strings.TrimSpace(e[eq+1:])})
	}
	return out
}

func unquoteKey(k string) string {
	if strings.HasPrefix(k, `"`) {
		return unescape(k[1 : len(k)-1])
	}
	return k
}

// unescape undoes MLIR's string escapes (\\, \", \n, \t and \XX).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '\\', '"':
			b.WriteByte(s[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		default:
			var c byte
			fmt.Sscanf(s[i:i+2], "%02X", &c)
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// resolveLoc expands #locN aliases in a location's inner text.
func (m *tModule) resolveLoc(inner string, depth int) string {
	if depth > 200 {
		return inner
	}
	return locAlias.ReplaceAllStringFunc(inner, func(name string) string {
		if def, ok := m.aliases[name]; ok {
			return m.resolveLoc(def, depth+1)
		}
		return name
	})
}

var locAlias = regexp.MustCompile(`#loc\d*\b`)

var vhloScalarNames = map[string]string{
	"bool_v1": "i1", "index_v1": "index", "none_v1": "none", "token_v1": "!stablehlo.token",
	"witness_v1": "!shape.witness", "tf31_v1": "tf32",
}

var dimsPrefix = regexp.MustCompile(`^((?:\d+|\?)x)*`)

// norm rewrites VHLO spellings into builtin ones, leaving builtin text
// alone. Attributes and types of other dialects become #opaque / !opaque.
func norm(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '"':
			j := stringEnd(s, i)
			b.WriteString(s[i:j])
			i = j
		case strings.HasPrefix(s[i:], "#vhlo<"):
			j := matching(s, i+5)
			b.WriteString(s[i : j+1])
			i = j + 1
		case strings.HasPrefix(s[i:], "#vhlo.") || strings.HasPrefix(s[i:], "!vhlo."):
			k := i + 6
			for k < len(s) && (isIdentByte(s[k])) {
				k++
			}
			name := s[i+6 : k]
			inner, next := "", k
			if k < len(s) && s[k] == '<' {
				j := matching(s, k)
				inner, next = s[k+1:j], j+1
			}
			if s[i] == '#' {
				b.WriteString(normVhloAttr(name, inner))
			} else {
				b.WriteString(normVhloType(name, inner))
			}
			i = next
		case strings.HasPrefix(s[i:], "!quant.") || strings.HasPrefix(s[i:], "!stablehlo.") || strings.HasPrefix(s[i:], "!shape."):
			// Builtin-side spellings of what this package prints: keep.
			k := i + 1
			for k < len(s) && (isIdentByte(s[k]) || s[k] == '.') {
				k++
			}
			if k < len(s) && s[k] == '<' {
				k = matching(s, k) + 1
			}
			b.WriteString(s[i:k])
			i = k
		case (s[i] == '#' || s[i] == '!') && i+1 < len(s) && isIdentByte(s[i+1]):
			k := i + 1
			for k < len(s) && (isIdentByte(s[k]) || s[k] == '.') {
				k++
			}
			if k < len(s) && s[k] == '<' {
				k = matching(s, k) + 1
			}
			if s[i] == '#' {
				b.WriteString("#opaque")
			} else {
				b.WriteString("!opaque")
			}
			i = k
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func normVhloAttr(name, inner string) string {
	switch name {
	case "string_v1", "bool_v1":
		return inner
	case "integer_v1", "float_v1", "tensor_v1", "type_v1", "array_v1":
		return norm(inner)
	case "dict_v1":
		body := strings.TrimSuffix(strings.TrimPrefix(inner, "{"), "}")
		var parts []string
		for _, e := range splitTop(body) {
			eq := scan(e, 0, "=")
			key := norm(strings.TrimSpace(e[:eq]))
			parts = append(parts, keyString(unquoteKey(key))+" = "+norm(strings.TrimSpace(e[eq+1:])))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "#vhlo." + name + "<" + norm(inner) + ">"
}

func normVhloType(name, inner string) string {
	if s, ok := vhloScalarNames[name]; ok {
		return s
	}
	switch name {
	case "tensor_v1", "buffer_v1":
		parts := splitTop(inner)
		dims := dimsPrefix.FindString(parts[0])
		s := dims + norm(parts[0][len(dims):])
		if len(parts) > 1 {
			s += ", " + norm(parts[1])
		}
		if name == "buffer_v1" {
			return "!stablehlo.buffer<" + s + ">"
		}
		return "tensor<" + s + ">"
	case "unranked_tensor_v1":
		return "tensor<*x" + norm(inner) + ">"
	case "complex_v1":
		return "complex<" + norm(inner) + ">"
	case "tuple_v1":
		return "tuple<" + norm(inner) + ">"
	case "future_v1":
		return "!stablehlo.future<" + norm(inner) + ">"
	case "func_v1":
		// The arrow at depth zero follows the closing paren of the inputs.
		// VHLO prints an empty type list as "()", inside the parens of the
		// inputs too: (()) -> ().
		close := matching(inner, 0)
		insText := inner[1:close]
		if insText == "()" {
			insText = ""
		}
		ins := "(" + norm(insText) + ")"
		outsText := strings.TrimPrefix(inner[close+1:], " -> ")
		var outs []string
		if outsText != "()" {
			outs = splitTop(outsText)
		}
		for i := range outs {
			outs[i] = norm(outs[i])
		}
		if len(outs) == 1 && !strings.HasPrefix(outs[0], "(") {
			return ins + " -> " + outs[0]
		}
		return ins + " -> (" + strings.Join(outs, ", ") + ")"
	case "quant_v1", "quant_per_axis_v1":
		return normQuant(name, inner)
	}
	if strings.HasSuffix(name, "_v1") && inner == "" {
		return strings.TrimSuffix(name, "_v1") // f32_v1, i32_v1, ui8_v1, f8E4M3FN_v1, ...
	}
	return "!vhlo." + name + "<" + norm(inner) + ">"
}

// normQuant rewrites !vhlo.quant_v1<st:et, scale:zp, min:max, flags> (and
// the per-axis form) into the !quant.uniform spelling of types.go.
func normQuant(name, inner string) string {
	parts := splitTop(inner)
	se := strings.SplitN(parts[0], ":", 2)
	storage, expressed := norm(se[0]), norm(se[1])
	flags := parts[len(parts)-1]
	if w := strings.TrimLeft(storage, "iu"); flags == "1" {
		storage = "i" + w
	} else {
		storage = "u" + w
	}
	minMax := parts[len(parts)-2]
	mm := strings.SplitN(minMax, ":", 2)
	head := "!quant.uniform<" + storage + "<" + mm[0] + ":" + mm[1] + ">:" + expressed
	if name == "quant_v1" {
		return head + ", " + parts[1] + ">"
	}
	scales := splitTop(strings.Trim(parts[2], "[]"))
	zps := splitTop(strings.Trim(parts[3], "[]"))
	var pairs []string
	for i := range scales {
		pairs = append(pairs, scales[i]+":"+zps[i])
	}
	return head + ":" + parts[1] + ", {" + strings.Join(pairs, ",") + "}>"
}

var ourOpaque = regexp.MustCompile(`([#!])[A-Za-z0-9_]+<opaque "0x[0-9A-F]*">`)

// normOurs maps this package's opaque spellings to the markers norm uses.
func normOurs(s string) string {
	return ourOpaque.ReplaceAllString(s, "${1}opaque")
}
