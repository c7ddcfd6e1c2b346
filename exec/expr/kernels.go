package expr

import (
	"math"

	"github.com/streamsql/streamsql/planner"
)

// kernelSpec is how this package computes one planner.Func, whose signature, result type
// and NULL handling are its row in planner's function table (planner.FunctionOf). A
// function's arguments arrive with the kinds the row promises; a spec checks only what the
// kernel needs beyond that (constant arguments, physical types).
type kernelSpec struct {
	// kernel builds the kernel of a call whose arguments are all evaluated first.
	kernel func(cp *compiler, e *planner.Call, args []node, argT []planner.Type) (kernelFn, error)
	// node, instead, builds a node of its own: for calls that evaluate their arguments
	// lazily (AND, OR, COALESCE) or read the clock.
	node func(cp *compiler, e *planner.Call) (node, error)
	// mayFail reports whether the call can fail on some row (so that CASE, COALESCE, AND
	// and OR evaluate it only on the rows that reach it); nil means never.
	mayFail func(e *planner.Call) bool
	// volatile: the value changes between calls with the same arguments (the clock, RAND),
	// so the call is never folded into a constant.
	volatile bool
}

// kernels maps every planner.Func to its spec. It is built in init because its node
// builders compile their arguments, which reaches compileCall, which reads the map.
var kernels map[planner.Func]kernelSpec

func init() {
	arith := kernelSpec{
		kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return arithKernel(e.Fn, argT[0], argT[1], e.T)
		},
		mayFail: func(e *planner.Call) bool {
			k := e.Args[0].Type().Kind
			if e.Fn == planner.FnDiv || e.Fn == planner.FnMod {
				return k != planner.Double
			}
			return k == planner.Decimal
		},
	}
	cmp := kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
		return cmpKernel(e.Fn, argT[0], argT[1])
	}}
	is := kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
		return isKernel(e.Fn, argT[0])
	}}
	str := kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
		return stringKernel(e.Fn, argT)
	}}
	decimalMayFail := func(e *planner.Call) bool { return e.Args[0].Type().Kind == planner.Decimal }
	mth := kernelSpec{
		kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return mathKernel(e.Fn, argT, e.T)
		},
	}
	mathDec := mth
	mathDec.mayFail = decimalMayFail
	dbl := kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
		return doubleKernel(e.Fn, argT)
	}}
	// fixed is a kernel that needs nothing from the call; it must keep no state between
	// batches, since every compiled call shares it.
	fixed := func(k kernelFn) kernelSpec {
		return kernelSpec{kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) { return k, nil }}
	}
	// failing marks a kernel that fails on some arguments (a result too large).
	failing := func(k kernelSpec) kernelSpec {
		k.mayFail = func(*planner.Call) bool { return true }
		return k
	}
	// Regular expressions and hashes keep caches: one kernel per compiled call.
	rx := kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
		return regexpKernel(e.Fn), nil
	}}
	hs := kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
		return hashKernel(e.Fn), nil
	}}
	ex := kernelSpec{node: (*compiler).compileExtractAs}
	tm := kernelSpec{kernel: func(_ *compiler, e *planner.Call, args []node, argT []planner.Type) (kernelFn, error) {
		fn, _, err := timeKernel(e.Fn, args, argT, e.T)
		return fn, err
	}}
	arrayFind := func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
		return arrayFindKernel(e.Fn, argT[0].Elem()), nil
	}
	jsonBuild := func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
		return jsonBuildKernel(e, argT), nil
	}
	arrayPick := func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
		return arrayPickKernel(e.Fn, e.T), nil
	}
	mapPart := func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
		return mapPartKernel(e.Fn, e.T), nil
	}
	kernels = map[planner.Func]kernelSpec{
		planner.FnAdd: arith, planner.FnSub: arith, planner.FnMul: arith, planner.FnDiv: arith, planner.FnMod: arith,
		planner.FnNeg: {
			kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
				return negKernel(argT[0], e.T)
			},
			mayFail: decimalMayFail,
		},
		planner.FnEq: cmp, planner.FnNe: cmp, planner.FnLt: cmp, planner.FnLe: cmp, planner.FnGt: cmp, planner.FnGe: cmp,
		planner.FnAnd: {node: (*compiler).compileLogic},
		planner.FnOr:  {node: (*compiler).compileLogic},
		planner.FnNot: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			if argT[0].Kind != planner.Boolean && argT[0].Kind != planner.Null {
				return nil, newError(ErrUnsupported, "NOT takes a BOOLEAN, got %s", argT[0])
			}
			return notKernel, nil
		}},
		planner.FnIsNull: is, planner.FnIsNotNull: is, planner.FnIsTrue: is, planner.FnIsNotTrue: is,
		planner.FnIsFalse: is, planner.FnIsNotFalse: is,
		planner.FnIn: {node: (*compiler).compileIn},
		planner.FnIsDistinct: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return distinctKernel(false, argT[0], argT[1])
		}},
		planner.FnIsNotDistinct: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return distinctKernel(true, argT[0], argT[1])
		}},
		planner.FnLike: {
			kernel: func(_ *compiler, _ *planner.Call, args []node, argT []planner.Type) (kernelFn, error) {
				return likeKernel(args, argT)
			},
			// An escape makes some patterns invalid.
			mayFail: func(e *planner.Call) bool {
				return len(e.Args) == 3 && !(isConstExpr(e.Args[1]) && isConstExpr(e.Args[2]))
			},
		},
		planner.FnSimilar: {
			kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) { return similarKernel(), nil },
			mayFail: func(e *planner.Call) bool {
				return !(isConstExpr(e.Args[1]) && (len(e.Args) < 3 || isConstExpr(e.Args[2])))
			},
		},
		planner.FnCoalesce: {node: (*compiler).compileCoalesce},
		planner.FnNullIf: {kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return nullIfKernel(argT[0], argT[1], e.T)
		}},
		planner.FnConcat: str, planner.FnUpper: str, planner.FnLower: str, planner.FnSubstring: str,
		planner.FnCharLength: str, planner.FnTrim: str, planner.FnLTrim: str, planner.FnRTrim: str,
		planner.FnReplace: str, planner.FnPosition: str,
		planner.FnAbs: mathDec, planner.FnRound: mathDec, planner.FnFloor: mathDec, planner.FnCeil: mathDec,
		planner.FnPower: mth, planner.FnSqrt: mth,
		planner.FnToTimestamp: tm, planner.FnToTimestampLTZ: tm, planner.FnDateFormat: tm, planner.FnExtract: tm,
		planner.FnCurrentTS:        {node: func(*compiler, *planner.Call) (node, error) { return nowNode{}, nil }, volatile: true},
		planner.FnProctime:         {node: func(*compiler, *planner.Call) (node, error) { return nowNode{}, nil }, volatile: true},
		planner.FnCurrentWatermark: {node: func(*compiler, *planner.Call) (node, error) { return watermarkNode{}, nil }, volatile: true},

		planner.FnIf:     {node: (*compiler).compileIf},
		planner.FnIfNull: {node: (*compiler).compileCoalesce},
		planner.FnGreatest: {kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
			return extremeKernel(true, e.T)
		}},
		planner.FnLeast: {kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
			return extremeKernel(false, e.T)
		}},
		planner.FnTypeOf: {node: (*compiler).compileTypeOf},
		planner.FnField: {kernel: func(_ *compiler, e *planner.Call, args []node, _ []planner.Type) (kernelFn, error) {
			d, ok := isConst(args[1])
			if !ok || d.null || d.i < 0 || int(d.i) >= len(e.Args[0].Type().Fields()) {
				return nil, newError(ErrUnsupported, "a ROW field is read by a constant index")
			}
			return fieldKernel(int(d.i)), nil
		}},
		planner.FnItem: {kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return itemKernel(argT[0], argT[1]), nil
		}},
		planner.FnRow: {kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return rowKernel(e.T, argT), nil
		}},
		planner.FnArray: {kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return listKernel(e.T, argT), nil
		}},
		planner.FnMap: {kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return listKernel(e.T, argT), nil
		}, mayFail: func(*planner.Call) bool { return true }},
		planner.FnCardinality: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			if argT[0].Kind == planner.Multiset {
				return multisetCardinalityKernel, nil
			}
			return cardinalityKernel, nil
		}},
		planner.FnElement: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			if argT[0].Kind == planner.Multiset {
				return multisetElementKernel, nil
			}
			return elementKernel, nil
		}, mayFail: func(*planner.Call) bool { return true }},
		planner.FnArrayContains: {kernel: arrayFind},
		planner.FnArrayPosition: {kernel: arrayFind},
		planner.FnArrayDistinct: {kernel: arrayPick},
		planner.FnArrayRemove:   {kernel: arrayPick},
		planner.FnArrayReverse:  {kernel: arrayPick},
		planner.FnMapKeys:       {kernel: mapPart},
		planner.FnMapValues:     {kernel: mapPart},
		planner.FnMapFromArrays: failing(kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
			return mapFromArraysKernel(e.T), nil
		}}),
		planner.FnStrToMap: failing(kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
			return strToMapKernel(e.T), nil
		}}),
		planner.FnEncode: failing(kernelSpec{kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
			return encodeKernel(e.T), nil
		}}),
		planner.FnDecode: failing(fixed(decodeKernel)),
		planner.FnUnhex: {kernel: func(_ *compiler, e *planner.Call, _ []node, _ []planner.Type) (kernelFn, error) {
			return unhexKernel(e.T), nil
		}},
		planner.FnPrintf: failing(kernelSpec{kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return printfKernel(argT), nil
		}}),
		planner.FnJSONObject: {kernel: jsonBuild},
		planner.FnJSONArray:  {kernel: jsonBuild},
		planner.FnJSONString: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return jsonStringKernel(argT[0]), nil
		}},
		planner.FnLn: dbl, planner.FnLog10: dbl, planner.FnLog2: dbl, planner.FnExp: dbl, planner.FnSin: dbl,
		planner.FnCos: dbl, planner.FnTan: dbl, planner.FnCot: dbl, planner.FnAsin: dbl, planner.FnAcos: dbl,
		planner.FnAtan: dbl, planner.FnSinh: dbl, planner.FnCosh: dbl, planner.FnTanh: dbl,
		planner.FnDegrees: dbl, planner.FnRadians: dbl,
		planner.FnLog: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return logKernel(argT)
		}},
		planner.FnAtan2: {kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) {
			return double2Kernel(math.Atan2), nil
		}},
		planner.FnSign: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			return signKernel(argT[0])
		}},
		planner.FnTruncate: {
			kernel: func(_ *compiler, e *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
				return truncateKernel(argT[0], e.T)
			},
			mayFail: decimalMayFail,
		},
		planner.FnPi:          {node: func(*compiler, *planner.Call) (node, error) { return &constNode{d: datum{f: math.Pi}}, nil }},
		planner.FnE:           {node: func(*compiler, *planner.Call) (node, error) { return &constNode{d: datum{f: math.E}}, nil }},
		planner.FnRand:        {node: (*compiler).compileRand, volatile: true},
		planner.FnRandInteger: {node: (*compiler).compileRand, volatile: true, mayFail: func(*planner.Call) bool { return true }},
		planner.FnUUID:        {node: (*compiler).compileRand, volatile: true},
		planner.FnBin: {kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) {
			return radixKernel(2), nil
		}},
		planner.FnRegexpExtract: rx, planner.FnRegexpReplace: rx, planner.FnRegexp: rx,
		planner.FnRegexpCount: rx, planner.FnRegexpInstr: rx, planner.FnRegexpSubstr: rx,
		planner.FnSplitIndex: fixed(splitIndexKernel),
		planner.FnLPad:       failing(fixed(padKernel(true))), planner.FnRPad: failing(fixed(padKernel(false))),
		planner.FnRepeat:  failing(fixed(repeatKernel)),
		planner.FnReverse: fixed(mapStringKernel(reverseString)),
		planner.FnInitCap: fixed(mapStringKernel(initCap)),
		planner.FnTranslate: {kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) {
			return translateKernel(), nil
		}},
		planner.FnConcatWS: fixed(concatWSKernel),
		planner.FnLeft:     fixed(leftRightKernel(true)), planner.FnRight: fixed(leftRightKernel(false)),
		planner.FnInstr:    fixed(instrKernel),
		planner.FnASCII:    fixed(asciiKernel),
		planner.FnChr:      fixed(chrKernel),
		planner.FnToBase64: fixed(base64Kernel(true)), planner.FnFromBase64: fixed(base64Kernel(false)),
		planner.FnMD5: hs, planner.FnSHA1: hs, planner.FnSHA2: hs, planner.FnSHA224: hs, planner.FnSHA256: hs,
		planner.FnSHA384: hs, planner.FnSHA512: hs,
		planner.FnYear: ex, planner.FnQuarter: ex, planner.FnMonth: ex, planner.FnWeek: ex,
		planner.FnDayOfYear: ex, planner.FnDayOfMonth: ex, planner.FnDayOfWeek: ex,
		planner.FnHour: ex, planner.FnMinute: ex, planner.FnSecond: ex,
		planner.FnTimestampAdd: {
			kernel: func(_ *compiler, e *planner.Call, args []node, argT []planner.Type) (kernelFn, error) {
				return timestampAddKernel(args, argT, e.T)
			},
			mayFail: func(*planner.Call) bool { return true },
		},
		planner.FnTimestampDiff: {kernel: func(_ *compiler, _ *planner.Call, args []node, argT []planner.Type) (kernelFn, error) {
			return timestampDiffKernel(args, argT)
		}},
		planner.FnFromUnixtime:  {node: (*compiler).compileFromUnixtime},
		planner.FnUnixTimestamp: {node: (*compiler).compileUnixTimestamp, volatile: true},
		planner.FnToDate: {kernel: func(_ *compiler, _ *planner.Call, args []node, _ []planner.Type) (kernelFn, error) {
			return toDateKernel(args)
		}},
		planner.FnIsAlpha: fixed(isAlphaKernel), planner.FnIsDigit: fixed(isDigitKernel), planner.FnIsDecimal: fixed(isDecimalKernel),
		planner.FnLocate:    fixed(locateKernel),
		planner.FnOverlay:   fixed(overlayKernel),
		planner.FnElt:       fixed(eltKernel),
		planner.FnURLEncode: fixed(urlKernel(true)), planner.FnURLDecode: fixed(urlKernel(false)),
		planner.FnParseURL: fixed(parseURLKernel),
		planner.FnCurrentDate: {node: func(cp *compiler, e *planner.Call) (node, error) {
			now := &planner.Call{Fn: planner.FnCurrentTS, T: planner.Type{Kind: planner.TimestampLTZ, Precision: 3, NotNull: true}}
			return cp.compile(&planner.Cast{X: now, T: planner.TypeDate})
		}, volatile: true},
		planner.FnConvertTZ: {kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) {
			return convertTZKernel(), nil
		}},
		planner.FnFloorTime: {kernel: func(_ *compiler, _ *planner.Call, args []node, argT []planner.Type) (kernelFn, error) {
			return floorTimeKernel(args, argT, false)
		}},
		planner.FnCeilTime: {kernel: func(_ *compiler, _ *planner.Call, args []node, argT []planner.Type) (kernelFn, error) {
			return floorTimeKernel(args, argT, true)
		}},
		planner.FnJSONValue: {kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) {
			return jsonValueKernel(), nil
		}},
		planner.FnJSONQuery: failing(kernelSpec{kernel: func(*compiler, *planner.Call, []node, []planner.Type) (kernelFn, error) {
			return jsonQueryKernel(), nil
		}}),
		planner.FnJSONExists: failing(kernelSpec{kernel: func(_ *compiler, _ *planner.Call, args []node, _ []planner.Type) (kernelFn, error) {
			onError := "FALSE"
			if len(args) == 3 {
				d, ok := isConst(args[2])
				if !ok || d.null {
					return nil, newError(ErrUnsupported, "JSON_EXISTS ON ERROR must be a constant")
				}
				onError = d.s
			}
			return jsonExistsKernel(onError), nil
		}}),
		planner.FnIsJSON: {kernel: func(_ *compiler, e *planner.Call, args []node, _ []planner.Type) (kernelFn, error) {
			return isJSONKernelFor(e, args, false)
		}},
		planner.FnIsNotJSON: {kernel: func(_ *compiler, e *planner.Call, args []node, _ []planner.Type) (kernelFn, error) {
			return isJSONKernelFor(e, args, true)
		}},
		planner.FnHex: {kernel: func(_ *compiler, _ *planner.Call, _ []node, argT []planner.Type) (kernelFn, error) {
			if argT[0].Kind == planner.String {
				return hexStringKernel, nil
			}
			return radixKernel(16), nil
		}},
	}
}
