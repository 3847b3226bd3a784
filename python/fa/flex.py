"""FlexAttention's programming model on fa's kernels: score_mod and mask_mod written in Python.

    import fa.flex as flex
    def alibi(score, b, h, q_idx, kv_idx):            # slopes: a [H] tensor, captured
        return score + slopes[h] * (kv_idx - q_idx)
    def document(b, h, q_idx, kv_idx):                 # doc_ids: an [N] int32 tensor
        return doc_ids[q_idx] == doc_ids[kv_idx]
    out = flex.attention(q, k, v, score_mod=alibi, mask_mod=document, causal=True)   # torch, GPU
    out = fa.cpu.attention(q, k, v, score_mod=alibi, mask_mod=document)              # numpy, CPU

The functions are called once with symbolic arguments (`trace`), and what they compute is
written as fa.attention's `score_mod` / `mask_mod` regions (docs/Attention.md): `score` is the
scaled score (f32) of query row `q_idx` and key `kv_idx` (absolute positions) of batch `b` and
query head `h`; score_mod returns the score that enters the softmax, mask_mod whether the key is
visible (besides causal / window). The compiler inlines the regions into the kernels and, for a
mask_mod it can bound, skips the key blocks it hides (docs/Variants.md's block sparsity).

Arithmetic is f32 with the GPU's fast forms where FlexAttention's Triton kernels use them:
tanh, exp, exp2, log, log2, sqrt, rsqrt carry `afn` (tanh is the MUFU's tanh.approx, as the
built-in softcap; exact=True for the accurate ones) and `/` carries `arcp` (a division by a
constant is a multiplication); the CPU pipeline computes them with libm either way.

What a function may use: + - * / // % ** and unary -, abs(), comparisons, & | ^ ~ on
booleans and integers, << >>, Python numbers, the functions of this module (where, minimum,
maximum, tanh, exp, exp2, log, log2, sqrt, rsqrt, sigmoid, floor, ceil, to_float) and the
torch / numpy functions of the same names on traced values; tensors it reads by closure,
as globals or default arguments (float32 / float16 / bfloat16 / int8..int64, any rank),
indexed by positions or other traced integers: each becomes an argument of the kernel,
specialized to its shape and dtype, read at run time (its values may change between calls).
Python control flow on traced values (if, and, or, min, max, bool()) cannot be traced and
raises FlexTraceError pointing at `where`. Integers are 64-bit (`index`), floats f32. An index
outside a captured tensor reads out of bounds, as a torch kernel would.

The same function runs on numpy arrays (this module's functions dispatch on their argument),
which `reference` uses for a float64 check that shares no code with the compiler.
"""
import collections
import types
import weakref

_INTS = {"index": 64, "i64": 64, "i32": 32, "i16": 16, "i8": 8}
_FLOATS = ("f32",)
# Captured arrays: dtype name (numpy's or torch's str without "torch.") -> (MLIR element
# type, the traced type an element becomes).
_CAPTURE_TYPES = {"float32": ("f32", "f32"), "float16": ("f16", "f32"),
                  "bfloat16": ("bf16", "f32"), "int64": ("i64", "i64"),
                  "int32": ("i32", "i32"), "int16": ("i16", "i16"), "int8": ("i8", "i8")}


class FlexTraceError(ValueError):
    """A score_mod / mask_mod that cannot be traced into a region."""


def _dtype_name(array):
    return str(array.dtype).replace("torch.", "")


def _is_array(x):
    return (not isinstance(x, (Value, Captured, type))) and hasattr(x, "shape") and \
        hasattr(x, "dtype") and hasattr(x, "ndim")


def _replacement(captures, x):
    """What a traced function sees for a value it reads from outside: a proxy
    for an array, a Python number for a numpy scalar (its value is compiled
    in), x itself otherwise."""
    if not _is_array(x):
        return x
    if x.ndim == 0 and type(x).__module__ == "numpy":
        return x.item()
    return captures.proxy(x)


class _Region:
    """The body of one region being traced: SSA lines and the captured arrays
    (shared by both regions of one op)."""

    def __init__(self, captures):
        self.lines = []
        self.count = 0
        self.captures = captures

    def emit(self, text, type_):
        name = f"%t{self.count}"
        self.count += 1
        self.lines.append(f"    {name} = {text}")
        return Value(self, name, type_)

    def const(self, x, type_):
        if type_ == "i1":
            return self.emit(f"arith.constant {'true' if x else 'false'}", "i1")
        if type_ in _INTS:
            return self.emit(f"arith.constant {int(x)} : {type_}", type_)
        bits = _f32_text(float(x))
        return self.emit(f"arith.constant {bits} : f32", "f32")


def _f32_text(x):
    import struct
    return "0x%08X" % struct.unpack("I", struct.pack("f", x))[0]


class Value:
    """A traced value: an SSA name of a region and its type (index, i64..i8,
    f32 or i1)."""

    def __init__(self, region, name, type_):
        self.region, self.name, self.type = region, name, type_

    # -- conversions -----------------------------------------------------------------
    def _to_float(self):
        if self.type == "f32":
            return self
        if self.type == "i1":
            raise FlexTraceError("a boolean used as a number: use where(cond, 1.0, 0.0)")
        v = self
        if v.type == "index":
            v = v.region.emit(f"arith.index_cast {v.name} : index to i64", "i64")
        return v.region.emit(f"arith.sitofp {v.name} : {v.type} to f32", "f32")

    def _to_int(self, type_):
        if self.type == type_:
            return self
        if self.type == "f32":
            raise FlexTraceError("a float where an integer is needed (an index?): "
                                 "floor() then an integer context is not traced; use integers")
        if self.type == "i1":
            raise FlexTraceError("a boolean used as an integer: use where(cond, 1, 0)")
        if type_ == "index" or self.type == "index":
            return self.region.emit(
                f"arith.index_cast {self.name} : {self.type} to {type_}", type_)
        if _INTS[type_] > _INTS[self.type]:
            return self.region.emit(f"arith.extsi {self.name} : {self.type} to {type_}",
                                    type_)
        return self.region.emit(f"arith.trunci {self.name} : {self.type} to {type_}", type_)

    def __bool__(self):
        raise FlexTraceError(
            "a traced value was used as a Python bool (if / and / or / not / min / max / a "
            "chained comparison): write where(cond, a, b), &, |, ~, minimum(a, b), "
            "maximum(a, b) instead")

    def __index__(self):
        raise FlexTraceError("a traced value was used as a Python int (a plain list or "
                             "a range?): index captured tensors instead")

    __int__ = __float__ = __index__

    def __iter__(self):
        raise FlexTraceError("a traced value is a scalar: it cannot be iterated")

    # -- operators ------------------------------------------------------------------
    def __add__(self, o):
        return _binary("add", self, o)

    def __radd__(self, o):
        return _binary("add", o, self)

    def __sub__(self, o):
        return _binary("sub", self, o)

    def __rsub__(self, o):
        return _binary("sub", o, self)

    def __mul__(self, o):
        return _binary("mul", self, o)

    def __rmul__(self, o):
        return _binary("mul", o, self)

    def __truediv__(self, o):
        return _binary("div", self, o)

    def __rtruediv__(self, o):
        return _binary("div", o, self)

    def __floordiv__(self, o):
        return _binary("floordiv", self, o)

    def __rfloordiv__(self, o):
        return _binary("floordiv", o, self)

    def __mod__(self, o):
        return _binary("mod", self, o)

    def __rmod__(self, o):
        return _binary("mod", o, self)

    def __pow__(self, o):
        return _power(self, o)

    def __rpow__(self, o):
        return _power(o, self)

    def __and__(self, o):
        return _binary("and", self, o)

    def __rand__(self, o):
        return _binary("and", o, self)

    def __or__(self, o):
        return _binary("or", self, o)

    def __ror__(self, o):
        return _binary("or", o, self)

    def __xor__(self, o):
        return _binary("xor", self, o)

    def __rxor__(self, o):
        return _binary("xor", o, self)

    def __lshift__(self, o):
        return _binary("shl", self, o)

    def __rshift__(self, o):
        return _binary("shr", self, o)

    def __lt__(self, o):
        return _compare("lt", self, o)

    def __le__(self, o):
        return _compare("le", self, o)

    def __gt__(self, o):
        return _compare("gt", self, o)

    def __ge__(self, o):
        return _compare("ge", self, o)

    def __eq__(self, o):
        return _compare("eq", self, o)

    def __ne__(self, o):
        return _compare("ne", self, o)

    __hash__ = None

    def __neg__(self):
        return _binary("sub", 0, self)

    def __pos__(self):
        return self

    def __abs__(self):
        if self.type == "f32":
            return self.region.emit(f"math.absf {self.name} : f32", "f32")
        if self.type == "i1":
            return self
        return self.region.emit(f"math.absi {self.name} : {self.type}", self.type)

    def __invert__(self):
        if self.type == "f32":
            raise FlexTraceError("~ on a float")
        ones = self.region.const(True if self.type == "i1" else -1, self.type)
        return self.region.emit(f"arith.xori {self.name}, {ones.name} : {self.type}",
                                self.type)

    # The tensor methods FlexAttention's examples use: v.abs(), v.tanh(), v.float(), ...
    def abs(self):
        return abs(self)

    def exp(self):
        return exp(self)

    def tanh(self):
        return tanh(self)

    def sigmoid(self):
        return sigmoid(self)

    def sqrt(self):
        return sqrt(self)

    def log(self):
        return log(self)

    def float(self):
        return to_float(self)

    def clamp(self, min=None, max=None):  # noqa: A002 (torch's names)
        v = self
        if min is not None:
            v = maximum(v, min)
        if max is not None:
            v = minimum(v, max)
        return v

    # torch.tanh(v), torch.where(c, a, b), ... on traced values.
    @classmethod
    def __torch_function__(cls, func, types_, args=(), kwargs=None):
        fn = _FUNCTIONS.get(getattr(func, "__name__", ""))
        if fn is None or kwargs:
            raise FlexTraceError(f"torch.{getattr(func, '__name__', func)} is not traced; "
                                 f"use one of {sorted(_FUNCTIONS)}")
        return fn(*args)

    # np.tanh(v), np.maximum(a, b), ...
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        name = {"absolute": "abs", "negative": "neg", "add": "add", "subtract": "sub",
                "multiply": "mul", "true_divide": "div", "divide": "div"}.get(ufunc.__name__,
                                                                               ufunc.__name__)
        if method != "__call__" or kwargs:
            return NotImplemented
        if name in ("add", "sub", "mul", "div"):
            return _binary(name, *args)
        if name == "abs":
            return abs(args[0])
        if name == "neg":
            return -args[0]
        fn = _FUNCTIONS.get(name)
        if fn is None:
            raise FlexTraceError(f"numpy.{ufunc.__name__} is not traced; use one of "
                                 f"{sorted(_FUNCTIONS)}")
        return fn(*args)


def _region_of(*xs):
    for x in xs:
        if isinstance(x, Value):
            return x.region
    return None


def _as_value(region, x, like):
    """x as a Value of `region`: Python numbers become constants of the other
    operand's kind (`like`: a type name)."""
    if isinstance(x, Value):
        return x
    if isinstance(x, bool) or (like == "i1" and isinstance(x, int) and x in (0, 1)):
        return region.const(x, "i1" if like == "i1" else like if like in _INTS else "f32")
    if isinstance(x, int):
        return region.const(x, like if like in _INTS else "f32" if like == "f32" else "index")
    if isinstance(x, float):
        return region.const(x, "f32")
    if isinstance(x, Captured):
        raise FlexTraceError(f"a captured tensor ({x.describe()}) used as a scalar: index it "
                             f"with one position per dim")
    raise FlexTraceError(f"{type(x).__name__} is not traced (Python numbers, traced values "
                         f"and captured tensors indexed by positions are)")


def _unify(a, b, region, force_float=False):
    """Both operands of one type: f32 if either is (or force_float), else the
    wider integer (index over iN), else i1."""
    ta = a.type if isinstance(a, Value) else None
    tb = b.type if isinstance(b, Value) else None
    kinds = {t for t in (ta, tb) if t}
    if force_float or "f32" in kinds or isinstance(a, float) or isinstance(b, float):
        av = _as_value(region, a, "f32")._to_float()
        bv = _as_value(region, b, "f32")._to_float()
        return av, bv, "f32"
    if not kinds:  # two Python numbers (where(c, 1, 0), where(c, True, False))
        kinds = {"i1"} if isinstance(a, bool) and isinstance(b, bool) else {"index"}
    if kinds == {"i1"}:
        return _as_value(region, a, "i1"), _as_value(region, b, "i1"), "i1"
    ints = [t for t in kinds if t in _INTS]
    if not ints:
        raise FlexTraceError("a boolean mixed with a number: use where(cond, a, b)")
    target = "index" if "index" in ints else max(ints, key=lambda t: _INTS[t])
    av = _as_value(region, a, target)._to_int(target)
    bv = _as_value(region, b, target)._to_int(target)
    return av, bv, target


def _binary(op, a, b):
    region = _region_of(a, b)
    if region is None:  # both plain numbers (e.g. inside numpy's reference): Python's
        return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                "div": lambda: a / b}[op]()
    a, b, t = _unify(a, b, region, force_float=(op == "div"))
    if t == "i1" and op not in ("and", "or", "xor"):
        raise FlexTraceError(f"arithmetic ({op}) on booleans: use where(cond, a, b)")
    if t == "f32":
        simple = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
                  "div": "arith.divf"}
        # A division may multiply by the reciprocal (arcp: x / 30 is one multiply, not
        # div.rn's dozen instructions; within an ulp or two, as Triton's division).
        flags = " fastmath<arcp>" if op == "div" else ""
        if op in simple:
            return region.emit(f"{simple[op]} {a.name}, {b.name}{flags} : f32", "f32")
        if op == "floordiv":
            q = region.emit(f"arith.divf {a.name}, {b.name} fastmath<arcp> : f32", "f32")
            return region.emit(f"math.floor {q.name} : f32", "f32")
        if op == "mod":  # Python's (and torch's remainder's) sign: that of b
            r = region.emit(f"arith.remf {a.name}, {b.name} : f32", "f32")
            return _floor_mod_fix(region, r, b, "f32")
        raise FlexTraceError(f"{op} on floats")
    simple = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli",
              "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori",
              "shl": "arith.shli", "shr": "arith.shrsi", "floordiv": "arith.floordivsi"}
    if op in simple:
        return region.emit(f"{simple[op]} {a.name}, {b.name} : {t}", t)
    if op == "mod":
        r = region.emit(f"arith.remsi {a.name}, {b.name} : {t}", t)
        return _floor_mod_fix(region, r, b, t)
    raise FlexTraceError(f"{op} on integers")


def _floor_mod_fix(region, r, b, t):
    """r = a rem b (sign of a) to Python's a % b (sign of b): r + b where r != 0
    and the signs differ."""
    zero = region.const(0, t)
    if t == "f32":
        rneg = region.emit(f"arith.cmpf olt, {r.name}, {zero.name} : f32", "i1")
        bneg = region.emit(f"arith.cmpf olt, {b.name}, {zero.name} : f32", "i1")
        nz = region.emit(f"arith.cmpf one, {r.name}, {zero.name} : f32", "i1")
        fixed = region.emit(f"arith.addf {r.name}, {b.name} : f32", "f32")
    else:
        rneg = region.emit(f"arith.cmpi slt, {r.name}, {zero.name} : {t}", "i1")
        bneg = region.emit(f"arith.cmpi slt, {b.name}, {zero.name} : {t}", "i1")
        nz = region.emit(f"arith.cmpi ne, {r.name}, {zero.name} : {t}", "i1")
        fixed = region.emit(f"arith.addi {r.name}, {b.name} : {t}", t)
    differ = region.emit(f"arith.xori {rneg.name}, {bneg.name} : i1", "i1")
    use = region.emit(f"arith.andi {differ.name}, {nz.name} : i1", "i1")
    return region.emit(f"arith.select {use.name}, {fixed.name}, {r.name} : {t}", t)


def _power(a, b):
    region = _region_of(a, b)
    if isinstance(b, int) and not isinstance(b, bool) and isinstance(a, Value) and \
            a.type in _INTS and 0 <= b <= 16:
        result = region.const(1, a.type)
        for _ in range(b):
            result = _binary("mul", result, a)
        return result
    a, b, _ = _unify(a, b, region, force_float=True)
    return region.emit(f"math.powf {a.name}, {b.name} : f32", "f32")


def _compare(op, a, b):
    region = _region_of(a, b)
    a, b, t = _unify(a, b, region)
    if t == "f32":
        pred = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq",
                "ne": "une"}[op]
        return region.emit(f"arith.cmpf {pred}, {a.name}, {b.name} : f32", "i1")
    pred = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}[op]
    return region.emit(f"arith.cmpi {pred}, {a.name}, {b.name} : {t}", "i1")


class Captured:
    """A tensor (torch or numpy) a traced function reads, or a slice of one
    by leading indices: `t[i]`, `t[h, i]`, `t[h][i]`."""

    def __init__(self, region_captures, array, arg, indices=()):
        self.captures, self.array, self.arg, self.indices = region_captures, array, arg, indices

    def describe(self):
        return f"{_dtype_name(self.array)} {list(self.array.shape)}"

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        indices = self.indices + index
        rank = len(self.array.shape)
        if len(indices) > rank:
            raise FlexTraceError(f"{len(indices)} indices into a captured tensor of rank "
                                 f"{rank} ({self.describe()})")
        if len(indices) < rank:
            return Captured(self.captures, self.array, self.arg, indices)
        for x in indices:
            if isinstance(x, slice) or x is Ellipsis or x is None:
                raise FlexTraceError("captured tensors are indexed by one scalar per dim "
                                     "(no slices)")
        region = _region_of(*indices)
        if region is None:
            raise FlexTraceError("a captured tensor indexed by constants only: read it "
                                 "outside the function (or index it by a position)")
        names = []
        for d, x in enumerate(indices):
            if isinstance(x, int) and not isinstance(x, bool):
                size = int(self.array.shape[d])
                if not -size <= x < size:
                    raise FlexTraceError(f"index {x} out of range for dim {d} of a captured "
                                         f"tensor ({self.describe()})")
                x = x % size
            names.append(_as_value(region, x, "index")._to_int("index").name)
        elt, traced = _CAPTURE_TYPES[_dtype_name(self.array)]
        ttype = _tensor_type(self.array.shape, elt)
        v = region.emit(f"tensor.extract {self.arg}[{', '.join(names)}] : {ttype}", elt)
        if elt != traced:
            v = region.emit(f"arith.extf {v.name} : {elt} to f32", "f32")
        return v

    def __bool__(self):
        raise FlexTraceError(f"a captured tensor ({self.describe()}) used as a bool")

    def _scalar(self, *_):
        raise FlexTraceError(f"a captured tensor ({self.describe()}) used as a scalar: "
                             f"index it with one position per dim")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _scalar
    __rtruediv__ = __lt__ = __le__ = __gt__ = __ge__ = __neg__ = _scalar


def _tensor_type(shape, elt):
    return "tensor<" + "".join(f"{int(n)}x" for n in shape) + f"{elt}>"


# -- functions (traced values, or numpy arrays / numbers for the reference) ------------

def _np(*xs):
    """The array library of the arguments: torch when one is a torch.Tensor
    (so the same function runs inside torch's FlexAttention), else numpy."""
    for x in xs:
        if type(x).__module__.startswith("torch"):
            import torch
            return torch
    import numpy
    return numpy


def _unary_float(name, mlir, approximates=True, np_name=None):
    def fn(x, exact=False):
        region = _region_of(x)
        if region is None:
            lib = _np(x)
            if name == "rsqrt":
                return 1.0 / lib.sqrt(x)
            return getattr(lib, np_name or name)(x)
        v = _as_value(region, x, "f32")._to_float()
        flags = " fastmath<afn>" if approximates and not exact else ""
        return region.emit(f"{mlir} {v.name}{flags} : f32", "f32")
    fn.__name__ = name
    fn.__doc__ = (f"{name}(x) on a traced value ({mlir}, f32" +
                  (", the GPU's fast approximation unless exact=True: afn" if approximates
                   else "") + "), or numpy's / torch's on arrays.")
    return fn


# The transcendental functions trace with `afn`, as FlexAttention's Triton kernels and the
# built-in softcap compute them: tanh is the MUFU's tanh.approx (relative error ~2^-11),
# exp / log / sqrt libdevice's fast forms; exact=True asks for the accurate ones.
tanh = _unary_float("tanh", "math.tanh")
exp = _unary_float("exp", "math.exp")
exp2 = _unary_float("exp2", "math.exp2")
log = _unary_float("log", "math.log")
log2 = _unary_float("log2", "math.log2")
sqrt = _unary_float("sqrt", "math.sqrt")
rsqrt = _unary_float("rsqrt", "math.rsqrt")
floor = _unary_float("floor", "math.floor", approximates=False)
ceil = _unary_float("ceil", "math.ceil", approximates=False)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    if _region_of(x) is None:
        return 1.0 / (1.0 + _np(x).exp(-x))
    return 1.0 / (1.0 + exp(-x))


def to_float(x):
    """x as f32 (positions are integers: kv_idx - q_idx is one)."""
    region = _region_of(x)
    if region is None:
        lib = _np(x)
        return x.double() if lib.__name__ == "torch" else lib.asarray(x, dtype=lib.float64)
    return _as_value(region, x, "f32")._to_float()


def where(cond, a, b):
    """a where cond, else b (arith.select; numpy.where on arrays)."""
    region = _region_of(cond, a, b)
    if region is None:
        return _np(cond, a, b).where(cond, a, b)
    c = _as_value(region, cond, "i1")
    if c.type != "i1":
        raise FlexTraceError("where's condition must be a comparison or a boolean")
    a, b, t = _unify(a, b, region)
    return region.emit(f"arith.select {c.name}, {a.name}, {b.name} : {t}", t)


def _min_max(name):
    def fn(a, b):
        region = _region_of(a, b)
        if region is None:
            lib = _np(a, b)
            if lib.__name__ == "torch":  # torch.minimum takes tensors only
                a, b = (x if isinstance(x, lib.Tensor) else lib.tensor(x) for x in (a, b))
            return getattr(lib, name)(a, b)
        a, b, t = _unify(a, b, region)
        if t == "i1":
            raise FlexTraceError(f"{name} of booleans: use & or |")
        op = {"minimum": ("arith.minimumf", "arith.minsi"),
              "maximum": ("arith.maximumf", "arith.maxsi")}[name][t != "f32"]
        return region.emit(f"{op} {a.name}, {b.name} : {t}", t)
    fn.__name__ = name
    fn.__doc__ = f"Element-wise {name} (NaN-propagating for floats)."
    return fn


minimum = _min_max("minimum")
maximum = _min_max("maximum")

_FUNCTIONS = {"tanh": tanh, "exp": exp, "exp2": exp2, "log": log, "log2": log2, "sqrt": sqrt,
              "rsqrt": rsqrt, "sigmoid": sigmoid, "floor": floor, "ceil": ceil,
              "where": where, "minimum": minimum, "maximum": maximum, "abs": abs,
              "absolute": abs, "fmin": minimum, "fmax": maximum,
              "clamp": lambda x, min=None, max=None: x.clamp(min, max)}


# -- tracing ---------------------------------------------------------------------------

class Traced:
    """The regions of one op: `score_mod` / `mask_mod` region text (or None),
    and the captured arrays in argument order (`captures`, each read by the
    kernel argument `%cap<i>` of type `capture_types[i]`)."""

    def __init__(self, score_mod, mask_mod, captures, capture_types):
        self.score_mod, self.mask_mod = score_mod, mask_mod
        self.captures, self.capture_types = captures, capture_types

    def key(self):
        """What a compiled kernel depends on: the regions and the captures'
        types (not their values, which the kernel reads at run time)."""
        return (self.score_mod, self.mask_mod, tuple(self.capture_types))


class _Captures:
    def __init__(self):
        self.arrays, self.types, self.by_id = [], [], {}

    def proxy(self, array):
        dt = _dtype_name(array)
        if dt not in _CAPTURE_TYPES:
            raise FlexTraceError(f"a captured tensor of dtype {dt} (shape "
                                 f"{list(array.shape)}): use one of {sorted(_CAPTURE_TYPES)} "
                                 f"(e.g. a bool mask as int8)")
        if len(array.shape) == 0:
            raise FlexTraceError("a captured 0-d tensor: use a Python number, or a 1-element "
                                 "tensor indexed by 0 with a position")
        i = self.by_id.get(id(array))
        if i is None:
            i = self.by_id[id(array)] = len(self.arrays)
            self.arrays.append(array)
            self.types.append(_tensor_type(array.shape, _CAPTURE_TYPES[dt][0]))
        return Captured(self, array, f"%cap{i}")


def _with_proxies(fn, captures):
    """fn with the arrays it reads (closure cells, globals it names, defaults)
    replaced by Captured proxies."""
    if not isinstance(fn, types.FunctionType):
        raise FlexTraceError(f"score_mod / mask_mod must be a Python function, got "
                             f"{type(fn).__name__}")
    code = fn.__code__
    glob = fn.__globals__
    if any(_is_array(glob.get(n)) for n in code.co_names):
        glob = dict(glob)
        for n in code.co_names:
            if n in glob and _is_array(glob[n]):
                glob[n] = _replacement(captures, glob[n])
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(_replacement(captures, _cell(c)))
                        if _is_array(_cell(c)) else c for c in fn.__closure__)
    defaults = None
    if fn.__defaults__:
        defaults = tuple(_replacement(captures, d) for d in fn.__defaults__)
    new = types.FunctionType(code, glob, fn.__name__, defaults, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:  # an empty cell
        return None


def _trace_one(fn, kind, captures):
    region = _Region(captures)
    if not isinstance(fn, types.FunctionType):
        raise FlexTraceError(f"{kind} must be a Python function, got {type(fn).__name__}")
    if kind == "score_mod":
        args = [Value(region, n, t) for n, t in
                (("%s", "f32"), ("%b", "index"), ("%h", "index"), ("%i", "index"),
                 ("%j", "index"))]
        header = "^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):"
    else:
        args = [Value(region, n, "index") for n in ("%b", "%h", "%i", "%j")]
        header = "^bb0(%b: index, %h: index, %i: index, %j: index):"
    try:
        result = _with_proxies(fn, captures)(*args)
    except FlexTraceError as e:
        raise FlexTraceError(f"{kind} {fn.__name__}: {e}") from None
    except AttributeError as e:
        raise FlexTraceError(f"{kind} {fn.__name__}: {e} (tensor methods are not traced; use "
                             f"operators and fa.flex's functions)") from None
    except TypeError as e:
        params = "(score, b, h, q_idx, kv_idx)" if kind == "score_mod" else \
            "(b, h, q_idx, kv_idx)"
        raise FlexTraceError(f"{kind} {fn.__name__}: {e} (a {kind} takes {params})") from None
    if kind == "score_mod":
        if isinstance(result, bool) or (isinstance(result, Value) and result.type == "i1"):
            raise FlexTraceError(f"score_mod {fn.__name__} returned a boolean: it returns "
                                 f"the score (a mask is mask_mod's)")
        try:
            value = _as_value(region, result, "f32")._to_float()
        except FlexTraceError as e:
            raise FlexTraceError(f"score_mod {fn.__name__} returned {e}") from None
        ret = f"fa.yield {value.name} : f32"
    else:
        if isinstance(result, bool):
            value = region.const(result, "i1")
        elif isinstance(result, Value) and result.type == "i1":
            value = result
        else:
            raise FlexTraceError(f"mask_mod {fn.__name__} must return a boolean (a "
                                 f"comparison, & | ~ of them), got "
                                 f"{getattr(result, 'type', type(result).__name__)}")
        ret = f"fa.yield {value.name} : i1"
    return "\n".join([f"{kind} {{", f"  {header}"] + region.lines + [f"    {ret}", "  }"])


def trace(score_mod=None, mask_mod=None):
    """Traces the functions into fa.attention's regions: a Traced (both
    regions share one list of captured arrays). Cached: a function whose code
    and what it reads (the identity, shape and dtype of arrays, the value of
    Python numbers and strings, the identity of anything else) are those of an
    earlier trace gets that trace again without running it."""
    key = (_function_key(score_mod), _function_key(mask_mod))
    hit = _traces.get(key)
    if hit is not None:
        traced, refs = hit
        arrays = [r() for r in refs]
        if all(a is not None for a in arrays):
            _traces.move_to_end(key)
            return Traced(traced.score_mod, traced.mask_mod, arrays, traced.capture_types)
    captures = _Captures()
    sm = _trace_one(score_mod, "score_mod", captures) if score_mod is not None else None
    mm = _trace_one(mask_mod, "mask_mod", captures) if mask_mod is not None else None
    traced = Traced(sm, mm, list(captures.arrays), list(captures.types))
    try:
        # Weak references: the cache keeps no tensor alive (a dead one, or an id reused by
        # another array, means a new trace).
        refs = [weakref.ref(a) for a in traced.captures]
    except TypeError:
        return traced
    _traces[key] = (traced, refs)
    if len(_traces) > _TRACE_CACHE_SIZE:
        _traces.popitem(last=False)
    return traced


_TRACE_CACHE_SIZE = 256
_traces = collections.OrderedDict()


def _summary(x):
    if _is_array(x):
        return ("array", id(x), tuple(x.shape), x.dtype)  # str(dtype) costs microseconds
    if isinstance(x, (bool, int, float, complex, str, type(None))):
        return ("value", type(x), x)
    return ("object", id(x))


def _function_key(fn):
    """What a trace of `fn` depends on (see trace())."""
    if not isinstance(fn, types.FunctionType):
        return ("other", id(fn))
    glob = fn.__globals__
    return (fn.__code__, tuple(_summary(_cell(c)) for c in fn.__closure__ or ()),
            tuple(_summary(d) for d in fn.__defaults__ or ()),
            tuple((n, _summary(glob[n])) for n in fn.__code__.co_names if n in glob))


def regions_text(traced):
    """The regions as they follow fa.attention's attributes (with a leading
    space), or ""."""
    parts = [r for r in (traced.score_mod, traced.mask_mod) if r]
    return (" " + " ".join(parts)) if parts else ""


def capture_args_text(traced):
    """The captured arrays as function arguments: `, %cap0: tensor<...>, ...`."""
    return "".join(f", %cap{i}: {t}" for i, t in enumerate(traced.capture_types))


# -- the reference (numpy, float64) ---------------------------------------------------

def reference(q, k, v, score_mod=None, mask_mod=None, causal=False, window=None, scale=None,
              softcap=None):
    """fa.attention's semantics with the functions run on numpy arrays
    (float64; captured torch tensors must be on the CPU): out [B, Hq, Nq, Dv]
    and lse [B, Hq, Nq]; rows that see no key give 0 and -inf
    (fa.cpu.reference_numpy with the modifiers)."""
    from .cpu import reference_numpy
    return reference_numpy(q, k, v, causal, window, scale, softcap, score_mod, mask_mod)


# -- the GPU: torch tensors ------------------------------------------------------------

_TORCH_DTYPES = {"float16": "f16", "bfloat16": "bf16"}


def _signature(dtype, head_dim, head_dim_v, causal, window, scale, softcap):
    """q's and v's tensor types (dynamic batch, heads and lengths; static head
    dims: the kernels' tiles) and the op's attribute dictionary."""
    from .variant import attribute_text
    return (f"tensor<?x?x?x{head_dim}x{dtype}>", f"tensor<?x?x?x{head_dim_v}x{dtype}>",
            attribute_text(causal, window, scale, softcap) or " {}")


def module_text(traced, dtype, head_dim, head_dim_v, causal=False, window=None, scale=None,
                softcap=None, lse=False):
    """The MLIR of one flex attention: func.func @flex(q, k, v, captures...)
    with the op's attributes and the traced regions."""
    tq, tv, attrs = _signature(dtype, head_dim, head_dim_v, causal, window, scale, softcap)
    res_t = f"{tv}, tensor<?x?x?xf32>" if lse else tv
    res = "%o, %l" if lse else "%o"
    return (f"func.func @flex(%q: {tq}, %k: {tq}, %v: {tv}{capture_args_text(traced)}) -> "
            f"({res_t}) {{\n"
            f"  {res} = fa.attention %q, %k, %v{attrs}{regions_text(traced)} : {tq}, {tq}, "
            f"{tv} -> {'(' + res_t + ')' if lse else res_t}\n"
            f"  return {res} : {res_t}\n}}\n")


def grad_module_text(traced, dtype, head_dim, head_dim_v, causal=False, window=None,
                     scale=None, softcap=None, capture_grads=()):
    """The backward's MLIR: func.func @flex_grad(q, k, v, o, lse, do,
    captures...) -> (dq, dk, dv), an fa.attention_grad with the same regions
    (fa-to-ptx derives score_mod's derivative, fa-differentiate-score-mod).
    capture_grads: positions in traced.captures whose gradients (f32, their
    shapes) the function also returns (the op's grad_captures)."""
    tq, tv, attrs = _signature(dtype, head_dim, head_dim_v, causal, window, scale, softcap)
    tl = "tensor<?x?x?xf32>"
    wrt, grads, names = grad_captures_text(traced, capture_grads)
    if capture_grads:
        attrs = attrs or " {}"
    return (f"func.func @flex_grad(%q: {tq}, %k: {tq}, %v: {tv}, %o: {tv}, %lse: {tl}, "
            f"%do: {tv}{capture_args_text(traced)}) -> ({tq}, {tq}, {tv}{grads}) {{\n"
            f"  %dq, %dk, %dv{names} = fa.attention_grad %q, %k, %v, %o, %lse, %do{wrt}{attrs}"
            f"{regions_text(traced)} : {tq}, {tq}, {tv}, {tv}, {tl}, {tv} -> {tq}, {tq}, {tv}"
            f"{grads}\n"
            f"  return %dq, %dk, %dv{names} : {tq}, {tq}, {tv}{grads}\n}}\n")


def grad_captures_text(traced, positions):
    """The op's `grad_captures(%capI, ... : T, ...)` clause for the captures at
    `positions` in traced.captures, its results' types `, tensor<...xf32>, ...`
    and their names `, %gI, ...` (all "" without positions)."""
    if not positions:
        return "", "", ""
    types = [traced.capture_types[i] for i in positions]
    clause = (" grad_captures(" + ", ".join(f"%cap{i}" for i in positions) + " : " +
              ", ".join(types) + ")")
    return (clause, "".join(", " + _f32_tensor_type(t) for t in types),
            "".join(f", %g{i}" for i in positions))


def _f32_tensor_type(t):
    """tensor<AxBxT> -> tensor<AxBxf32> (tensor<T> -> tensor<f32>)."""
    body = t[len("tensor<"):-1]
    return "tensor<" + (body[:body.rindex("x") + 1] if "x" in body else "") + "f32>"


# Compiled flex kernels: (chip, MLIR text) -> fa.Kernel; filled by compiles and by load().
_kernels = {}
# kernel()'s arguments -> its result, so that a repeated call builds no module text.
_kernel_memo = {}


def kernel(traced, chip, dtype, head_dim, head_dim_v=None, causal=False, window=None,
           scale=None, softcap=None, lse=False, grad=False, options=None, capture_grads=()):
    """The fa.Kernel of a traced function pair for `chip`: a loaded or earlier
    one, else compiled (fa.compile; `options`: fa-to-ptx options as for it,
    e.g. {"block_q": 192}). Its captured tensors are the kernel's arguments
    arg3, arg4, ... (the backward's, grad=True: arg6, arg7, ...) in
    `traced.captures`' order; the backward's capture_grads (positions in
    traced.captures) are its grad_captures, their gradients grad_arg6, ...
    (Kernel.grad's fourth result)."""
    from .variant import normalize_options
    opts = normalize_options(options)
    capture_grads = tuple(capture_grads)
    memo_key = (traced.score_mod, traced.mask_mod, tuple(traced.capture_types), chip, dtype,
                head_dim, head_dim_v, causal, window, scale, softcap, lse, grad, opts,
                capture_grads)
    kern = _kernel_memo.get(memo_key)  # no module text built for a kernel of this process
    if kern is not None:
        return kern
    if grad:
        mlir = grad_module_text(traced, dtype, head_dim, head_dim_v or head_dim, causal,
                                window, scale, softcap, capture_grads)
    else:
        mlir = module_text(traced, dtype, head_dim, head_dim_v or head_dim, causal, window,
                           scale, softcap, lse)
    kern = _kernels.get((chip, mlir, opts))
    if kern is None:
        from .compiler import compile as fa_compile
        kern = _kernels[(chip, mlir, opts)] = fa_compile(mlir, chip=chip, **dict(opts))
    _kernel_memo[memo_key] = kern
    return kern


def save(directory):
    """Writes every flex kernel of this process (compiled or loaded) into
    `directory` with an index (index.json: the MLIR each was compiled from),
    for a machine without the compiler: load(directory) there."""
    import hashlib
    import json
    import os
    index = {}
    for (chip, mlir, opts), kern in _kernels.items():
        name = hashlib.sha256(f"{chip}\n{mlir}\n{opts}".encode()).hexdigest()[:16]
        path = kern.save(os.path.join(directory, name))
        index[name] = {"chip": chip, "mlir": mlir, "options": [list(o) for o in opts],
                       "manifest": os.path.relpath(path, directory)}
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "index.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
    return len(index)


def load(directory):
    """Registers the kernels save() wrote: a later call whose traced regions,
    dtype, head dims and flags are the same runs them without compiling."""
    import json
    import os
    from .compiler import Kernel
    with open(os.path.join(directory, "index.json")) as f:
        index = json.load(f)
    _kernel_memo.clear()
    for entry in index.values():
        opts = tuple(tuple(o) for o in entry.get("options", ()))
        _kernels[(entry["chip"], entry["mlir"], opts)] = Kernel.load(
            os.path.join(directory, entry["manifest"]))
    return len(index)


def attention(q, k, v, score_mod=None, mask_mod=None, *, causal=False, window=None, scale=None,
              softcap=None, return_lse=False, block_mask=None, enable_gqa=None,
              options=None):
    """Attention with Python score_mod / mask_mod (see the module docstring)
    on torch tensors: q [B, Hq, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv]
    (torch SDPA's layout, Hq a multiple of Hkv), f16 or bf16 on one CUDA
    device; the other arguments as fa.attention's. The kernel is compiled for
    the device's chip (sm_90a on 9.0, sm_80 on 8.x; FA_CHIP=sm_80) once per
    traced regions, head dims, dtype and flags (in memory and in fa's disk
    cache: milliseconds to a second the first time; or loaded by load()), the tensors the
    functions read are copied to q's device when they are elsewhere, and
    it runs on the current stream. Needs the compiler (fa.compiler_available())
    or the kernel saved by save() where it was compiled and load()ed here.
    FlexAttention's spellings are accepted: block_mask (a BlockMask of
    create_block_mask: its mask_mod is traced; the block layout is the
    compiler's own), enable_gqa (GQA is always on). options: fa-to-ptx options
    for these kernels (FlexAttention's kernel_options; e.g. {"block_q": 192},
    {"stages": 2}), forward and backward alike.
    Differentiable: when q, k or v require grad, the forward keeps lse and
    loss.backward() runs the backward kernel of the same regions (score_mod's
    derivative generated by the compiler; head dims 64 and 128). A float
    tensor the score_mod reads that requires grad (a learnable bias table,
    ALiBi slopes) gets its gradient too (the kernel's grad_captures: where
    score_mod adds it to the score, with a coefficient free of the score;
    otherwise the compile fails here, naming the term)."""
    import torch
    from .torch_ops import chip_for_device
    from .validation import AttentionInputError, UnsupportedError, check_inputs
    from .variant import GRAD_HEAD_DIMS
    if block_mask is not None:
        if mask_mod is not None:
            raise AttentionInputError("fa.flex.attention: mask_mod and block_mask both given")
        mask_mod = getattr(block_mask, "mask_mod", None)
        if mask_mod is None:
            raise AttentionInputError(f"fa.flex.attention: block_mask is a "
                                      f"{type(block_mask).__name__} without a mask_mod")
        if getattr(mask_mod, "__name__", "") == "noop_mask":  # FlexAttention's "no mask"
            mask_mod = None
    for n, t in zip("qkv", (q, k, v)):
        if not isinstance(t, torch.Tensor):
            raise AttentionInputError(f"fa.flex.attention: {n} is a {type(t).__name__}, not "
                                      f"a torch.Tensor (fa.cpu.attention takes numpy arrays)")
    dt = _TORCH_DTYPES.get(str(q.dtype).replace("torch.", ""))
    if dt is None or q.device.type != "cuda":
        raise AttentionInputError(f"fa.flex.attention: q is {q.dtype} on {q.device}; "
                                  f"float16 or bfloat16 on a CUDA device")
    names = [_TORCH_DTYPES.get(str(t.dtype).replace("torch.", ""), str(t.dtype))
             for t in (q, k, v)]
    window, _ = check_inputs(*[(tuple(t.shape), n, str(t.device)) for t, n in
                               zip((q, k, v), names)],
                             causal=causal, window=window, scale=scale, softcap=softcap)
    chip = chip_for_device(q.device)
    if chip is None:
        raise UnsupportedError(f"fa.flex.attention: {torch.cuda.get_device_name(q.device)} "
                               f"is below compute capability 8.0")
    traced = trace(score_mod, mask_mod)
    flags = (dt, q.shape[3], v.shape[3], bool(causal), window,
             None if scale is None else float(scale), None if softcap is None else float(softcap))
    captures, wrt = [], []
    for i, c in enumerate(traced.captures):
        if not isinstance(c, torch.Tensor):
            c = torch.as_tensor(c)
        elif c.requires_grad and torch.is_grad_enabled():
            # A learnable table (a bias, slopes): the backward kernel adds its
            # gradient (grad_captures), kept in the graph through the copy.
            if not c.is_floating_point():
                raise UnsupportedError(f"fa.flex.attention: a {c.dtype} capture requires grad")
            wrt.append(i)
            captures.append(c.to(q.device).contiguous())
            continue
        captures.append(c.detach().to(q.device).contiguous())
    q, k, v = (t.contiguous() for t in (q, k, v))
    if torch.is_grad_enabled() and (wrt or any(t.requires_grad for t in (q, k, v))):
        if q.shape[3] not in GRAD_HEAD_DIMS[chip] or q.shape[3] != v.shape[3]:
            raise UnsupportedError(
                f"fa.flex.attention: no {chip} backward kernel at head dim {q.shape[3]} "
                f"(only {GRAD_HEAD_DIMS[chip]}, with v's equal); call it under torch.no_grad()")
        if wrt:  # compiled now: a score_mod the kernels cannot differentiate fails here
            kernel(traced, chip, *flags, grad=True, options=options, capture_grads=wrt)
        out, lse = _FlexFunction.apply(q, k, v, (traced, chip, flags, options, tuple(wrt)),
                                       *captures)
        return (out, lse) if return_lse else out
    kern = kernel(traced, chip, *flags, lse=bool(return_lse), options=options)
    # The captured tensors are the kernel's arguments after q, k, v (docs/Manifest.md: argN
    # for the function's N-th argument).
    return kern(q, k, v, **{f"arg{3 + i}": c for i, c in enumerate(captures)})


def _flex_function():
    """The torch.autograd.Function of a differentiable flex call: the forward
    kernel with lse, then the backward kernel of the same regions (score_mod's
    derivative compiled in) with the same captured tensors; the captures at
    the spec's positions `wrt` get their gradients from it (grad_captures),
    the others none."""
    import torch

    class FlexFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, spec, *captures):
            traced, chip, flags, options, _ = spec
            kern = kernel(traced, chip, *flags, lse=True, options=options)
            out, lse = kern(q, k, v, **{f"arg{3 + i}": c for i, c in enumerate(captures)})
            ctx.spec = spec
            ctx.save_for_backward(q, k, v, out, lse, *captures)
            ctx.set_materialize_grads(False)  # dlse None when the loss does not use lse
            return out, lse

        @staticmethod
        def backward(ctx, dout, dlse):
            q, k, v, out, lse, *captures = ctx.saved_tensors
            traced, chip, flags, options, wrt = ctx.spec
            kern = kernel(traced, chip, *flags, grad=True, options=options, capture_grads=wrt)
            dout = torch.zeros_like(out) if dout is None else dout.contiguous()
            dq, dk, dv, *rest = kern.grad(
                q, k, v, out, lse, dout, grad_lse=dlse,
                **{f"arg{6 + i}": c for i, c in enumerate(captures)})
            grads = [None] * len(captures)
            for i in wrt:  # grad_arg<6 + i>: f32, to the capture's dtype
                grads[i] = rest[0][f"grad_arg{6 + i}"].to(captures[i].dtype)
            return (dq, dk, dv, None, *grads)
    return FlexFunction


class _Lazy:
    fn = None

    def apply(self, *args):
        if _Lazy.fn is None:
            _Lazy.fn = _flex_function()
        return _Lazy.fn.apply(*args)


_FlexFunction = _Lazy()
