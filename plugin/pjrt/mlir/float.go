package mlir

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// floatFormat describes how a float kind lays out its bits. It covers the
// IEEE formats and the small float variants StableHLO knows: "FN" formats
// have no infinities and use the all-ones pattern for NaN, "FNUZ" formats
// have no negative zero and use the sign-only pattern for NaN, E8M0 has no
// mantissa and no sign.
type floatFormat struct {
	bits, expBits, mantBits int
	bias                    int
	ieee                    bool // the top exponent means inf/NaN
	fn                      bool // no inf; all ones is NaN
	fnuz                    bool // no inf, no -0; 0x80.. is NaN
	noSpecials              bool // no inf, no NaN at all (f6, f4)
	e8m0                    bool
}

var floatFormats = map[FloatKind]floatFormat{
	F16:           {bits: 16, expBits: 5, mantBits: 10, bias: 15, ieee: true},
	BF16:          {bits: 16, expBits: 8, mantBits: 7, bias: 127, ieee: true},
	F32:           {bits: 32, expBits: 8, mantBits: 23, bias: 127, ieee: true},
	F64:           {bits: 64, expBits: 11, mantBits: 52, bias: 1023, ieee: true},
	TF32:          {bits: 19, expBits: 8, mantBits: 10, bias: 127, ieee: true},
	F8E5M2:        {bits: 8, expBits: 5, mantBits: 2, bias: 15, ieee: true},
	F8E4M3:        {bits: 8, expBits: 4, mantBits: 3, bias: 7, ieee: true},
	F8E3M4:        {bits: 8, expBits: 3, mantBits: 4, bias: 3, ieee: true},
	F8E4M3FN:      {bits: 8, expBits: 4, mantBits: 3, bias: 7, fn: true},
	F8E4M3FNUZ:    {bits: 8, expBits: 4, mantBits: 3, bias: 8, fnuz: true},
	F8E5M2FNUZ:    {bits: 8, expBits: 5, mantBits: 2, bias: 16, fnuz: true},
	F8E4M3B11FNUZ: {bits: 8, expBits: 4, mantBits: 3, bias: 11, fnuz: true},
	F8E8M0FNU:     {bits: 8, expBits: 8, mantBits: 0, bias: 127, e8m0: true},
	F6E2M3FN:      {bits: 6, expBits: 2, mantBits: 3, bias: 1, noSpecials: true},
	F6E3M2FN:      {bits: 6, expBits: 3, mantBits: 2, bias: 3, noSpecials: true},
	F4E2M1FN:      {bits: 4, expBits: 2, mantBits: 1, bias: 1, noSpecials: true},
}

// decoded is a float's value: (-1)^neg * mant * 2^exp2, or a special.
type decoded struct {
	neg, inf, nan bool
	mant          uint64
	exp2          int
}

func (f floatFormat) decode(bits uint64) decoded {
	bits &= 1<<f.bits - 1
	if f.e8m0 {
		if bits == 0xFF {
			return decoded{nan: true}
		}
		return decoded{mant: 1, exp2: int(bits) - f.bias}
	}
	neg := bits>>(f.bits-1)&1 == 1
	e := int(bits >> f.mantBits & (1<<f.expBits - 1))
	m := bits & (1<<f.mantBits - 1)
	topExp := 1<<f.expBits - 1
	switch {
	case f.ieee && e == topExp:
		if m == 0 {
			return decoded{neg: neg, inf: true}
		}
		return decoded{neg: neg, nan: true}
	case f.fn && e == topExp && m == 1<<f.mantBits-1:
		return decoded{neg: neg, nan: true}
	case f.fnuz && neg && e == 0 && m == 0:
		return decoded{nan: true}
	}
	if e == 0 {
		return decoded{neg: neg, mant: m, exp2: 1 - f.bias - f.mantBits}
	}
	return decoded{neg: neg, mant: m | 1<<f.mantBits, exp2: e - f.bias - f.mantBits}
}

func (v decoded) float64() float64 {
	switch {
	case v.nan:
		return math.NaN()
	case v.inf && v.neg:
		return math.Inf(-1)
	case v.inf:
		return math.Inf(1)
	}
	x := math.Ldexp(float64(v.mant), v.exp2)
	if v.neg {
		x = -x
	}
	return x
}

// floatValue converts bits of a float kind to float64; NaN for kinds it
// does not know.
func floatValue(kind FloatKind, bits uint64) float64 {
	f, ok := floatFormats[kind]
	if !ok {
		return math.NaN()
	}
	return f.decode(bits).float64()
}

func f64bits(x float64) uint64 { return math.Float64bits(x) }

func formatFloat64(x float64) string {
	return formatFloatBits(&FloatType{Kind: F64}, math.Float64bits(x))
}

// formatFloatBits prints a float the way MLIR's attribute printer does, so
// our text can be diffed against mlir-opt's: six significant digits in
// exponent form if that reads back to the same value, else the shortest
// form APFloat prints with its natural precision, else (for inf, NaN, and
// integral values too long to print with a point) the bits in hex.
func formatFloatBits(t Type, bits uint64) string {
	ft, ok := t.(*FloatType)
	if !ok {
		return hexBits(bits)
	}
	f, ok := floatFormats[ft.Kind]
	if !ok {
		return hexBits(bits)
	}
	v := f.decode(bits)
	if v.inf || v.nan {
		return hexBits(bits & (1<<f.bits - 1))
	}
	if v.mant == 0 {
		if v.neg {
			return "-0.000000e+00"
		}
		return "0.000000e+00"
	}
	digits, exp10 := apfloatDigits(v.mant, v.exp2, 6)
	short := apfloatText(v.neg, digits, exp10, 6, 0, false)
	if readsBackAs(short, ft.Kind, f, v) {
		return short
	}
	precision := 2 + (f.mantBits+1)*59/196
	digits, exp10 = apfloatDigits(v.mant, v.exp2, precision)
	natural := apfloatText(v.neg, digits, exp10, precision, 3, true)
	if strings.Contains(natural, ".") {
		return natural
	}
	return hexBits(bits & (1<<f.bits - 1))
}

func hexBits(bits uint64) string { return "0x" + strings.ToUpper(strconv.FormatUint(bits, 16)) }

// apfloatDigits is the first half of llvm::APFloat::toString: the value
// mant * 2^exp2 as a decimal integer (odd mantissa times 5^k, which is
// exact), then cut down by truncating division to about precision digits
// before any rounding happens. That early truncation is why MLIR prints
// f32 0.9 as 0.899999976 rather than 9.000000e-01: the six-digit attempt
// sees 899999, which does not read back as 0.9. Returns the digits, most
// significant first without trailing zeros, and the power of ten of the
// last one.
func apfloatDigits(mant uint64, exp2, precision int) ([]byte, int) {
	for mant&1 == 0 {
		mant >>= 1
		exp2++
	}
	n := new(big.Int).SetUint64(mant)
	exp10 := 0
	if exp2 >= 0 {
		n.Lsh(n, uint(exp2))
	} else {
		// m * 2^-k == m * 5^k * 10^-k
		n.Mul(n, new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(-exp2)), nil))
		exp10 = exp2
	}
	// 196/59 slightly overestimates log2(10), as in APFloat.
	bits, required := n.BitLen(), (precision*196+58)/59
	if bits > required {
		if tens := (bits - required) * 59 / 196; tens > 0 {
			exp10 += tens
			n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tens)), nil))
		}
	}
	digits := []byte(n.String())
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp10++
	}
	return digits, exp10
}

// apfloatText is llvm::APFloat::toString on an exact decimal: round half
// up to precision digits, then scientific or positional notation by the
// same rules, so the output matches MLIR byte for byte.
func apfloatText(neg bool, digits []byte, exp10, precision, maxPadding int, truncateZero bool) string {
	digits = append([]byte(nil), digits...)
	if len(digits) > precision {
		cut := len(digits) - precision // digits dropped from the right
		exp10 += cut
		roundUp := digits[precision] >= '5'
		digits = digits[:precision]
		if roundUp {
			i := len(digits) - 1
			for ; i >= 0 && digits[i] == '9'; i-- {
				digits = digits[:i]
				exp10++
			}
			if i < 0 {
				digits = []byte{'1'}
			} else {
				digits[i]++
			}
		}
		for len(digits) > 1 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
			exp10++
		}
	}
	n := len(digits)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	scientific := maxPadding == 0
	if !scientific {
		if exp10 >= 0 {
			scientific = exp10 > maxPadding || n+exp10 > precision
		} else if msd := exp10 + n - 1; msd < 0 {
			scientific = -msd > maxPadding
		}
	}
	if scientific {
		e := exp10 + n - 1
		b.WriteByte(digits[0])
		b.WriteByte('.')
		if n == 1 && truncateZero {
			b.WriteByte('0')
		} else {
			b.Write(digits[1:])
		}
		if !truncateZero && precision > n-1 {
			b.WriteString(strings.Repeat("0", precision-n+1))
		}
		if truncateZero {
			b.WriteByte('E')
		} else {
			b.WriteByte('e')
		}
		if e >= 0 {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
			e = -e
		}
		es := strconv.Itoa(e)
		if !truncateZero && len(es) < 2 {
			es = "0" + es
		}
		b.WriteString(es)
		return b.String()
	}
	if exp10 >= 0 {
		b.Write(digits)
		b.WriteString(strings.Repeat("0", exp10))
		return b.String()
	}
	whole := exp10 + n
	if whole > 0 {
		b.Write(digits[:whole])
		b.WriteByte('.')
		b.Write(digits[whole:])
		return b.String()
	}
	b.WriteString("0.")
	b.WriteString(strings.Repeat("0", -whole))
	b.Write(digits)
	return b.String()
}

// readsBackAs reports whether parsing s in the given format gives back v.
func readsBackAs(s string, kind FloatKind, f floatFormat, v decoded) bool {
	switch kind {
	case F32:
		x, err := strconv.ParseFloat(s, 32)
		return err == nil && float32(x) == float32(v.float64())
	case F64:
		x, err := strconv.ParseFloat(s, 64)
		return err == nil && x == v.float64()
	}
	x, ok := new(big.Float).SetPrec(512).SetString(s)
	if !ok {
		return false
	}
	return roundToFormat(x, f).Cmp(new(big.Float).SetFloat64(v.float64())) == 0
}

// roundToFormat rounds x to the nearest value of f (ties to even), with
// subnormals. Overflow is not modelled: callers only round strings that
// were printed from a finite value of f.
func roundToFormat(x *big.Float, f floatFormat) *big.Float {
	if x.Sign() == 0 {
		return x
	}
	minExp := 1 - f.bias // exponent of the smallest normal, as 1.m * 2^e
	if f.e8m0 {
		minExp = -f.bias
	}
	e := x.MantExp(nil) // x = m * 2^e, 0.5 <= |m| < 1
	unbiased := e - 1
	if unbiased < minExp {
		unbiased = minExp
	}
	quantum := unbiased - f.mantBits // value of the last mantissa bit
	scaled := new(big.Float).SetPrec(512).SetMantExp(x, -quantum)
	i, _ := scaled.Int(nil)
	frac := new(big.Float).SetPrec(512).Sub(scaled, new(big.Float).SetInt(i))
	half := big.NewFloat(0.5)
	switch c := frac.Abs(frac).Cmp(half); {
	case c > 0, c == 0 && i.Bit(0) == 1:
		if x.Sign() > 0 {
			i.Add(i, big.NewInt(1))
		} else {
			i.Sub(i, big.NewInt(1))
		}
	}
	return new(big.Float).SetPrec(512).SetMantExp(new(big.Float).SetInt(i), quantum)
}
