package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// file is what the generator needs of one .proto file.
type file struct {
	imports []string
	decls   map[string]*decl // by full name (package and enclosing messages)
}

// decl is a message or an enum.
type decl struct {
	kind     string // "message" or "enum"
	fields   []protoField
	reserved []string // reserved field (or value) names
	values   []string // an enum's value names, in order
}

type protoField struct {
	name, typ       string
	repeated, isMap bool
}

type token struct {
	text string
	str  bool // a string literal; text is its content
	line int
}

// tokenize splits .proto source into identifiers (dotted names included),
// numbers, string literals and single punctuation characters, dropping
// comments.
func tokenize(src string) ([]token, error) {
	var toks []token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				if j < len(src) && src[j] == '\n' {
					return nil, fmt.Errorf("line %d: newline in string", line)
				}
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("line %d: unterminated string", line)
			}
			toks = append(toks, token{text: src[i+1 : j], str: true, line: line})
			i = j + 1
		case c == '_' || c == '.' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
				j++
			}
			toks = append(toks, token{text: src[i:j], line: line})
			i = j
		default:
			toks = append(toks, token{text: string(c), line: line})
			i++
		}
	}
	return toks, nil
}

type parser struct {
	name string
	toks []token
	pos  int
	f    *file
}

func parseFile(root, name string) (*file, error) {
	src, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return nil, err
	}
	toks, err := tokenize(string(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{name: name, toks: toks, f: &file{decls: map[string]*decl{}}}
	if err := p.file(); err != nil {
		return nil, err
	}
	return p.f, nil
}

func (p *parser) errorf(format string, args ...any) error {
	line := 0
	if p.pos < len(p.toks) {
		line = p.toks[p.pos].line
	} else if len(p.toks) > 0 {
		line = p.toks[len(p.toks)-1].line
	}
	return fmt.Errorf("%s:%d: %s", p.name, line, fmt.Sprintf(format, args...))
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) && !p.toks[p.pos].str {
		return p.toks[p.pos].text
	}
	return ""
}

func (p *parser) next() (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, p.errorf("unexpected end of file")
	}
	t := p.toks[p.pos]
	p.pos++
	return t, nil
}

func (p *parser) expect(text string) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.str || t.text != text {
		p.pos--
		return p.errorf("want %q, have %q", text, t.text)
	}
	return nil
}

func (p *parser) ident() (string, error) {
	t, err := p.next()
	if err != nil {
		return "", err
	}
	if t.str || !(t.text[0] == '_' || t.text[0] == '.' || unicode.IsLetter(rune(t.text[0]))) {
		p.pos--
		return "", p.errorf("want a name, have %q", t.text)
	}
	return t.text, nil
}

// skipStatement skips to the ';' ending a statement, over any bracketed
// values (an option's aggregate value, say).
func (p *parser) skipStatement() error {
	depth := 0
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		if t.str {
			continue
		}
		switch t.text {
		case "{", "[", "(", "<":
			depth++
		case "}", "]", ")", ">":
			depth--
		case ";":
			if depth == 0 {
				return nil
			}
		}
	}
}

// skipBlock skips a '{' ... '}' block, the opening brace next.
func (p *parser) skipBlock() error {
	if err := p.expect("{"); err != nil {
		return err
	}
	for depth := 1; depth > 0; {
		t, err := p.next()
		if err != nil {
			return err
		}
		if !t.str && t.text == "{" {
			depth++
		} else if !t.str && t.text == "}" {
			depth--
		}
	}
	return nil
}

func (p *parser) file() error {
	pkg := ""
	for p.pos < len(p.toks) {
		switch kw := p.peek(); kw {
		case "syntax", "edition", "option":
			if err := p.skipStatement(); err != nil {
				return err
			}
		case "package":
			p.pos++
			name, err := p.ident()
			if err != nil {
				return err
			}
			pkg = name
			if err := p.expect(";"); err != nil {
				return err
			}
		case "import":
			p.pos++
			if w := p.peek(); w == "public" || w == "weak" {
				p.pos++
			}
			t, err := p.next()
			if err != nil {
				return err
			}
			if !t.str {
				return p.errorf("want an import path, have %q", t.text)
			}
			p.f.imports = append(p.f.imports, t.text)
			if err := p.expect(";"); err != nil {
				return err
			}
		case "message", "enum":
			if err := p.declaration(kw, pkg); err != nil {
				return err
			}
		case "service", "extend":
			if err := p.skipNamedBlock(); err != nil {
				return err
			}
		case ";":
			p.pos++
		default:
			return p.errorf("unexpected %q at the top level", kw)
		}
	}
	return nil
}

func join(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "." + name
}

// declaration parses a message or enum (kw) declared in scope.
func (p *parser) declaration(kw, scope string) error {
	if kw == "message" {
		return p.message(scope)
	}
	return p.enum(scope)
}

// skipNamedBlock skips "<keyword> Name { ... }" (service, extend), which
// declare no fields of DebugOptions.
func (p *parser) skipNamedBlock() error {
	p.pos++
	if _, err := p.ident(); err != nil {
		return err
	}
	return p.skipBlock()
}

// message parses "message Name { ... }" declared in scope.
func (p *parser) message(scope string) error {
	full, d, err := p.open(scope, "message")
	if err != nil {
		return err
	}
	return p.messageBody(full, d, "}")
}

// open reads "<kind> Name {" and declares Name in scope.
func (p *parser) open(scope, kind string) (string, *decl, error) {
	p.pos++ // the keyword
	name, err := p.ident()
	if err != nil {
		return "", nil, err
	}
	full := join(scope, name)
	d := &decl{kind: kind}
	p.f.decls[full] = d
	if err := p.expect("{"); err != nil {
		return "", nil, err
	}
	return full, d, nil
}

// messageBody parses fields and declarations up to end ("}" of a message
// or of a oneof).
func (p *parser) messageBody(full string, d *decl, end string) error {
	for {
		switch kw := p.peek(); kw {
		case end:
			p.pos++
			return nil
		case "":
			return p.errorf("unexpected string or end of file in message %s", full)
		case ";":
			p.pos++
		case "message", "enum":
			if err := p.declaration(kw, full); err != nil {
				return err
			}
		case "option", "extensions":
			if err := p.skipStatement(); err != nil {
				return err
			}
		case "extend":
			if err := p.skipNamedBlock(); err != nil {
				return err
			}
		case "reserved":
			names, err := p.reserved()
			if err != nil {
				return err
			}
			d.reserved = append(d.reserved, names...)
		case "oneof":
			p.pos++
			if _, err := p.ident(); err != nil {
				return err
			}
			if err := p.expect("{"); err != nil {
				return err
			}
			if err := p.messageBody(full, d, "}"); err != nil {
				return err
			}
		case "map":
			p.pos++
			if err := p.expect("<"); err != nil {
				return err
			}
			if err := p.skipTo(">"); err != nil {
				return err
			}
			if err := p.field(d, protoField{isMap: true, typ: "map"}); err != nil {
				return err
			}
		case "group":
			return p.errorf("groups are not supported (message %s)", full)
		default:
			f := protoField{}
			if kw == "optional" || kw == "required" || kw == "repeated" {
				f.repeated = kw == "repeated"
				p.pos++
			}
			if p.peek() == "group" {
				return p.errorf("groups are not supported (message %s)", full)
			}
			typ, err := p.ident()
			if err != nil {
				return err
			}
			f.typ = typ
			if err := p.field(d, f); err != nil {
				return err
			}
		}
	}
}

// skipTo skips past the next token text.
func (p *parser) skipTo(text string) error {
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		if !t.str && t.text == text {
			return nil
		}
	}
}

// field parses "name = number [options];", the type already read into f.
func (p *parser) field(d *decl, f protoField) error {
	name, err := p.ident()
	if err != nil {
		return err
	}
	f.name = name
	if err := p.expect("="); err != nil {
		return err
	}
	if _, err := p.next(); err != nil { // the number
		return err
	}
	if err := p.skipStatement(); err != nil { // options, then ';'
		return err
	}
	d.fields = append(d.fields, f)
	return nil
}

// reserved parses "reserved ...;" and returns the names in it (quoted in
// proto2 and proto3, bare identifiers in editions), not the numbers.
func (p *parser) reserved() ([]string, error) {
	p.pos++ // "reserved"
	var names []string
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		switch {
		case t.str:
			names = append(names, t.text)
		case t.text == ";":
			return names, nil
		case t.text == "," || t.text == "to" || t.text == "max" || t.text == "-" || unicode.IsDigit(rune(t.text[0])):
		case t.text[0] == '_' || unicode.IsLetter(rune(t.text[0])):
			names = append(names, t.text)
		default:
			return nil, p.errorf("unexpected %q in reserved", t.text)
		}
	}
}

// enum parses "enum Name { ... }" declared in scope.
func (p *parser) enum(scope string) error {
	full, d, err := p.open(scope, "enum")
	if err != nil {
		return err
	}
	for {
		switch kw := p.peek(); kw {
		case "}":
			p.pos++
			return nil
		case "":
			return p.errorf("unexpected string or end of file in enum %s", full)
		case ";":
			p.pos++
		case "option":
			if err := p.skipStatement(); err != nil {
				return err
			}
		case "reserved":
			names, err := p.reserved()
			if err != nil {
				return err
			}
			d.reserved = append(d.reserved, names...)
		default:
			v, err := p.ident()
			if err != nil {
				return err
			}
			if err := p.expect("="); err != nil {
				return err
			}
			d.values = append(d.values, v)
			if err := p.skipStatement(); err != nil { // number, options, ';'
				return err
			}
		}
	}
}
