//go:build !purego

#include "textflag.h"

// func dotAVX2(a, b *float32, n int) float32
//
// Four 8-lane FMA accumulators over 32 values a step, then 8 values a step,
// then one at a time.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JL   reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

loop1:
	CMPQ CX, $0
	JE   done
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  loop1

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotInt8AVX2(q *float32, c *int8, n int) float32
//
// The dot product of n float32 values at q and n int8 codes at c: each 8
// codes are sign-extended to int32 (VPMOVSXBD), converted to float32 and
// multiplied into one of four accumulators, 32 codes a step, then 8 a step,
// then one at a time.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

i8loop32:
	CMPQ CX, $32
	JL   i8loop8
	VPMOVSXBD (DI), Y4
	VPMOVSXBD 8(DI), Y5
	VPMOVSXBD 16(DI), Y6
	VPMOVSXBD 24(DI), Y7
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VFMADD231PS (SI), Y4, Y0
	VFMADD231PS 32(SI), Y5, Y1
	VFMADD231PS 64(SI), Y6, Y2
	VFMADD231PS 96(SI), Y7, Y3
	ADDQ $128, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  i8loop32

i8loop8:
	CMPQ CX, $8
	JL   i8reduce
	VPMOVSXBD (DI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS (SI), Y4, Y0
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  i8loop8

i8reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

i8loop1:
	CMPQ CX, $0
	JE   i8done
	MOVBQSX (DI), AX
	VCVTSI2SSQ AX, X2, X2
	VFMADD231SS (SI), X2, X0
	ADDQ $4, SI
	ADDQ $1, DI
	DECQ CX
	JMP  i8loop1

i8done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
