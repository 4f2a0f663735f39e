package tasks

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/metalplug/metalplug/setup/macreport"
)

// machine is what the Mac report says about where it ran: macOS's version
// and build and the chip on a Mac (what an issue about the GPU needs
// first), the system and CPU elsewhere; the Go that ran the tests and the
// library's commit.
func machine() macreport.Machine {
	m := macreport.Machine{Go: strings.TrimPrefix(commandLine("go", "version"), "go version "), Commit: commit()}
	if runtime.GOOS == "darwin" {
		m.OS = "macOS " + commandLine("sw_vers", "-productVersion") + " (" + commandLine("sw_vers", "-buildVersion") + ")"
		m.Chip = commandLine("sysctl", "-n", "machdep.cpu.brand_string")
		return m
	}
	m.OS = commandLine("uname", "-srm")
	m.Chip = cpuModel()
	return m
}

// commandLine is a command's output on one line, or what went wrong.
func commandLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown (" + name + ": " + err.Error() + ")"
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// commit is the checkout's commit, and whether the tree has changes the
// commit does not hold (the report is then of something else).
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " with uncommitted changes"
	}
	return c
}

// cpuModel is /proc/cpuinfo's model name, off macOS.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
