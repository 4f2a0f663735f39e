// Package drivertest is the conformance suite every driver must pass: memory,
// streams, events and the numerics of every IR op. The IR's reference
// interpreter (backend/ir/eval) is the reference for the numerics, and the
// corpus of programs with literal outputs in backend/ir/testdata holds the
// edges (NaN, infinities, signed zeros, integer extremes, empty shapes) that
// both the interpreter and every driver must reproduce; a few ops (the
// random numbers, the FFT, some region forms) are still checked against
// loops of their own here as well.
//
// A driver's tests call Run:
//
//	func TestConformance(t *testing.T) {
//		drivertest.Run(t, func() driver.Driver { return host.New(host.Options{}) })
//	}
package drivertest

import (
	"testing"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
)

// Run runs the whole suite; newDriver is called once per group of subtests.
func Run(t *testing.T, newDriver func() driver.Driver) {
	t.Run("Memory", func(t *testing.T) { testMemory(t, newDriver()) })
	t.Run("Streams", func(t *testing.T) { testStreams(t, newDriver()) })
	t.Run("Events", func(t *testing.T) { testEvents(t, newDriver()) })
	t.Run("Ops", func(t *testing.T) { testOps(t, newDriver()) })
	t.Run("Corpus", func(t *testing.T) { testCorpus(t, newDriver()) })
}

// opTests maps every IR op to its numeric test. testOps fails if ir.Ops()
// names an op missing here, so adding an op to the IR forces a test for it.
var opTests = map[ir.Op]func(t *testing.T, h *harness){
	ir.OpParameter:              testParameter,
	ir.OpConstant:               testConstant,
	ir.OpIota:                   testIota,
	ir.OpNeg:                    unaryTest(ir.OpNeg),
	ir.OpAbs:                    unaryTest(ir.OpAbs),
	ir.OpExp:                    unaryTest(ir.OpExp),
	ir.OpLog:                    unaryTest(ir.OpLog),
	ir.OpSqrt:                   unaryTest(ir.OpSqrt),
	ir.OpRsqrt:                  unaryTest(ir.OpRsqrt),
	ir.OpTanh:                   unaryTest(ir.OpTanh),
	ir.OpLogistic:               unaryTest(ir.OpLogistic),
	ir.OpFloor:                  unaryTest(ir.OpFloor),
	ir.OpCeil:                   unaryTest(ir.OpCeil),
	ir.OpSign:                   unaryTest(ir.OpSign),
	ir.OpErf:                    unaryTest(ir.OpErf),
	ir.OpLog1p:                  unaryTest(ir.OpLog1p),
	ir.OpExpm1:                  unaryTest(ir.OpExpm1),
	ir.OpRound:                  unaryTest(ir.OpRound),
	ir.OpSin:                    unaryTest(ir.OpSin),
	ir.OpCos:                    unaryTest(ir.OpCos),
	ir.OpNot:                    unaryTest(ir.OpNot),
	ir.OpAdd:                    binaryTest(ir.OpAdd),
	ir.OpSub:                    binaryTest(ir.OpSub),
	ir.OpMul:                    binaryTest(ir.OpMul),
	ir.OpDiv:                    binaryTest(ir.OpDiv),
	ir.OpRem:                    binaryTest(ir.OpRem),
	ir.OpMax:                    binaryTest(ir.OpMax),
	ir.OpMin:                    binaryTest(ir.OpMin),
	ir.OpPow:                    binaryTest(ir.OpPow),
	ir.OpAnd:                    binaryTest(ir.OpAnd),
	ir.OpOr:                     binaryTest(ir.OpOr),
	ir.OpXor:                    binaryTest(ir.OpXor),
	ir.OpShiftLeft:              shiftTest(ir.OpShiftLeft),
	ir.OpShiftRightLogical:      shiftTest(ir.OpShiftRightLogical),
	ir.OpShiftRightArithmetic:   shiftTest(ir.OpShiftRightArithmetic),
	ir.OpBitcastConvert:         testBitcastConvert,
	ir.OpReal:                   testReal,
	ir.OpImag:                   testImag,
	ir.OpComplex:                testComplex,
	ir.OpCompare:                testCompare,
	ir.OpSelect:                 testSelect,
	ir.OpConvert:                testConvert,
	ir.OpBroadcastInDim:         testBroadcast,
	ir.OpReshape:                testReshape,
	ir.OpTranspose:              testTranspose,
	ir.OpSlice:                  testSlice,
	ir.OpConcat:                 testConcat,
	ir.OpPad:                    testPad,
	ir.OpDotGeneral:             testDotGeneral,
	ir.OpConvolution:            testConvolution,
	ir.OpReduce:                 testReduce,
	ir.OpReduceWindow:           testReduceWindow,
	ir.OpReverse:                testReverse,
	ir.OpGather:                 testGather,
	ir.OpScatter:                testScatter,
	ir.OpSort:                   testSort,
	ir.OpArgSort:                testArgSort,
	ir.OpArgReduce:              testArgReduce,
	ir.OpSelectAndScatter:       testSelectAndScatter,
	ir.OpWhile:                  testWhile,
	ir.OpCase:                   testCase,
	ir.OpCall:                   testCall,
	ir.OpGetResult:              testGetResult,
	ir.OpReduceRegion:           testReduceRegion,
	ir.OpSortRegion:             testSortRegion,
	ir.OpScatterRegion:          testScatterRegion,
	ir.OpReduceWindowRegion:     testReduceWindowRegion,
	ir.OpSelectAndScatterRegion: testSelectAndScatterRegion,
	ir.OpRng:                    testRng,
	ir.OpFFT:                    testFFT,
	ir.OpCholesky:               testCholesky,
	ir.OpTriangularSolve:        testTriangularSolve,
	ir.OpQr:                     testQr,
	ir.OpHouseholderProduct:     testHouseholderProduct,
	ir.OpEigh:                   testEigh,
	ir.OpLu:                     testLu,
	ir.OpSvd:                    testSvd,
	ir.OpEig:                    testEig,
	ir.OpHessenberg:             testHessenberg,
	ir.OpTridiagonal:            testTridiagonal,
	ir.OpQrPivoted:              testQrPivoted,
	ir.OpSchur:                  testSchur,
	ir.OpHostCall:               testHostCall,
}

func testOps(t *testing.T, d driver.Driver) {
	h := newHarness(t, d)
	for _, op := range ir.Ops() {
		fn, ok := opTests[op]
		if !ok {
			t.Errorf("op %s has no conformance test: add one to drivertest.opTests", op)
			continue
		}
		t.Run(op.String(), func(t *testing.T) { fn(t, h) })
	}
}
