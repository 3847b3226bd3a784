//===- RaiseAttentionBands.cpp - positional masks, proven -----------------===//
//
// The proofs of fa-raise-attention's positional masks: conditions on the
// positions evaluated at every point of a static grid (inferKeyBand, with a
// constant mask tensor as a further condition: matchConstantMask), or derived
// for any size when they compare j - i with constants (deriveKeyBand). Each
// gives the band i + lower <= j <= i + upper that fa.attention's causal /
// window / diagonal state, or nothing.
//
//===----------------------------------------------------------------------===//
#include "RaiseAttentionInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::fa::raise;

//===----------------------------------------------------------------------===//
// Positional conditions, evaluated
//===----------------------------------------------------------------------===//

namespace {
/// A scalar of the interpreter: integers (index, iN, i1) as int64, floats as
/// double.
struct Scalar {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0.0;
};

/// Evaluates positional expressions at one (i, j).
struct PositionInterpreter {
  unsigned rank;
  int64_t row = 0, col = 0;

  std::optional<int64_t> affine(AffineExpr e) const {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (d.getPosition() == rank - 2)
        return row;
      if (d.getPosition() == rank - 1)
        return col;
      return std::nullopt;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return c.getValue();
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return std::nullopt;
    std::optional<int64_t> l = affine(bin.getLHS()), r = affine(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    int64_t v;
    switch (e.getKind()) {
    case AffineExprKind::Add:
      return llvm::AddOverflow(*l, *r, v) ? std::nullopt
                                          : std::optional<int64_t>(v);
    case AffineExprKind::Mul:
      return llvm::MulOverflow(*l, *r, v) ? std::nullopt
                                          : std::optional<int64_t>(v);
    case AffineExprKind::Mod:
      return *r > 0 ? std::optional<int64_t>(llvm::mod(*l, *r)) : std::nullopt;
    case AffineExprKind::FloorDiv:
      return *r > 0 ? std::optional<int64_t>(llvm::divideFloorSigned(*l, *r)) : std::nullopt;
    case AffineExprKind::CeilDiv:
      return *r > 0 ? std::optional<int64_t>(llvm::divideCeilSigned(*l, *r)) : std::nullopt;
    default:
      return std::nullopt;
    }
  }

  /// Two's complement arithmetic, as arith's integer ops do it.
  static int64_t wrapping(int64_t a, int64_t b, char op) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    uint64_t r = op == '+' ? ua + ub : op == '-' ? ua - ub : ua * ub;
    return static_cast<int64_t>(r);
  }

  static unsigned widthOf(Type t) {
    if (t.isIndex())
      return 64;
    if (auto it = dyn_cast<IntegerType>(t))
      return it.getWidth();
    return 0;
  }
  /// Wraps `v` to the signed range of `t` (i1 to 0 / -1 read as 0 / 1).
  static int64_t wrap(int64_t v, Type t) {
    unsigned w = widthOf(t);
    if (w == 0 || w >= 64)
      return v;
    if (w == 1)
      return v & 1;
    return llvm::SignExtend64(static_cast<uint64_t>(v), w);
  }
  static uint64_t asUnsigned(int64_t v, Type t) {
    unsigned w = widthOf(t);
    if (w == 1)
      return v & 1;
    if (w == 0 || w >= 64)
      return static_cast<uint64_t>(v);
    return static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
  }

  std::optional<Scalar> eval(const ScalarExpr *e) const;
  std::optional<Scalar> evalOp(Operation *op, ArrayRef<Scalar> x) const;
};
} // namespace

std::optional<Scalar> PositionInterpreter::eval(const ScalarExpr *e) const {
  switch (e->kind) {
  case ScalarExpr::Kind::Leaf:
    return std::nullopt;
  case ScalarExpr::Kind::Constant:
    if (auto f = dyn_cast<FloatAttr>(e->constant))
      return Scalar{true, 0, f.getValueAsDouble()};
    if (auto i = dyn_cast<IntegerAttr>(e->constant)) {
      if (i.getValue().getBitWidth() > 64)
        return std::nullopt;
      return Scalar{false, wrap(i.getValue().getSExtValue(), i.getType()), 0};
    }
    return std::nullopt;
  case ScalarExpr::Kind::Index:
    if (std::optional<int64_t> v = affine(e->index))
      return Scalar{false, *v, 0};
    return std::nullopt;
  case ScalarExpr::Kind::Op: {
    SmallVector<Scalar, 3> x;
    for (const ScalarExpr *o : e->operands) {
      std::optional<Scalar> v = eval(o);
      if (!v)
        return std::nullopt;
      x.push_back(*v);
    }
    return evalOp(e->op, x);
  }
  }
  return std::nullopt;
}

std::optional<Scalar> PositionInterpreter::evalOp(Operation *op,
                                                  ArrayRef<Scalar> x) const {
  Type t = op->getResult(0).getType();
  auto integer = [&](int64_t v) { return Scalar{false, wrap(v, t), 0}; };
  auto real = [](double v) { return Scalar{true, 0, v}; };
  // Operands of integer ops are integers, of float ops floats: checked once.
  for (const Scalar &s : x)
    if (s.isFloat != isa<FloatType>(op->getOperand(&s - x.data()).getType()))
      return std::nullopt;
  Type in = op->getNumOperands() ? op->getOperand(0).getType() : t;
  return llvm::TypeSwitch<Operation *, std::optional<Scalar>>(op)
      .Case([&](arith::IndexCastOp) { return integer(x[0].i); })
      .Case([&](arith::IndexCastUIOp) {
        return integer(static_cast<int64_t>(asUnsigned(x[0].i, in)));
      })
      .Case([&](arith::ExtSIOp) { return integer(x[0].i); })
      .Case([&](arith::ExtUIOp) {
        return integer(static_cast<int64_t>(asUnsigned(x[0].i, in)));
      })
      .Case([&](arith::TruncIOp) { return integer(x[0].i); })
      .Case([&](arith::AddIOp) { return integer(wrapping(x[0].i, x[1].i, '+')); })
      .Case([&](arith::SubIOp) { return integer(wrapping(x[0].i, x[1].i, '-')); })
      .Case([&](arith::MulIOp) { return integer(wrapping(x[0].i, x[1].i, '*')); })
      .Case([&](arith::AndIOp) { return integer(x[0].i & x[1].i); })
      .Case([&](arith::OrIOp) { return integer(x[0].i | x[1].i); })
      .Case([&](arith::XOrIOp) { return integer(x[0].i ^ x[1].i); })
      .Case([&](arith::MaxSIOp) { return integer(std::max(x[0].i, x[1].i)); })
      .Case([&](arith::MinSIOp) { return integer(std::min(x[0].i, x[1].i)); })
      .Case([&](arith::SIToFPOp) {
        return real(static_cast<double>(x[0].i));
      })
      .Case([&](arith::UIToFPOp) {
        return real(static_cast<double>(asUnsigned(x[0].i, in)));
      })
      .Case([&](arith::ExtFOp) { return x[0]; })
      .Case([&](arith::TruncFOp) { return x[0]; })
      .Case([&](arith::AddFOp) { return real(x[0].f + x[1].f); })
      .Case([&](arith::SubFOp) { return real(x[0].f - x[1].f); })
      .Case([&](arith::MulFOp) { return real(x[0].f * x[1].f); })
      .Case([&](arith::NegFOp) { return real(-x[0].f); })
      .Case([&](arith::SelectOp) { return x[0].i ? x[1] : x[2]; })
      .Case([&](arith::CmpIOp cmp) -> std::optional<Scalar> {
        int64_t a = x[0].i, b = x[1].i;
        uint64_t ua = asUnsigned(a, in), ub = asUnsigned(b, in);
        using P = arith::CmpIPredicate;
        bool r;
        switch (cmp.getPredicate()) {
        case P::eq: r = a == b; break;
        case P::ne: r = a != b; break;
        case P::slt: r = a < b; break;
        case P::sle: r = a <= b; break;
        case P::sgt: r = a > b; break;
        case P::sge: r = a >= b; break;
        case P::ult: r = ua < ub; break;
        case P::ule: r = ua <= ub; break;
        case P::ugt: r = ua > ub; break;
        case P::uge: r = ua >= ub; break;
        }
        return Scalar{false, r ? 1 : 0, 0};
      })
      .Case([&](arith::CmpFOp cmp) -> std::optional<Scalar> {
        double a = x[0].f, b = x[1].f;
        if (std::isnan(a) || std::isnan(b))
          return std::nullopt;
        using P = arith::CmpFPredicate;
        bool r;
        switch (cmp.getPredicate()) {
        case P::OEQ: case P::UEQ: r = a == b; break;
        case P::ONE: case P::UNE: r = a != b; break;
        case P::OLT: case P::ULT: r = a < b; break;
        case P::OLE: case P::ULE: r = a <= b; break;
        case P::OGT: case P::UGT: r = a > b; break;
        case P::OGE: case P::UGE: r = a >= b; break;
        default: return std::nullopt;
        }
        return Scalar{false, r ? 1 : 0, 0};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// The number of nodes the conditions of `scores` have as trees (shared
/// subexpressions counted at each use: what a recursive evaluation visits),
/// or std::nullopt above `cap`.
static std::optional<int64_t> conditionTreeSize(const ScoresMatch &scores,
                                                int64_t cap) {
  DenseMap<const ScalarExpr *, int64_t> sizes;
  std::function<int64_t(const ScalarExpr *)> size =
      [&](const ScalarExpr *e) -> int64_t {
    if (auto it = sizes.find(e); it != sizes.end())
      return it->second;
    int64_t n = 1;
    for (const ScalarExpr *o : e->operands)
      n = std::min(cap + 1, n + size(o));
    sizes[e] = n;
    return n;
  };
  int64_t total = 0;
  for (ArrayRef<const ScalarExpr *> list :
       {ArrayRef(scores.keepIf), ArrayRef(scores.dropIf),
        ArrayRef(scores.zeroIf)})
    for (const ScalarExpr *c : list)
      if ((total += size(c)) > cap)
        return std::nullopt;
  return total;
}

std::optional<KeyBand> mlir::fa::raise::inferKeyBand(
    const ScoresMatch &scores, unsigned rank, int64_t nq, int64_t nk,
    function_ref<std::optional<bool>(int64_t, int64_t)> alsoVisible) {
  // Every point is evaluated: the proof is exhaustive, so the work (points
  // times the nodes evaluated at each) is bounded.
  constexpr int64_t kMaxPoints = int64_t(1) << 22, kMaxWork = int64_t(1) << 27;
  if (nq <= 0 || nk <= 0 || nq > kMaxPoints / nk)
    return std::nullopt;
  std::optional<int64_t> nodes = conditionTreeSize(scores, kMaxWork);
  if (!nodes || *nodes > kMaxWork / (nq * nk))
    return std::nullopt;
  KeyBand band;
  band.finiteNegInf = scores.finiteNegInf;
  PositionInterpreter interp{rank};
  auto visible = [&](int64_t i, int64_t j) -> std::optional<bool> {
    interp.row = i;
    interp.col = j;
    bool keep = true;
    for (const ScalarExpr *c : scores.keepIf) {
      std::optional<Scalar> v = interp.eval(c);
      if (!v || v->isFloat)
        return std::nullopt;
      keep &= v->i != 0;
    }
    for (const ScalarExpr *c : scores.dropIf) {
      std::optional<Scalar> v = interp.eval(c);
      if (!v || v->isFloat)
        return std::nullopt;
      keep &= v->i == 0;
    }
    for (const ScalarExpr *c : scores.zeroIf) {
      std::optional<Scalar> v = interp.eval(c);
      if (!v || !v->isFloat)
        return std::nullopt;
      if (v->f == 0.0)
        continue;
      if (!(std::isinf(v->f) && v->f < 0)) {
        if (v->f > -1e30)
          return std::nullopt; // a bias, not a mask
        band.finiteNegInf = true;
      }
      keep = false;
    }
    if (alsoVisible) {
      std::optional<bool> v = alsoVisible(i, j);
      if (!v)
        return std::nullopt;
      keep &= *v;
    }
    return keep;
  };
  // Candidate bounds from the rows' visible keys: the upper bound from the
  // first row whose last key is inside the grid, the lower from the first
  // whose first key is; rows that see nothing before the first row that sees
  // something (or after the last) bound the open side instead. Then every
  // point is checked against the band.
  std::optional<int64_t> firstRow, lastRow;
  for (int64_t i = 0; i < nq; ++i) {
    std::optional<int64_t> first, last;
    for (int64_t j = 0; j < nk; ++j) {
      std::optional<bool> v = visible(i, j);
      if (!v)
        return std::nullopt;
      if (*v) {
        first = first.value_or(j);
        last = j;
      }
    }
    if (!first) {
      band.emptyRows = true;
      continue;
    }
    firstRow = firstRow.value_or(i);
    lastRow = i;
    if (!band.upper && *last < nk - 1)
      band.upper = *last - i;
    if (!band.lower && *first > 0)
      band.lower = *first - i;
  }
  if (!firstRow)
    return std::nullopt; // every key of every row masked
  if (!band.upper && *firstRow > 0)
    band.upper = -*firstRow;
  if (!band.lower && *lastRow < nq - 1)
    band.lower = nk - 1 - *lastRow;
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j) {
      bool inBand = (!band.lower || j >= i + *band.lower) &&
                    (!band.upper || j <= i + *band.upper);
      if (visible(i, j) != std::optional<bool>(inBand))
        return std::nullopt;
    }
  return band;
}

std::optional<ConstantMask>
mlir::fa::raise::matchConstantMask(const ScalarExpr *leaf, unsigned rank,
                                   bool hidesWhereTrue) {
  if (!isTensorLeaf(leaf))
    return std::nullopt;
  DenseElementsAttr attr;
  if (!matchPattern(leaf->tensor, m_Constant(&attr)))
    return std::nullopt;
  // Read at (i, j) only: every result is the row, the key or a constant 0.
  ConstantMask mask;
  auto type = cast<RankedTensorType>(leaf->tensor.getType());
  MLIRContext *ctx = leaf->map.getContext();
  for (auto [r, e] : llvm::enumerate(leaf->map.getResults())) {
    if (e == getAffineDimExpr(rank - 2, ctx))
      mask.rowDim = r;
    else if (e == getAffineDimExpr(rank - 1, ctx))
      mask.colDim = r;
    else if (e != getAffineConstantExpr(0, ctx) || type.getDimSize(r) != 1)
      return std::nullopt;
  }
  if (mask.rowDim < 0 && mask.colDim < 0)
    return std::nullopt;
  mask.shape.assign(type.getShape().begin(), type.getShape().end());
  int64_t n = type.getNumElements();
  if (n > (int64_t(1) << 22))
    return std::nullopt;
  mask.visible.reserve(n);
  Type elt = type.getElementType();
  if (elt.isInteger(1)) {
    for (bool b : attr.getValues<bool>())
      mask.visible.push_back(b != hidesWhereTrue);
  } else if (isa<FloatType>(elt)) {
    for (const APFloat &f : attr.getValues<APFloat>()) {
      if (f.isZero()) {
        mask.visible.push_back(true);
      } else if (f.isInfinity() && f.isNegative()) {
        mask.visible.push_back(false);
      } else {
        // Only 0 and -inf make a mask (a finite value is a bias, and a
        // finite "-inf" averages a row that loses every key).
        return std::nullopt;
      }
    }
  } else {
    return std::nullopt;
  }
  return mask;
}

std::optional<bool> ConstantMask::at(int64_t i, int64_t j) const {
  int64_t flat = 0;
  for (auto [r, size] : llvm::enumerate(shape)) {
    int64_t index = static_cast<int64_t>(r) == rowDim   ? i
                    : static_cast<int64_t>(r) == colDim ? j
                                                        : 0;
    if (index < 0 || index >= size)
      return std::nullopt;
    flat = flat * size + index;
  }
  return visible[flat];
}

//===----------------------------------------------------------------------===//
// Positional conditions, derived for any size
//===----------------------------------------------------------------------===//

namespace {
/// An integer a * i + b * j + c of the positions.
struct LinearForm {
  int64_t a = 0, b = 0, c = 0;
};

/// A set of diagonals d = j - i: lo <= d <= hi (a missing bound: open), or
/// nothing.
struct DiagonalSet {
  std::optional<int64_t> lo, hi;
  bool empty = false;

  static DiagonalSet all() { return {}; }
  static DiagonalSet none() { return {std::nullopt, std::nullopt, true}; }
  DiagonalSet intersect(const DiagonalSet &o) const {
    if (empty || o.empty)
      return none();
    DiagonalSet r;
    r.lo = !lo ? o.lo : !o.lo ? lo : std::max(*lo, *o.lo);
    r.hi = !hi ? o.hi : !o.hi ? hi : std::min(*hi, *o.hi);
    if (r.lo && r.hi && *r.lo > *r.hi)
      return none();
    return r;
  }
  /// The complement, when it is one interval.
  std::optional<DiagonalSet> complement() const {
    if (empty)
      return all();
    if (!lo && !hi)
      return none();
    if (lo && hi)
      return std::nullopt;
    if (lo)
      return DiagonalSet{std::nullopt, *lo - 1, false};
    return DiagonalSet{*hi + 1, std::nullopt, false};
  }
  bool isAll() const { return !empty && !lo && !hi; }
};

/// Derives the diagonal set of positional conditions symbolically. Integer
/// values must be index or 64-bit and their forms small (|a|, |b| <= 2^20,
/// |c| <= 2^40), so that for positions below 2^40 (any tensor that fits in
/// memory) no value wraps.
struct BandDeriver {
  unsigned rank;

  static bool isWide(Type t) { return t.isIndex() || t.isInteger(64); }
  static bool small(const LinearForm &f) {
    constexpr int64_t kCoef = int64_t(1) << 20, kConst = int64_t(1) << 40;
    return std::abs(f.a) <= kCoef && std::abs(f.b) <= kCoef &&
           std::abs(f.c) <= kConst;
  }

  std::optional<LinearForm> affine(AffineExpr e) const {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (d.getPosition() == rank - 2)
        return LinearForm{1, 0, 0};
      if (d.getPosition() == rank - 1)
        return LinearForm{0, 1, 0};
      return std::nullopt;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return LinearForm{0, 0, c.getValue()};
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return std::nullopt;
    std::optional<LinearForm> l = affine(bin.getLHS()),
                              r = affine(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    if (e.getKind() == AffineExprKind::Add)
      return check({l->a + r->a, l->b + r->b, l->c + r->c});
    if (e.getKind() == AffineExprKind::Mul)
      return scaled(*l, *r);
    return std::nullopt;
  }
  std::optional<LinearForm> check(LinearForm f) const {
    return small(f) ? std::optional<LinearForm>(f) : std::nullopt;
  }
  std::optional<LinearForm> scaled(LinearForm x, LinearForm y) const {
    if (x.a || x.b)
      std::swap(x, y);
    if (x.a || x.b || std::abs(x.c) > (int64_t(1) << 20))
      return std::nullopt;
    return check({x.c * y.a, x.c * y.b, x.c * y.c});
  }

  std::optional<LinearForm> integer(const ScalarExpr *e) const {
    switch (e->kind) {
    case ScalarExpr::Kind::Leaf:
      return std::nullopt;
    case ScalarExpr::Kind::Constant: {
      auto i = dyn_cast<IntegerAttr>(e->constant);
      if (!i || !isWide(i.getType()))
        return std::nullopt;
      return check({0, 0, i.getValue().getSExtValue()});
    }
    case ScalarExpr::Kind::Index:
      return affine(e->index);
    case ScalarExpr::Kind::Op:
      break;
    }
    if (!isWide(e->op->getResult(0).getType()))
      return std::nullopt;
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(e->op) &&
        isWide(e->op->getOperand(0).getType()))
      return integer(e->operands[0]);
    if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(e->op))
      return std::nullopt;
    std::optional<LinearForm> l = integer(e->operands[0]);
    std::optional<LinearForm> r = integer(e->operands[1]);
    if (!l || !r)
      return std::nullopt;
    if (isa<arith::AddIOp>(e->op))
      return check({l->a + r->a, l->b + r->b, l->c + r->c});
    if (isa<arith::SubIOp>(e->op))
      return check({l->a - r->a, l->b - r->b, l->c - r->c});
    return scaled(*l, *r);
  }

  /// The diagonals where the i1 expression `e` is true.
  std::optional<DiagonalSet> condition(const ScalarExpr *e) const {
    if (e->kind == ScalarExpr::Kind::Constant) {
      auto i = dyn_cast<IntegerAttr>(e->constant);
      if (!i || !i.getType().isInteger(1))
        return std::nullopt;
      return i.getValue().isOne() ? DiagonalSet::all() : DiagonalSet::none();
    }
    if (e->kind != ScalarExpr::Kind::Op)
      return std::nullopt;
    if (auto cmp = dyn_cast<arith::CmpIOp>(e->op))
      return comparison(cmp.getPredicate(), e->operands[0], e->operands[1]);
    if (isa<arith::AndIOp>(e->op)) {
      std::optional<DiagonalSet> l = condition(e->operands[0]);
      std::optional<DiagonalSet> r = condition(e->operands[1]);
      if (!l || !r)
        return std::nullopt;
      return l->intersect(*r);
    }
    if (isa<arith::XOrIOp>(e->op)) {
      for (unsigned side : {0u, 1u})
        if (isTrueConstant(e->operands[side]))
          if (std::optional<DiagonalSet> x = condition(e->operands[1 - side]))
            return x->complement();
      return std::nullopt;
    }
    if (isa<arith::SelectOp>(e->op)) {
      // select(c, x, false) = c and x; select(c, false, true) = not c.
      std::optional<DiagonalSet> c = condition(e->operands[0]);
      std::optional<DiagonalSet> x = condition(e->operands[1]);
      std::optional<DiagonalSet> y = condition(e->operands[2]);
      if (!c || !x || !y)
        return std::nullopt;
      if (y->empty)
        return c->intersect(*x);
      if (x->empty && y->isAll())
        return c->complement();
      if (x->isAll() && y->isAll())
        return DiagonalSet::all();
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<DiagonalSet> comparison(arith::CmpIPredicate pred,
                                        const ScalarExpr *lhs,
                                        const ScalarExpr *rhs) const {
    std::optional<LinearForm> l = integer(lhs), r = integer(rhs);
    if (!l || !r)
      return std::nullopt;
    // lhs - rhs = s * d + c with d = j - i, s = +-1 (or a constant).
    LinearForm f{l->a - r->a, l->b - r->b, l->c - r->c};
    using P = arith::CmpIPredicate;
    if (f.a == 0 && f.b == 0) {
      bool t;
      switch (pred) {
      case P::eq:
        t = f.c == 0;
        break;
      case P::ne:
        t = f.c != 0;
        break;
      case P::slt:
        t = f.c < 0;
        break;
      case P::sle:
        t = f.c <= 0;
        break;
      case P::sgt:
        t = f.c > 0;
        break;
      case P::sge:
        t = f.c >= 0;
        break;
      default:
        return std::nullopt;
      }
      return t ? DiagonalSet::all() : DiagonalSet::none();
    }
    if (f.a != -f.b || std::abs(f.b) != 1)
      return std::nullopt;
    // With s = -1, s d + c pred 0 is d + (-c) (pred swapped) 0.
    if (f.b == -1) {
      f.c = -f.c;
      switch (pred) {
      case P::slt:
        pred = P::sgt;
        break;
      case P::sle:
        pred = P::sge;
        break;
      case P::sgt:
        pred = P::slt;
        break;
      case P::sge:
        pred = P::sle;
        break;
      default:
        break;
      }
    }
    // d + c pred 0.
    switch (pred) {
    case P::eq:
      return DiagonalSet{-f.c, -f.c, false};
    case P::slt:
      return DiagonalSet{std::nullopt, -f.c - 1, false};
    case P::sle:
      return DiagonalSet{std::nullopt, -f.c, false};
    case P::sgt:
      return DiagonalSet{-f.c + 1, std::nullopt, false};
    case P::sge:
      return DiagonalSet{-f.c, std::nullopt, false};
    default:
      return std::nullopt; // ne (two intervals), unsigned
    }
  }

  /// The diagonals where the float expression `e` is 0 (elsewhere -inf-like).
  std::optional<DiagonalSet> zeroWhere(const ScalarExpr *e,
                                       bool &finite) const {
    e = stripCasts(e);
    if (!isOp<arith::SelectOp>(e))
      return std::nullopt;
    std::optional<DiagonalSet> c = condition(e->operands[0]);
    if (!c)
      return std::nullopt;
    if (getConstantValue(e->operands[1]) == 0.0 &&
        isNegInfLike(e->operands[2], finite))
      return c;
    if (getConstantValue(e->operands[2]) == 0.0 &&
        isNegInfLike(e->operands[1], finite))
      return c->complement();
    return std::nullopt;
  }
};
} // namespace

std::optional<KeyBand> mlir::fa::raise::deriveKeyBand(const ScoresMatch &scores,
                                                      unsigned rank) {
  // The derivation recurses through the conditions as trees.
  if (!conditionTreeSize(scores, int64_t(1) << 16))
    return std::nullopt;
  BandDeriver deriver{rank};
  KeyBand band;
  band.finiteNegInf = scores.finiteNegInf;
  DiagonalSet visible = DiagonalSet::all();
  for (const ScalarExpr *c : scores.keepIf) {
    std::optional<DiagonalSet> s = deriver.condition(c);
    if (!s)
      return std::nullopt;
    visible = visible.intersect(*s);
  }
  for (const ScalarExpr *c : scores.dropIf) {
    std::optional<DiagonalSet> s = deriver.condition(c);
    std::optional<DiagonalSet> keep = s ? s->complement() : std::nullopt;
    if (!keep)
      return std::nullopt;
    visible = visible.intersect(*keep);
  }
  for (const ScalarExpr *c : scores.zeroIf) {
    std::optional<DiagonalSet> s = deriver.zeroWhere(c, band.finiteNegInf);
    if (!s)
      return std::nullopt;
    visible = visible.intersect(*s);
  }
  if (visible.empty)
    return std::nullopt; // every key of every row masked
  band.lower = visible.lo;
  band.upper = visible.hi;
  // Without the sizes, a row may see nothing unless the band is open to the
  // left and reaches key 0 from row 0 (then every row sees key 0).
  band.emptyRows = band.lower || (band.upper && *band.upper < 0);
  return band;
}
