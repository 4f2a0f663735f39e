package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where the benchmark ran.
type Machine struct {
	CPU      string // model name
	Logical  int    // logical CPUs the OS offers
	Cores    string // physical cores and sockets, as /proc/cpuinfo tells
	Memory   string
	OS       string
	Kernel   string
	Go       string
	GOARCH   string
	Features string // SIMD features that matter to the kernels
}

func readMachine() Machine {
	m := Machine{Logical: runtime.NumCPU(), Go: runtime.Version(), GOARCH: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		physical := map[string]bool{}
		var phys, cores string
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "model name":
				if m.CPU == "" {
					m.CPU = v
				}
			case "physical id":
				phys = v
				physical[v] = true
			case "cpu cores":
				cores = v
			case "flags":
				if m.Features == "" {
					var f []string
					for _, want := range []string{"sse4_2", "avx", "avx2", "fma", "avx512f"} {
						for _, have := range strings.Fields(v) {
							if have == want {
								f = append(f, want)
							}
						}
					}
					m.Features = strings.Join(f, " ")
				}
			}
		}
		_ = phys
		if cores != "" {
			m.Cores = fmt.Sprintf("%s per socket, %d socket(s)", cores, max(len(physical), 1))
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				f := strings.Fields(v)
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					m.Memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
				}
			}
		}
	}
	m.OS = runtime.GOOS
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load " + strings.Join(f[:3], " ")
}

// busyProcesses lists the processes using more than 5% of a CPU, from a
// one-second top sample.
func busyProcesses() []string {
	out, err := exec.Command("top", "-bn2", "-d1", "-w", "200").Output()
	if err != nil {
		return nil
	}
	// The second sample is the one measured over the interval.
	parts := strings.Split(string(out), "\ntop - ")
	last := parts[len(parts)-1]
	var busy []string
	inTable := false
	self := strconv.Itoa(os.Getpid())
	for _, l := range strings.Split(last, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "PID" {
			inTable = true
			continue
		}
		if !inTable || len(f) < 12 || f[0] == self {
			continue
		}
		cpu, err := strconv.ParseFloat(f[8], 64)
		if err != nil || cpu < 5 || f[11] == "top" {
			continue
		}
		busy = append(busy, fmt.Sprintf("%s (%.0f%% CPU)", strings.Join(f[11:], " "), cpu))
	}
	return busy
}
