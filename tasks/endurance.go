package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/install"
	"github.com/metalplug/metalplug/setup/toolchain"
)

// enduranceDrivers are the drivers the long runs run on: off macOS the
// host reference driver and the Metal driver's lowering on the model of
// MPSGraph; on a Mac the GPU.
func enduranceDrivers(goos string) []string {
	if goos == "darwin" {
		return []string{"metal"}
	}
	return []string{"host", "metal-model"}
}

// maskSeeds is how many seeds TestMobileNetV2MaskFlips runs at each size
// (METALPLUG_MASK_SEEDS says otherwise, for a quick try of the target).
const maskSeeds = 10

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Endurance runs tests/integration's TestEndurance, the long runs (a Keras
// and a flax/optax training of steps steps each, and both frameworks in
// one process from four threads), and TestMobileNetV2MaskFlips, the
// accuracy of a real model over maskSeeds seeds, once per driver, in a venv with the
// pinned TensorFlow and jax, flax and optax, and the library installed as
// a user's install puts it. Each driver's figures go to
// build/endurance/<driver>.json. The weekly workflow and the release run
// it; it takes about 20 minutes at 10,000 steps here, too long
// for every push.
func Endurance(logf Logf, steps int) error {
	if steps < 100 {
		return fmt.Errorf("endurance: %d steps is too few to see a trend (at least 100; the weekly run takes 10000)", steps)
	}
	tfReq, _, jax, err := frameworks(logf)
	if err != nil {
		return err
	}
	name := "endurance-" + venvPart(tfReq) + "-" + venvPart(jax.Requirement)
	t, err := toolchain.Ensure(toolchain.Options{Venv: name, Base: jax.Base, Requirements: []string{tfReq, jax.Requirement, "flax", "optax"},
		Needs: toolchain.TensorFlow | toolchain.Jax, Root: ".", Out: libraryPath(runtime.GOOS, "endurance"), Log: logf})
	if err != nil {
		return fmt.Errorf("endurance: %w", err)
	}
	r := t.Report
	wrote, err := install.Install(t.Library, r)
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range wrote {
			os.Remove(p)
		}
	}()
	env := append(build.Env(r), "METALPLUG_ENDURANCE_PYTHON="+r.Interpreter.Path, "METALPLUG_ENDURANCE_STEPS="+strconv.Itoa(steps),
		"METALPLUG_MASK_SEEDS="+envOr("METALPLUG_MASK_SEEDS", strconv.Itoa(maskSeeds)))
	for _, drv := range enduranceDrivers(r.GOOS) {
		report, _ := filepath.Abs(filepath.Join("build", "endurance", drv+".json"))
		denv := append(env, "METALPLUG_ENDURANCE_REPORT="+report)
		switch drv {
		case "host":
			denv = append(denv, "METALPLUG_HOST_DEVICE=1")
		case "metal-model":
			denv = append(denv, "METALPLUG_HOST_DEVICE=1", "METALPLUG_DRIVER="+drv)
		}
		logf("== endurance on %s: %d steps", drv, steps)
		if err := run(denv, "go", "test", "-count=1", "-v", "-timeout=180m", "-run=^(TestEndurance|TestMobileNetV2MaskFlips)$", "./tests/integration/"); err != nil {
			return fmt.Errorf("endurance on %s: %w", drv, err)
		}
	}
	return nil
}

// venvPart makes a requirement part of a venv's name: tensorflow-cpu==2.21.*
// is tensorflow-cpu-2.21.
func venvPart(req string) string {
	f := strings.FieldsFunc(req, func(r rune) bool { return strings.ContainsRune("=*<>,! ", r) })
	return strings.Trim(strings.Join(f, "-"), ".-")
}
