package jaxsuite

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Outcome is how one test ended.
type Outcome int

const (
	Passed  Outcome = iota
	Failed          // a failure or an error (setup, teardown, collection)
	Skipped         // skipped or an expected failure
)

// Result is one test case of a pytest run.
type Result struct {
	ID      string
	Outcome Outcome
	// Message is what the test raised (or the skip's reason), whole.
	Message string
}

// The parts of pytest's JUnit XML (--junitxml) that are read.
type junitCase struct {
	Classname string       `xml:"classname,attr"`
	Name      string       `xml:"name,attr"`
	Failure   []junitEntry `xml:"failure"`
	Error     []junitEntry `xml:"error"`
	Skipped   []junitEntry `xml:"skipped"`
}

type junitEntry struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// ReadJUnit reads the test cases of pytest's JUnit XML. module is the test
// module's file name (api_test.py), which names each test as pytest's node
// id does: tests/api_test.py::APITest::testFoo.
func ReadJUnit(r io.Reader, module string) ([]Result, error) {
	var out []Result
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("reading the JUnit XML of %s: %w", module, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "testcase" {
			continue
		}
		var c junitCase
		if err := d.DecodeElement(&c, &se); err != nil {
			return out, fmt.Errorf("reading the JUnit XML of %s: %w", module, err)
		}
		out = append(out, c.result(module))
	}
}

func (c junitCase) result(module string) Result {
	r := Result{ID: caseID(module, c.Classname, c.Name)}
	switch {
	case len(c.Failure) > 0 || len(c.Error) > 0:
		r.Outcome = Failed
		for _, e := range append(c.Failure, c.Error...) {
			r.Message = e.message()
			if r.Message != "" {
				break
			}
		}
	case len(c.Skipped) > 0:
		r.Outcome = Skipped
		r.Message = c.Skipped[0].Message
	}
	return r
}

// message is what the entry says: its message attribute, else the last
// "E   " line of the traceback (pytest's line of the exception).
func (e junitEntry) message() string {
	if strings.TrimSpace(e.Message) != "" {
		return e.Message
	}
	var last string
	for _, l := range strings.Split(e.Text, "\n") {
		if rest, ok := strings.CutPrefix(l, "E   "); ok && strings.TrimSpace(rest) != "" {
			last = strings.TrimSpace(rest)
		}
	}
	if last == "" {
		return firstLine(e.Text, 400)
	}
	return last
}

// caseID builds pytest's node id from the JUnit classname (the module's
// dotted path, then the class, if any) and name. A collection error has
// the module's dotted path as its name and no classname: its id is the
// module's file.
func caseID(module, classname, name string) string {
	base := strings.TrimSuffix(module, ".py")
	id := "tests/" + module
	if classname == "" {
		return id
	}
	parts := strings.Split(classname, ".")
	last := parts[len(parts)-1]
	if last != base {
		id += "::" + last
	}
	return id + "::" + name
}

// ErrorLine is the one line a failure's message is shown by: its first two
// non-empty lines, joined (the first often only names the exception, or
// jax's warning puts its reason second), at most 300 bytes, but whole when
// it is the Metal driver's refusal of a program that needs the host
// (GapPattern), whose ops and reasons the report counts.
func ErrorLine(msg string) string {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
		if len(lines) == 2 {
			break
		}
	}
	if len(lines) == 0 {
		return ""
	}
	line := strings.Join(lines, " ")
	if GapPattern.MatchString(line) {
		return line
	}
	return firstLine(line, 300)
}
