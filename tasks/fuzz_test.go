package tasks

import "testing"

func TestCoordinatorDeadline(t *testing.T) {
	race := "fuzz: elapsed: 14s, execs: 15919 (0/sec), new interesting: 40 (total: 1533)\n--- FAIL: FuzzKernel (14.17s)\n    context deadline exceeded\nFAIL\nexit status 1\nFAIL\tgithub.com/x/lower\t14.176s\n"
	for name, c := range map[string]struct {
		out  string
		want bool
	}{
		"the race":       {race, true},
		"a found input":  {"--- FAIL: FuzzKernel (3.1s)\n    --- FAIL: FuzzKernel (0.00s)\n        kernel_test.go:40: wrong\n    Failing input written to testdata/fuzz/FuzzKernel/abc\nFAIL\n", false},
		"a panic":        {"--- FAIL: FuzzKernel (3.1s)\n    context deadline exceeded\npanic: boom\n", false},
		"more said":      {"--- FAIL: FuzzKernel (3.1s)\n    context deadline exceeded\n    fuzzing process hung or terminated unexpectedly\nFAIL\n", false},
		"two failures":   {race + race, false},
		"another reason": {"--- FAIL: FuzzKernel (3.1s)\n    fuzzing process hung or terminated unexpectedly: exit status 2\nFAIL\n", false},
		"no failure":     {"ok\tgithub.com/x/lower\t12.1s\n", false},
	} {
		if got := coordinatorDeadline(c.out); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
