// Package gpu is the interface between the Metal driver and what runs it:
// the MPSGraph primitives the lowering builds graphs from, the buffers its
// data lives in, and the command queues that run compiled graphs.
//
// The lowering never asks MPSGraph anything: every Tensor carries its shape
// and data type in Go, computed here by each primitive's shape rule. Graph
// checks each call against MPSGraph's contract (ranks, axes, broadcasting,
// element counts, the data types each primitive accepts and the macOS
// release that brought it; see contract.go for the table and where each fact
// comes from) before the call reaches a Backend, so a lowering bug is a Go
// error naming the primitive, on a Mac as much as here, rather than an
// Objective-C exception that aborts the process.
//
// Two implementations stand behind these interfaces: on darwin, a thin
// adapter in package metal that turns each call into the darwinkit send; on
// every OS, package model, which executes graphs in Go with the documented
// semantics of each primitive.
package gpu

import (
	"fmt"
	"slices"
	"strings"
)

// DataType is an MPSDataType: the element types a graph tensor can hold.
type DataType uint8

const (
	Invalid DataType = iota
	Float32
	Float16
	Int8
	Int16
	Int32
	Int64
	UInt8
	UInt16
	UInt32
	UInt64
	Bool
)

var typeNames = [...]string{"invalid", "float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"}

func (d DataType) String() string {
	if int(d) < len(typeNames) {
		return typeNames[d]
	}
	return fmt.Sprintf("DataType(%d)", int(d))
}

// Size is the bytes one element takes.
func (d DataType) Size() int {
	switch d {
	case Float32, Int32, UInt32:
		return 4
	case Float16, Int16, UInt16:
		return 2
	case Int8, UInt8, Bool:
		return 1
	case Int64, UInt64:
		return 8
	}
	return 0
}

// IsFloat reports a floating-point type.
func (d DataType) IsFloat() bool { return d == Float32 || d == Float16 }

// IsInt reports an integer type (bool is not one).
func (d DataType) IsInt() bool { return d >= Int8 && d <= UInt64 }

// IsSigned reports a signed integer type.
func (d DataType) IsSigned() bool { return d >= Int8 && d <= Int64 }

// Tensor is a value of the graph being built: its shape and type, known in
// Go, and the node that computes it. The zero Tensor is no value; a
// primitive given one (after an earlier error) returns the zero Tensor.
type Tensor struct {
	Shape []int
	DType DataType
	ID    int // the node's index in its graph, from 1
}

// Valid reports whether t is a value of some graph.
func (t Tensor) Valid() bool { return t.ID > 0 }

// Size is the number of elements.
func (t Tensor) Size() int { return elements(t.Shape) }

// Rank is the number of dimensions.
func (t Tensor) Rank() int { return len(t.Shape) }

func (t Tensor) String() string { return fmt.Sprintf("%v%v", t.DType, t.Shape) }

func elements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Version is a macOS release.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("macOS %d.%d", v.Major, v.Minor) }

// AtLeast reports whether v is w or later.
func (v Version) AtLeast(w Version) bool {
	return v.Major > w.Major || (v.Major == w.Major && v.Minor >= w.Minor)
}

// ScatterMode is how scatterND combines an update with what is there.
type ScatterMode uint8

const (
	ScatterSet ScatterMode = iota
	ScatterAdd
	ScatterMul
	ScatterMax
	ScatterMin
)

func (m ScatterMode) String() string {
	return [...]string{"set", "add", "mul", "max", "min"}[m]
}

// Conv2D describes a 2-D convolution: NHWC source, HWIO weights, explicit
// padding of zero (the lowering pads the source itself).
type Conv2D struct {
	StrideY, StrideX     int
	DilationY, DilationX int
	Groups               int
}

// Node is one primitive call: what a Backend adds to its graph. Out is the
// result Graph computed; the attribute fields a primitive does not use are
// zero.
type Node struct {
	Op   Op
	Args []Tensor
	Out  Tensor

	Shape   []int    // constants, placeholders, reshape, broadcast
	Axes    []int    // reductions, reverse
	Starts  []int    // slice; left padding
	Ends    []int    // slice; right padding
	Strides []int    // slice
	Axis    int      // concat, gather, gatherAlongAxis, argSort, cumulativeSum; transpose's first dimension
	Axis2   int      // transpose's second dimension
	Value   float64  // constant fill, pad value
	Data    []byte   // constant data, row-major little-endian
	To      DataType // cast and reinterpret targets
	Mode    ScatterMode
	Conv    Conv2D
}

func (n *Node) String() string {
	args := make([]string, len(n.Args))
	for i, a := range n.Args {
		args[i] = a.String()
	}
	return fmt.Sprintf("%s(%s) -> %v", n.Op, strings.Join(args, ", "), n.Out)
}

func clone(v []int) []int { return slices.Clone(v) }
