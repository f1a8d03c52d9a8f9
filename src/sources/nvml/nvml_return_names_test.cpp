#include "sources/nvml/nvml_return_names.h"

#include <gtest/gtest.h>

namespace vw::nvml {
namespace {

TEST(NvmlReturnName, NamesEveryCodeItKnowsAndNumbersTheRest) {
  struct Case {
    int code;
    const char* name;
  } cases[] = {
      {0, "NVML_SUCCESS"},
      {1, "NVML_ERROR_UNINITIALIZED"},
      {3, "NVML_ERROR_NOT_SUPPORTED"},
      {10, "NVML_ERROR_TIMEOUT"},
      {15, "NVML_ERROR_GPU_IS_LOST"},
      {16, "NVML_ERROR_RESET_REQUIRED"},
      {29, "NVML_ERROR_INVALID_STATE"},
      {999, "NVML_ERROR_UNKNOWN"},
      {30, "NVML_RETURN_30"},
      {-1, "NVML_RETURN_-1"},
  };
  for (const Case& c : cases) EXPECT_EQ(NvmlReturnName(c.code), c.name) << c.code;
}

}  // namespace
}  // namespace vw::nvml
