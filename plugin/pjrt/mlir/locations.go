package mlir

import (
	"strconv"
	"strings"
)

// LocKind is the kind of a location attribute.
type LocKind uint8

const (
	LocUnknown  LocKind = iota
	LocFile             // "file":line:col, possibly a range
	LocName             // "name"(child)
	LocCallSite         // callsite(callee at caller)
	LocFused            // fused[a, b] or fused<metadata>[a, b]
	LocOpaque           // a location of a dialect we do not decode
)

// LocAttr is a location attribute as stored: the tree jax builds from a
// traceback (name locations around call sites of file locations).
type LocAttr struct {
	Kind LocKind
	// LocFile
	File                       string
	Line, Col, EndLine, EndCol int
	HasCol, HasEnd, HasEndLine bool
	// LocName: Name and Children[0] (nil child means unknown).
	Name string
	// LocCallSite: Children[0] is the callee, Children[1] the caller.
	// LocFused: the fused locations.
	Children []*LocAttr
	Metadata Attr // LocFused with metadata
	Opaque   Attr // LocOpaque
}

// Location is the part of an op's location a user wants in an error
// message: the innermost source position and the name jax gave the op.
type Location struct {
	File      string // empty if the op has no file location
	Line, Col int
	Name      string   // the outermost name, e.g. "jit(f)/jit(main)/add"
	Attr      *LocAttr // the whole location, for printing; nil if absent
}

// String prints file:line:col, with the name in front when there is one.
func (l Location) String() string {
	var pos string
	if l.File != "" {
		pos = l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col)
	}
	switch {
	case l.Name != "" && pos != "":
		return l.Name + " at " + pos
	case l.Name != "":
		return l.Name
	case pos != "":
		return pos
	}
	return "unknown location"
}

// summarize looks through name, call-site and fused locations for the
// first file position, preferring the callee of a call site (jax puts the
// innermost user frame there) and the first of fused locations.
func summarize(loc *LocAttr) Location {
	out := Location{Attr: loc}
	// Location entries are shared, so the tree is a DAG: remember the
	// nodes already searched, or a hostile file could make this
	// exponential.
	seen := map[*LocAttr]bool{}
	var walk func(l *LocAttr, depth int) bool
	walk = func(l *LocAttr, depth int) bool {
		if l == nil || depth > maxNesting || seen[l] {
			return false
		}
		seen[l] = true
		switch l.Kind {
		case LocFile:
			out.File, out.Line, out.Col = l.File, l.Line, l.Col
			return true
		case LocName:
			if out.Name == "" {
				out.Name = l.Name
			}
		}
		for _, c := range l.Children {
			if walk(c, depth+1) {
				return true
			}
		}
		return false
	}
	walk(loc, 0)
	return out
}

func (l *LocAttr) String() string { return "loc(" + l.inner() + ")" }

func (l *LocAttr) inner() string {
	if l == nil {
		return "unknown"
	}
	switch l.Kind {
	case LocFile:
		s := quote(l.File) + ":" + strconv.Itoa(l.Line)
		if l.HasCol {
			s += ":" + strconv.Itoa(l.Col)
		}
		if l.HasEnd {
			s += " to "
			if l.HasEndLine {
				s += strconv.Itoa(l.EndLine)
			}
			s += ":" + strconv.Itoa(l.EndCol)
		}
		return s
	case LocName:
		if len(l.Children) == 1 && l.Children[0] != nil && l.Children[0].Kind != LocUnknown {
			return quote(l.Name) + "(" + l.Children[0].inner() + ")"
		}
		return quote(l.Name)
	case LocCallSite:
		return "callsite(" + l.Children[0].inner() + " at " + l.Children[1].inner() + ")"
	case LocFused:
		parts := make([]string, len(l.Children))
		for i, c := range l.Children {
			parts[i] = c.inner()
		}
		s := "fused"
		if l.Metadata != nil {
			s += "<" + attrString(l.Metadata) + ">"
		}
		return s + "[" + strings.Join(parts, ", ") + "]"
	case LocOpaque:
		return attrString(l.Opaque)
	}
	return "unknown"
}
