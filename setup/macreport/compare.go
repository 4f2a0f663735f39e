package macreport

// Row is one case of the conformance suite as each run saw it.
type Row struct {
	Name       string
	GPU, Model *Case // nil where that run has no such case, or did not run
	// Differs: both runs ran, and the case is in one only, has another
	// result, or failed in both with another text.
	Differs bool
	// Inherited: the case failed on a side because its subtests did
	// (Run.FailsInSubtests); its text is then not compared or shown.
	InheritedGPU, InheritedModel bool
}

// Compare pairs the cases of the GPU's and the model's runs of the suite,
// the cases that differ first, then the rest; within each group in the
// order the model's run started them, then the cases only the GPU's run
// has. Either run may be nil (it did not run): then nothing differs.
func Compare(gpu, model *Run) []Row {
	var names []string
	seen := map[string]bool{}
	index := func(r *Run) map[string]*Case {
		m := map[string]*Case{}
		if r == nil {
			return m
		}
		for i := range r.Cases {
			c := &r.Cases[i]
			m[c.Name] = c
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
		return m
	}
	onModel := index(model)
	onGPU := index(gpu)
	both := gpu != nil && model != nil
	var differ, same []Row
	for _, n := range names {
		row := Row{Name: n, GPU: onGPU[n], Model: onModel[n]}
		row.InheritedGPU = gpu != nil && gpu.FailsInSubtests(n)
		row.InheritedModel = model != nil && model.FailsInSubtests(n)
		row.Differs = both && differs(row.GPU, row.Model, row.InheritedGPU || row.InheritedModel)
		if row.Differs {
			differ = append(differ, row)
		} else {
			same = append(same, row)
		}
	}
	return append(differ, same...)
}

// differs: a case on one side only, another result, or two failures that
// say different things. Two passes (or skips) that logged different lines
// are the same: logs carry timings and the device's name. So are two
// failures of a parent whose subtests failed (inherited): its text is its
// log, and the subtests' rows say what differs.
func differs(a, b *Case, inherited bool) bool {
	switch {
	case a == nil || b == nil:
		return true
	case a.Result != b.Result:
		return true
	case a.Result == Fail && !inherited:
		return a.Output != b.Output
	}
	return false
}
