package ir

import (
	"strings"
	"testing"
)

func TestKernelsRegisterOnce(t *testing.T) {
	m := Kernels[int]{}
	m.Register("test", 1, OpAdd, OpSub)
	if m[OpAdd] != 1 || m[OpSub] != 1 || len(m) != 2 {
		t.Fatalf("registered %v", m)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "test: add registered twice") {
			t.Errorf("a second registration of add: panic %v, want one naming the owner and the op", r)
		}
	}()
	m.Register("test", 2, OpMul, OpAdd)
}
