package host

import (
	"runtime"
	"sync"
)

// sgemm is the float32 matrix multiply behind dot_general and convolution:
// C[M,N] += A[M,K] · B[K,N], C row-major with row stride ldc. It follows the
// BLIS/GotoBLAS layout: B is packed a K-block at a time into panels of
// gemmNR columns, A an (mc x kc) block at a time into panels of gemmMR rows,
// and a register-tiled micro-kernel (gemmMR x gemmNR accumulators held in
// registers across the whole K-block) does the multiply-adds. On amd64 with
// AVX2 and FMA the micro-kernel is assembly; elsewhere it is Go.
//
// A is reached only through a packer, so that a convolution can present its
// input as the (never materialised) im2col matrix.
const (
	gemmMR = 6  // rows of A per panel, and of the micro-tile
	gemmNR = 16 // columns of B per panel, and of the micro-tile
	gemmKC = 256
	gemmMC = 96 // rows of A per packed block: 16 panels
	gemmNC = 256
)

// aPacker fills dst with rows [i0, i0+rows) and columns [k0, k0+kc) of A in
// panel order: for each panel of gemmMR rows, for each k, gemmMR values. Rows
// past rows (the last panel's tail) must be zero.
type aPacker func(dst []float32, i0, rows, k0, kc int)

// bPacker fills dst with rows [k0, k0+kc) of B, all N columns, in panel
// order: for each panel of gemmNR columns, for each k, gemmNR values;
// columns past N are zero.
type bPacker func(dst []float32, k0, kc int)

// gemmPool recycles packing buffers: a matmul in a training step packs the
// same sizes over and over.
var gemmPool sync.Pool

func getScratch(n int) *[]float32 {
	if p, ok := gemmPool.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

func putScratch(p *[]float32) { gemmPool.Put(p) }

// sgemm computes C += A·B for an M x K packer and a K x N packer. C must
// hold M rows of ldc, and is usually cleared by the caller first.
func sgemm(c []float32, ldc, M, N, K int, packA aPacker, packB bPacker) {
	if M == 0 || N == 0 || K == 0 {
		return
	}
	np := (N + gemmNR - 1) / gemmNR // B panels
	workers := runtime.GOMAXPROCS(0)
	// Rows per A block: enough blocks for every worker to have a few.
	mc := gemmMC
	if M < 2*workers*mc {
		mc = max(gemmMR, (M+2*workers-1)/(2*workers)/gemmMR*gemmMR)
	}
	ncp := gemmNC / gemmNR // B panels per work item
	mBlocks := (M + mc - 1) / mc
	nBlocks := (np + ncp - 1) / ncp
	kcMax := min(K, gemmKC)
	bp := getScratch(np * gemmNR * kcMax)
	defer putScratch(bp)
	for k0 := 0; k0 < K; k0 += gemmKC {
		kc := min(gemmKC, K-k0)
		bpack := (*bp)[:np*gemmNR*kc]
		packB(bpack, k0, kc)
		parallelFor(mBlocks*nBlocks, 1, func(lo, hi int) {
			ap := getScratch(mc * kc)
			defer putScratch(ap)
			var tile [gemmMR * gemmNR]float32
			lastM := -1
			// Items run M-block-major, so consecutive items share a packed A.
			for it := lo; it < hi; it++ {
				mb, nb := it/nBlocks, it%nBlocks
				i0 := mb * mc
				rows := min(mc, M-i0)
				apack := (*ap)[:(rows+gemmMR-1)/gemmMR*gemmMR*kc]
				if mb != lastM {
					packA(apack, i0, rows, k0, kc)
					lastM = mb
				}
				for jp := nb * ncp; jp < min(np, (nb+1)*ncp); jp++ {
					j0 := jp * gemmNR
					cols := min(gemmNR, N-j0)
					bpan := bpack[jp*gemmNR*kc : (jp+1)*gemmNR*kc]
					for ir := 0; ir < rows; ir += gemmMR {
						r := min(gemmMR, rows-ir)
						apan := apack[ir*kc : ir*kc+gemmMR*kc]
						ci := (i0+ir)*ldc + j0
						if r == gemmMR && cols == gemmNR {
							microKernel(kc, apan, bpan, c[ci:], ldc)
							continue
						}
						clear(tile[:])
						microKernel(kc, apan, bpan, tile[:], gemmNR)
						for y := range r {
							row := c[ci+y*ldc : ci+y*ldc+cols]
							for x, v := range tile[y*gemmNR : y*gemmNR+cols] {
								row[x] += v
							}
						}
					}
				}
			}
		})
	}
}

// gemmRun is the longest run of products the micro-kernel sums in its
// registers before adding them to c. The rounding error of a float32 dot
// product grows with the length of its running sums; TensorFlow's CPU
// computes a convolution's input gradient as a GEMM over the output
// channels alone (col2im adds the kernel positions after), so its runs
// there are as short as the channel count. Runs of 128 keep ours as short
// at no cost in packing (the panels stay gemmKC deep); the extra adds to c
// cost less than 1% at 1024x1024.
const gemmRun = 128

// microKernel computes the gemmMR x gemmNR tile c += a·b over kc, from packed
// panels; c has row stride ldc.
func microKernel(kc int, a, b, c []float32, ldc int) {
	_ = a[gemmMR*kc-1]
	_ = b[gemmNR*kc-1]
	_ = c[(gemmMR-1)*ldc+gemmNR-1]
	for k := 0; k < kc; k += gemmRun {
		n := min(gemmRun, kc-k)
		if haveFMA {
			sgemmKernelAsm(n, &a[k*gemmMR], &b[k*gemmNR], &c[0], ldc)
			continue
		}
		microKernelGo(n, a[k*gemmMR:], b[k*gemmNR:], c, ldc)
	}
}

func microKernelGo(kc int, a, b, c []float32, ldc int) {
	var acc [gemmMR][gemmNR]float32
	for k := range kc {
		av := a[k*gemmMR : k*gemmMR+gemmMR]
		bv := b[k*gemmNR : k*gemmNR+gemmNR]
		for i, x := range av {
			row := &acc[i]
			for j, y := range bv {
				row[j] += x * y
			}
		}
	}
	for i := range gemmMR {
		row := c[i*ldc : i*ldc+gemmNR]
		for j, v := range acc[i] {
			row[j] += v
		}
	}
}

// packRowMajorA is the packer of a row-major M x K matrix with row stride lda.
func packRowMajorA(a []float32, lda int) aPacker {
	return func(dst []float32, i0, rows, k0, kc int) {
		for ir := 0; ir < rows; ir += gemmMR {
			pan := dst[ir*kc : ir*kc+gemmMR*kc]
			r := min(gemmMR, rows-ir)
			if r < gemmMR {
				clear(pan)
			}
			for y := range r {
				src := a[(i0+ir+y)*lda+k0 : (i0+ir+y)*lda+k0+kc]
				for k, v := range src {
					pan[k*gemmMR+y] = v
				}
			}
		}
	}
}

// packRowMajorB is the packer of a row-major K x N matrix with row stride ldb.
func packRowMajorB(b []float32, ldb, N int) bPacker {
	return func(dst []float32, k0, kc int) {
		np := (N + gemmNR - 1) / gemmNR
		for jp := range np {
			pan := dst[jp*gemmNR*kc : (jp+1)*gemmNR*kc]
			j0 := jp * gemmNR
			cols := min(gemmNR, N-j0)
			if cols == gemmNR {
				for k := range kc {
					copy(pan[k*gemmNR:k*gemmNR+gemmNR], b[(k0+k)*ldb+j0:(k0+k)*ldb+j0+gemmNR])
				}
				continue
			}
			clear(pan)
			for k := range kc {
				copy(pan[k*gemmNR:k*gemmNR+cols], b[(k0+k)*ldb+j0:(k0+k)*ldb+j0+cols])
			}
		}
	}
}

// matmulF32 is matmul for float32 through sgemm: c[bi] = a[bi] x b[bi] for
// row-major [M,K] x [K,N] blocks.
func matmulF32(c, a, b []float32, B, M, K, N int) {
	clear(c)
	if K == 0 {
		return
	}
	for bi := range B {
		cb := c[bi*M*N : (bi+1)*M*N]
		ab := a[bi*M*K : (bi+1)*M*K]
		bb := b[bi*K*N : (bi+1)*K*N]
		sgemm(cb, N, M, N, K, packRowMajorA(ab, K), packRowMajorB(bb, N, N))
	}
}
