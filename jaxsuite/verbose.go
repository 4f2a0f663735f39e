package jaxsuite

import (
	"bufio"
	"io"
	"regexp"
	"strings"
)

// UnfinishedMessage is the failure of a test that had started when its
// module's time ran out: it neither passed nor failed in the time given.
const UnfinishedMessage = "did not finish: the module's time limit ended during this test"

// verboseResult matches pytest -v's line for a finished test, with
// pytest-xdist ("[gw0] [ 45%] PASSED tests/x_test.py::T::t") or without
// ("tests/x_test.py::T::t PASSED [ 45%]").
var (
	verboseResult = regexp.MustCompile(`^(?:\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (tests/\S+)|(tests/\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b)`)
	verboseStart  = regexp.MustCompile(`^(tests/\S+::\S+) *$`)
)

// ReadVerboseLog reads the outcomes of a pytest -v run from its log: what
// is left of a module whose run was cut short before pytest wrote its
// JUnit XML. A failure's message is not in those lines; a test that had
// started and has no outcome failed with UnfinishedMessage.
func ReadVerboseLog(r io.Reader) []Result {
	var out []Result
	done := map[string]bool{}
	var started []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " ")
		if m := verboseResult.FindStringSubmatch(line); m != nil {
			word, id := m[1], m[2]
			if id == "" {
				word, id = m[4], m[3]
			}
			if done[id] {
				continue // a test's teardown error after its result
			}
			done[id] = true
			res := Result{ID: id, Outcome: Passed}
			switch word {
			case "FAILED", "ERROR":
				res.Outcome = Failed
			case "SKIPPED", "XFAIL":
				res.Outcome = Skipped
			}
			out = append(out, res)
			continue
		}
		if m := verboseStart.FindStringSubmatch(sc.Text()); m != nil {
			started = append(started, m[1])
		}
	}
	for _, id := range started {
		if !done[id] {
			done[id] = true
			out = append(out, Result{ID: id, Outcome: Failed, Message: UnfinishedMessage})
		}
	}
	return out
}
