// Package workflows lints the CI workflows (ci/workflows, package ci) with
// actionlint, in its tests: the lint is the tools module's, so the library's
// module does not list actionlint.
package workflows
