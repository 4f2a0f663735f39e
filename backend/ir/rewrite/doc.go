// Package rewrite turns a program's control flow into straight-line code
// where the meaning allows it, so that more of a program can run on a
// driver that has no control flow (MPSGraph): calls inlined (InlineCalls),
// loops of a trip count known when the program is compiled unrolled
// (TripCount, Unroll), cases of side-effect-free branches computed whole
// and chosen by select (CaseToSelect), and what those leave unused removed
// (Simplify).
//
// Every rewrite is pure: it never modifies its input (programs are shared
// and cached by key), and returns a new program that computes bit for bit
// what the input computes, with the same parameters and result types, and
// that passes ir.Verify. A program the rewrite has nothing to do on comes
// back as the same pointer, so a caller can tell "unchanged" by comparing
// pointers. The result may share regions and attribute values with the
// input; neither is ever written to.
package rewrite
