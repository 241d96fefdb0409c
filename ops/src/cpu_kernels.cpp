#include <troupe/ops/cpu_kernels.hpp>

#include <string>

#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

#if defined(__x86_64__)
constexpr bool x86_64 = true;

/// Appends `name` to the comma-separated `missing` unless the CPU `has` it.
void note_missing(std::string& missing, bool has, const char* name) {
  if (!has)
    missing += missing.empty() ? name : std::string{", "} + name;
}

/// The features of x86-64-v3 (AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE) this CPU
/// lacks, as a list for an error message; empty when it has them all.
/// __builtin_cpu_supports also checks that the OS saves the vector registers.
std::string missing_v3() {
  std::string missing;
  note_missing(missing, __builtin_cpu_supports("avx2"), "AVX2");
  note_missing(missing, __builtin_cpu_supports("fma"), "FMA");
  note_missing(missing, __builtin_cpu_supports("f16c"), "F16C");
  note_missing(missing, __builtin_cpu_supports("bmi"), "BMI1");
  note_missing(missing, __builtin_cpu_supports("bmi2"), "BMI2");
  note_missing(missing, __builtin_cpu_supports("lzcnt"), "LZCNT");
  note_missing(missing, __builtin_cpu_supports("movbe"), "MOVBE");
  return missing;
}

/// The features of x86-64-v4 (v3 and AVX-512 F/BW/CD/DQ/VL) this CPU lacks.
std::string missing_v4() {
  std::string missing = missing_v3();
  note_missing(missing, __builtin_cpu_supports("avx512f"), "AVX512F");
  note_missing(missing, __builtin_cpu_supports("avx512bw"), "AVX512BW");
  note_missing(missing, __builtin_cpu_supports("avx512cd"), "AVX512CD");
  note_missing(missing, __builtin_cpu_supports("avx512dq"), "AVX512DQ");
  note_missing(missing, __builtin_cpu_supports("avx512vl"), "AVX512VL");
  return missing;
}
#else
constexpr bool x86_64 = false;
#endif

const CpuKernels& checked(const char* isa, const CpuKernels* (*entry)(), const std::string& missing) {
  if (!missing.empty())
    fail(Errc::invalid_argument, std::string{"TROUPE_KERNELS="} + isa + ": this CPU lacks " + missing
                                   + "; use TROUPE_KERNELS=fast (the widest this CPU runs: "
                                   + supported_kernel_isas() + ") or portable");
  return *entry();
}

} // namespace

const char* supported_kernel_isas() {
#if defined(__x86_64__)
  static const std::string list = [] {
    std::string isas = "x86-64";
    if (missing_v3().empty())
      isas += ", x86-64-v3";
    if (missing_v4().empty())
      isas += ", x86-64-v4";
    return isas;
  }();
  return list.c_str();
#else
  return troupe_cpu_kernels_baseline()->isa;
#endif
}

const CpuKernels& choose_cpu_kernels(const char* mode) {
  const std::string m = mode == nullptr ? "" : mode;
  if (m.empty() || m == "fast") {
#if defined(__x86_64__)
    if (missing_v4().empty())
      return *troupe_cpu_kernels_x86_64_v4();
    if (missing_v3().empty())
      return *troupe_cpu_kernels_x86_64_v3();
#endif
    return *troupe_cpu_kernels_baseline();
  }
  if (m == "portable")
    return *troupe_cpu_kernels_baseline();
#if defined(__x86_64__)
  if (m == "x86-64")
    return *troupe_cpu_kernels_baseline();
  if (m == "x86-64-v3")
    return checked("x86-64-v3", &troupe_cpu_kernels_x86_64_v3, missing_v3());
  if (m == "x86-64-v4")
    return checked("x86-64-v4", &troupe_cpu_kernels_x86_64_v4, missing_v4());
#endif
  fail(Errc::invalid_argument,
       "TROUPE_KERNELS=" + m + " is not a kernel mode; use fast (the default: the widest "
         + "instruction set this CPU runs), portable (the same bits on every "
         + (x86_64 ? std::string{"x86-64"} : std::string{"such"}) + " CPU)"
         + (x86_64 ? ", or one of x86-64, x86-64-v3, x86-64-v4" : std::string{}));
}

const CpuKernels& cpu_kernels() {
  static const CpuKernels& chosen = []() -> const CpuKernels& {
    const std::string& mode = knobs().kernels;
    const CpuKernels& kernels = choose_cpu_kernels(mode.c_str());
    if (mode == "portable")
      kernels.fix_blocking();
    TROUPE_LOG(info, "kernels") << "CPU kernels: " << kernels.isa << " (TROUPE_KERNELS=" << mode
                                << "; this CPU runs " << supported_kernel_isas() << ")";
    return kernels;
  }();
  return chosen;
}

} // namespace troupe::internal
