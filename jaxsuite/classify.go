package jaxsuite

import (
	"regexp"
)

// Class is what a failure on the device is put down to.
type Class string

const (
	// ClassOurs: a bug of ours (a wrong value, a missing op, a crash). The
	// default for a failure no rule explains, so that it gets looked at.
	ClassOurs Class = "ours"
	// ClassPolicy: what the platform does on purpose (float64 compute,
	// denormals, one device), where jax's test expects otherwise.
	ClassPolicy Class = "policy"
	// ClassJax: jax itself turns the platform away, for instance through a
	// hard-coded list of platforms.
	ClassJax Class = "jax-side"
	// ClassCPU: the test fails on jax's CPU too; counted apart.
	ClassCPU Class = "cpu-too"
)

// Classes in the order the report shows them.
var Classes = []Class{ClassOurs, ClassPolicy, ClassJax, ClassCPU}

// Rule classifies the failures whose message and test id match its
// patterns (a nil pattern matches anything). Why is the evidence: what the
// match shows and why that is the class.
type Rule struct {
	Name    string
	Class   Class
	Why     string
	Message *regexp.Regexp
	Test    *regexp.Regexp
}

func (r Rule) matches(id, msg string) bool {
	return (r.Message != nil || r.Test != nil) &&
		(r.Message == nil || r.Message.MatchString(msg)) &&
		(r.Test == nil || r.Test.MatchString(id))
}

// The rules not in Rules: the one for a test that fails on CPU too, which
// is decided before any other, and the default.
var (
	CPURule = Rule{Name: "fails on CPU too", Class: ClassCPU,
		Why: "the same test fails in the same checkout on jax's own CPU backend: not the device's doing, and counted apart"}
	DefaultRule = Rule{Name: "unexplained", Class: ClassOurs,
		Why: "matches no rule: a bug of ours until shown otherwise"}
)

// Rules are tried in order; the first that matches classifies.
var Rules = []Rule{}

// Classify puts down one failure on the device by its id and its error line
// (ErrorLine: what the report keeps, so that a report can be classified
// again when the rules change); cpuFailed says whether the same test failed
// on jax's CPU.
func Classify(id, msg string, cpuFailed bool) Rule {
	if cpuFailed {
		return CPURule
	}
	for _, r := range Rules {
		if r.matches(id, msg) {
			return r
		}
	}
	return DefaultRule
}

// AllRules is every rule a failure can be put down to, in report order.
func AllRules() []Rule {
	return append(append([]Rule{CPURule}, Rules...), DefaultRule)
}

// Reclassify applies the current rules to every recorded failure.
func (r *Report) Reclassify() {
	for i := range r.Modules {
		for j := range r.Modules[i].Failures {
			f := &r.Modules[i].Failures[j]
			rule := Classify(f.ID, f.Error, f.Class == ClassCPU)
			f.Class, f.Rule = rule.Class, rule.Name
		}
	}
}
