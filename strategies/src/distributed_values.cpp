#include <troupe/strategies/distributed_values.hpp>

namespace troupe {

std::ostream& operator<<(std::ostream& out, const std::vector<Tensor>& values) {
  out << "(";
  for (size_t i = 0; i < values.size(); ++i)
    out << (i > 0 ? ",\n " : "") << values[i];
  return out << (values.size() == 1 ? ",)" : ")");
}

std::ostream& operator<<(std::ostream& out, const std::vector<std::vector<Tensor>>& values) {
  out << "(";
  for (size_t i = 0; i < values.size(); ++i) {
    out << (i > 0 ? ",\n " : "") << "[";
    for (size_t j = 0; j < values[i].size(); ++j)
      out << (j > 0 ? ", " : "") << values[i][j];
    out << "]";
  }
  return out << (values.size() == 1 ? ",)" : ")");
}

} // namespace troupe
