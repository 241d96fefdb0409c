#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <troupe/ops/cpu_kernels.hpp>
#include <troupe/core/errors.hpp>

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

std::vector<float> random_floats(std::size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v)
    x = dist(gen);
  return v;
}

/// The kernel tables this CPU runs.
std::vector<const CpuKernels*> runnable_tables() {
  std::vector<const CpuKernels*> tables{&choose_cpu_kernels("portable")};
  const std::string isas = supported_kernel_isas();
  for (const char* isa : {"x86-64-v3", "x86-64-v4"})
    if (isas.find(isa) != std::string::npos)
      tables.push_back(&choose_cpu_kernels(isa));
  return tables;
}

} // namespace

TEST_CASE("every kernel table this CPU runs computes what the baseline computes", "[core][kernels]") {
  const CpuKernels& baseline = choose_cpu_kernels("x86-64");
  const int64_t m = 37, n = 29, k = 53; // no multiple of any vector width
  const auto a = random_floats(m * k, 1), b = random_floats(k * n, 2);
  for (const CpuKernels* kernels : runnable_tables()) {
    CAPTURE(kernels->isa);
    std::vector<float> want(m * n), got(m * n);
    const GemmArgs args{a.data(), b.data(), nullptr, m, k, k, n, false, false, m, n, k};
    GemmArgs w = args, g = args;
    w.out = want.data();
    g.out = got.data();
    baseline.gemm_f32(w);
    kernels->gemm_f32(g);
    for (std::size_t i = 0; i < want.size(); ++i)
      REQUIRE(got[i] == Approx(want[i]).margin(1e-4));

    std::vector<float> soft_want(m * k), soft_got(m * k);
    baseline.softmax_f32(a.data(), soft_want.data(), m, k, true);
    kernels->softmax_f32(a.data(), soft_got.data(), m, k, true);
    for (std::size_t i = 0; i < soft_want.size(); ++i)
      REQUIRE(soft_got[i] == Approx(soft_want[i]).margin(1e-5));
  }
}

TEST_CASE("exp-based kernels give equal inputs equal outputs wherever they sit in a row",
          "[core][kernels]") {
  // Eigen computes the leftover elements of a row with std::exp, the others
  // with its own polynomial; troupe's kernels use the polynomial for all, so
  // the position of a value in the row does not change its bits.
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-20.0f, 0.0f);
  for (const CpuKernels* kernels : runnable_tables()) {
    CAPTURE(kernels->isa);
    int64_t differing = 0;
    for (int trial = 0; trial < 200; ++trial) {
      // 0 first so that the row maximum is 0 and the shift changes nothing;
      // 35 columns: two values repeated into every tail position.
      const float p = dist(gen), q = dist(gen);
      std::vector<float> row(35);
      for (std::size_t i = 0; i < row.size(); ++i)
        row[i] = i == 0 ? 0.0f : (i % 2 == 1 ? p : q);
      std::vector<float> out(row.size());
      kernels->softmax_f32(row.data(), out.data(), 1, 35, false);
      for (std::size_t i = 3; i < row.size(); ++i)
        differing += out[i] != out[i - 2];
    }
    CHECK(differing == 0);
  }
}

TEST_CASE("TROUPE_KERNELS names a mode, and an instruction set the CPU lacks is named",
          "[core][kernels]") {
  CHECK(std::string{choose_cpu_kernels("portable").isa} == choose_cpu_kernels("x86-64").isa);
  CHECK(std::string{choose_cpu_kernels("fast").isa}.rfind("x86-64", 0) == 0);
  CHECK_THROWS_WITH(choose_cpu_kernels("turbo"),
                    Contains("TROUPE_KERNELS=turbo is not a kernel mode") && Contains("portable"));
  const std::string isas = supported_kernel_isas();
  if (isas.find("x86-64-v4") == std::string::npos)
    CHECK_THROWS_WITH(choose_cpu_kernels("x86-64-v4"),
                      Contains("this CPU lacks") && Contains("AVX512F"));
  else
    CHECK(std::string{choose_cpu_kernels("x86-64-v4").isa} == "x86-64-v4");
  if (isas.find("x86-64-v3") != std::string::npos)
    CHECK(std::string{choose_cpu_kernels("fast").isa} != "x86-64");
}
