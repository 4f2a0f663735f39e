package fx

import (
	"os"
	"testing"
)

var side = os.Getenv("SIDE")

func TestConformance(t *testing.T) {
	if side == "gpu" {
		t.Logf("on Apple GPU Apple M2 Pro through Metal Performance Shaders Graph")
	} else {
		t.Logf("on MPSGraph model (macOS 15.0): the Metal lowering run against a model of MPSGraph, on the CPU; not a GPU")
	}
	t.Run("Ops", func(t *testing.T) {
		t.Run("add", func(t *testing.T) {})
		t.Run("fft", func(t *testing.T) {
			if side == "gpu" {
				t.Errorf("fft float32 [8]: element 3 = 0.5, want 0.25")
			} else {
				t.Errorf("fft float32 [8]: element 3 = 0.125, want 0.25")
			}
		})
		t.Run("rng", func(t *testing.T) { t.Errorf("rng: philox known answer 0 = 7, want 9\n\tsecond line of the message") })
		t.Run("sort", func(t *testing.T) {
			if side == "gpu" {
				t.Fatalf("sort: MPSGraph: sortWithTensor: unsupported data type int64")
			}
		})
	})
	t.Logf("3 on the host: iota: iota of bool")
}

func TestOlderReleases(t *testing.T) {}

func TestTrace(t *testing.T) {
	if side == "gpu" {
		t.Skip("no trace on this device")
	}
}

func TestGPUOnly(t *testing.T) {
	if side != "gpu" {
		t.Skip("gpu only")
	}
}

func TestCrash(t *testing.T) {
	if side == "crash" {
		t.Run("inner", func(t *testing.T) {
			panic("MPSGraph: failed assertion")
		})
	}
}
