package jaxsuite

import (
	"strings"
	"testing"
)

func TestReadVerboseLog(t *testing.T) {
	log := `============================= test session starts ==============================
tests/random_lax_test.py::LaxRandomTest::testA 
[gw1] [  1%] PASSED tests/random_lax_test.py::LaxRandomTest::testA 
tests/random_lax_test.py::LaxRandomTest::testB 
[gw0] [  2%] FAILED tests/random_lax_test.py::LaxRandomTest::testB 
tests/random_lax_test.py::LaxRandomTest::testC 
[gw0] [  3%] SKIPPED tests/random_lax_test.py::LaxRandomTest::testC 
tests/random_lax_test.py::LaxRandomTest::testD 
replacing crashed worker gw0
tests/api_test.py::JitTest::test_one PASSED                               [ 50%]
tests/api_test.py::JitTest::test_two XFAIL                                [100%]
`
	got := ReadVerboseLog(strings.NewReader(log))
	want := []Result{
		{ID: "tests/random_lax_test.py::LaxRandomTest::testA", Outcome: Passed},
		{ID: "tests/random_lax_test.py::LaxRandomTest::testB", Outcome: Failed},
		{ID: "tests/random_lax_test.py::LaxRandomTest::testC", Outcome: Skipped},
		{ID: "tests/api_test.py::JitTest::test_one", Outcome: Passed},
		{ID: "tests/api_test.py::JitTest::test_two", Outcome: Skipped},
		{ID: "tests/random_lax_test.py::LaxRandomTest::testD", Outcome: Failed, Message: UnfinishedMessage},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
