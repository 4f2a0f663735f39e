#include "textflag.h"

// Constants of tanhF32AVX2, four float64 lanes each.
DATA tanhc<>+0(SB)/8, $10.0
DATA tanhc<>+8(SB)/8, $10.0
DATA tanhc<>+16(SB)/8, $10.0
DATA tanhc<>+24(SB)/8, $10.0
DATA tanhc<>+32(SB)/8, $-10.0
DATA tanhc<>+40(SB)/8, $-10.0
DATA tanhc<>+48(SB)/8, $-10.0
DATA tanhc<>+56(SB)/8, $-10.0
// log2eTimes32 = 32 * 1.4426950408889634
DATA tanhc<>+64(SB)/8, $46.16624130844683
DATA tanhc<>+72(SB)/8, $46.16624130844683
DATA tanhc<>+80(SB)/8, $46.16624130844683
DATA tanhc<>+88(SB)/8, $46.16624130844683
DATA tanhc<>+96(SB)/8, $0.5
DATA tanhc<>+104(SB)/8, $0.5
DATA tanhc<>+112(SB)/8, $0.5
DATA tanhc<>+120(SB)/8, $0.5
// ln2Hi32 and ln2Lo32: filled in from Go (see fastmath_amd64.go), so
// that they are bit-identical to the scalar code's constants.
DATA tanhc<>+192(SB)/8, $1.0
DATA tanhc<>+200(SB)/8, $1.0
DATA tanhc<>+208(SB)/8, $1.0
DATA tanhc<>+216(SB)/8, $1.0
DATA tanhc<>+224(SB)/8, $0.041666666666666664
DATA tanhc<>+232(SB)/8, $0.041666666666666664
DATA tanhc<>+240(SB)/8, $0.041666666666666664
DATA tanhc<>+248(SB)/8, $0.041666666666666664
DATA tanhc<>+256(SB)/8, $0.16666666666666666
DATA tanhc<>+264(SB)/8, $0.16666666666666666
DATA tanhc<>+272(SB)/8, $0.16666666666666666
DATA tanhc<>+280(SB)/8, $0.16666666666666666
DATA tanhc<>+288(SB)/8, $2.0
DATA tanhc<>+296(SB)/8, $2.0
DATA tanhc<>+304(SB)/8, $2.0
DATA tanhc<>+312(SB)/8, $2.0
// int32 lanes: 31 (table index mask) and 1023 (exponent bias)
DATA tanhc<>+320(SB)/4, $31
DATA tanhc<>+324(SB)/4, $31
DATA tanhc<>+328(SB)/4, $31
DATA tanhc<>+332(SB)/4, $31
DATA tanhc<>+336(SB)/4, $1023
DATA tanhc<>+340(SB)/4, $1023
DATA tanhc<>+344(SB)/4, $1023
DATA tanhc<>+348(SB)/4, $1023
GLOBL tanhc<>(SB), RODATA, $352

// func tanhF32AVX2(dst, src *float32, n int, c *[8]float64)
//
// tanh32 four lanes at a time, in float64 with the same operations in the
// same order (and no fused multiply-adds), so every result is bit-identical
// to the scalar function's. n must be a multiple of 4. c holds ln2Hi32 at
// c[0:4] and ln2Lo32 at c[4:8].
TEXT ·tanhF32AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	SHRQ $2, CX
	JZ   done
	LEAQ ·exp2Table(SB), R8
	VMOVUPD tanhc<>+0(SB), Y15
	VMOVUPD tanhc<>+32(SB), Y14
	VMOVUPD tanhc<>+64(SB), Y13
	VMOVUPD tanhc<>+96(SB), Y12
	VMOVUPD (DX), Y11
	VMOVUPD 32(DX), Y10
	VMOVUPD tanhc<>+192(SB), Y9

loop:
	VMOVUPS   (SI), X0
	VCVTPS2PD X0, Y1
	VMINPD    Y15, Y1, Y1 // clamp to [-10, 10]: tanh is ±1 in float32 past 9.01
	VMAXPD    Y14, Y1, Y1
	VADDPD    Y1, Y1, Y1 // t = 2x

	// kf = floor(t*log2eTimes32 + 0.5); r = (t - kf*ln2Hi32) - kf*ln2Lo32
	VMULPD   Y13, Y1, Y2
	VADDPD   Y12, Y2, Y2
	VROUNDPD $1, Y2, Y2
	VMULPD   Y11, Y2, Y3
	VSUBPD   Y3, Y1, Y3
	VMULPD   Y10, Y2, Y4
	VSUBPD   Y4, Y3, Y3

	// q = r * (1 + r*(1/2 + r*(1/6 + r*(1/24))))
	VMULPD tanhc<>+224(SB), Y3, Y4
	VADDPD tanhc<>+256(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD Y12, Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD Y9, Y4, Y4
	VMULPD Y3, Y4, Y4

	// s = exp2Table[k&31] * 2^(k>>5)
	VCVTTPD2DQY Y2, X5
	VPAND       tanhc<>+320(SB), X5, X6
	VPSRAD      $5, X5, X7
	VPADDD      tanhc<>+336(SB), X7, X7
	VPMOVSXDQ   X7, Y7
	VPSLLQ      $52, Y7, Y7
	VPCMPEQD    Y8, Y8, Y8
	VGATHERDPD  Y8, (R8)(X6*8), Y1
	VMULPD      Y7, Y1, Y1

	// e = s*q + (s-1), or q where s == 1; tanh = e / (e + 2)
	VMULPD    Y4, Y1, Y2
	VSUBPD    Y9, Y1, Y3
	VADDPD    Y3, Y2, Y2
	VCMPPD    $0, Y9, Y1, Y3
	VBLENDVPD Y3, Y4, Y2, Y2
	VADDPD    tanhc<>+288(SB), Y2, Y3
	VDIVPD    Y3, Y2, Y2
	VCVTPD2PSY Y2, X2

	// NaN stays NaN.
	VCMPPS    $3, X0, X0, X3
	VBLENDVPS X3, X0, X2, X2
	VMOVUPS   X2, (DI)

	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func sumF32AVX2(x *float32, n int) float32
//
// Sum of n float32 (n a multiple of 32) in 32 partial sums.
TEXT ·sumF32AVX2(SB), NOSPLIT, $0-20
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     sumdone

sumloop:
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	DECQ   CX
	JNZ    sumloop

sumdone:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET
