package mlir

import (
	"strconv"
	"strings"
)

// String prints the module in MLIR's generic op form, with types and
// attributes in their builtin spelling and without locations.
func (m *Module) String() string { return m.Format(false) }

// Format prints the module in generic op form, with a loc(...) after each
// op and block argument if withLocations is set.
func (m *Module) Format(withLocations bool) string {
	if m.Body == nil {
		return ""
	}
	pr := printer{locs: withLocations}
	pr.op(m.Body, 0)
	return pr.b.String()
}

// String prints the op and everything nested in it in generic form.
func (op *Operation) String() string {
	pr := printer{}
	pr.op(op, 0)
	return strings.TrimSuffix(pr.b.String(), "\n")
}

type printer struct {
	b    strings.Builder
	locs bool
}

func (pr *printer) indent(n int) { pr.b.WriteString(strings.Repeat("  ", n)) }

func (pr *printer) op(op *Operation, depth int) {
	pr.indent(depth)
	if n := len(op.Results); n > 0 {
		if op.Results[0].ID >= 0 {
			pr.b.WriteString(op.Results[0].Name())
		} else {
			pr.b.WriteString("%_")
		}
		if n > 1 {
			pr.b.WriteString(":" + strconv.Itoa(n))
		}
		pr.b.WriteString(" = ")
	}
	pr.b.WriteString(quote(op.Name) + "(")
	for i, v := range op.Operands {
		if i > 0 {
			pr.b.WriteString(", ")
		}
		pr.b.WriteString(v.Name())
	}
	pr.b.WriteString(")")
	if len(op.Successors) > 0 {
		pr.b.WriteString("[")
		for i, s := range op.Successors {
			if i > 0 {
				pr.b.WriteString(", ")
			}
			pr.b.WriteString("^bb" + strconv.Itoa(s.ID))
		}
		pr.b.WriteString("]")
	}
	if op.NumProperties > 0 {
		pr.b.WriteString(" <{" + namedList(op.Attrs[:op.NumProperties]) + "}>")
	}
	if len(op.Regions) > 0 {
		pr.b.WriteString(" (")
		for i, r := range op.Regions {
			if i > 0 {
				pr.b.WriteString(", ")
			}
			pr.region(r, depth)
		}
		pr.b.WriteString(")")
	}
	if len(op.Attrs) > op.NumProperties {
		pr.b.WriteString(" {" + namedList(op.Attrs[op.NumProperties:]) + "}")
	}
	pr.b.WriteString(" : (")
	for i, v := range op.Operands {
		if i > 0 {
			pr.b.WriteString(", ")
		}
		pr.b.WriteString(typeString(v.Type))
	}
	pr.b.WriteString(") -> ")
	results := make([]Type, len(op.Results))
	for i, v := range op.Results {
		results[i] = v.Type
	}
	if len(results) == 1 {
		pr.b.WriteString(resultList(results))
	} else {
		pr.b.WriteString("(" + typeList(results) + ")")
	}
	if pr.locs && op.Loc.Attr != nil {
		pr.b.WriteString(" " + op.Loc.Attr.String())
	}
	pr.b.WriteString("\n")
}

func (pr *printer) region(r *Region, depth int) {
	pr.b.WriteString("{\n")
	for i, b := range r.Blocks {
		if i > 0 || len(b.Args) > 0 {
			pr.indent(depth)
			pr.b.WriteString("^bb" + strconv.Itoa(b.ID))
			if len(b.Args) > 0 {
				pr.b.WriteString("(")
				for j, a := range b.Args {
					if j > 0 {
						pr.b.WriteString(", ")
					}
					pr.b.WriteString(a.Name() + ": " + typeString(a.Type))
					if pr.locs && a.Loc.Attr != nil {
						pr.b.WriteString(" " + a.Loc.Attr.String())
					}
				}
				pr.b.WriteString(")")
			}
			pr.b.WriteString(":\n")
		}
		for _, op := range b.Ops {
			pr.op(op, depth+1)
		}
	}
	pr.indent(depth)
	pr.b.WriteString("}")
}
