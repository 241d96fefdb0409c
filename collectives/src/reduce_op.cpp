#include <troupe/collectives/reduce_op.hpp>

#include <string>

#include <troupe/core/errors.hpp>

namespace troupe {

std::string_view name(ReduceOp op) noexcept {
  return op == ReduceOp::SUM ? "SUM" : "MEAN";
}

ReduceOp parse_reduce_op(std::string_view text) {
  if (text == "sum" || text == "SUM")
    return ReduceOp::SUM;
  if (text == "mean" || text == "MEAN")
    return ReduceOp::MEAN;
  fail(Errc::invalid_argument,
       "invalid reduce op \"" + std::string(text) + "\": use \"SUM\" or \"MEAN\" (or ReduceOp::SUM/MEAN)");
}

} // namespace troupe
